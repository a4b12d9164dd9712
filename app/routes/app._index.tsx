import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import {
  Badge,
  Banner,
  BlockStack,
  Box,
  Button,
  Card,
  DataTable,
  InlineGrid,
  InlineStack,
  Layout,
  Link,
  Page,
  Tabs,
  Text,
} from "@shopify/polaris";
import { useState } from "react";
import { HealthChart } from "~/admin/HealthChart";
import { ImportProblem } from "~/admin/HistoryImport";
import { historyState } from "~/admin/history-words";
import type { HistoryView } from "~/admin/history.server";
import { EmbedBadge, EmbedStatus, TrackerRunning } from "~/admin/EmbedStatus";
import { healthView } from "~/admin/sync-health.server";
import { homeOverview } from "~/home/home.server";
import { storeTimeZone } from "~/admin/store-zone.server";
import { signupCountText } from "~/admin/SignupsChoice";
import { loadSettings } from "~/admin/settings.server";
import { signupStatus } from "~/signups/signups.server";
import { PageError, SectionCard, SupportDetails, formatDuration, formatNumber, formatWhen, useRefreshWhile } from "~/admin/ui";
import { StatusBadge } from "~/campaigns/ui";
import { ConsentCounts } from "~/people/ui";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Sync health · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [view, zone, home, signups, settings] = await Promise.all([
    healthView(session.shop),
    storeTimeZone(session.shop),
    homeOverview(session.shop),
    signupStatus(session.shop),
    loadSettings(session.shop),
  ]);
  return {
    ...view,
    zone,
    home,
    // The service's contact counts, or why they could not be read (null: not connected).
    consent: home.contacts?.read ? home.contacts.value : null,
    // Signups at the service made Shopify customers (app/signups).
    signups: { ...signups, on: settings.signupsToShopify },
    shop: { ...view.shop, pausedAt: view.shop.pausedAt?.toISOString() ?? null, connectedAt: view.shop.connectedAt?.toISOString() ?? null },
  };
};

const BANNER_TONE = { healthy: "success", degraded: "warning", paused: "critical", not_connected: "info" } as const;
const KIND_LABEL: Record<string, string> = {
  customer: "Customers",
  order: "Orders",
  product: "Products",
  cart: "Carts",
  checkout: "Checkouts",
  subscription: "Subscriptions",
  privacy: "Privacy requests",
  app: "App installation",
  bulk: "History import",
  other: "Other",
};

function Stat({
  label,
  value,
  tone,
  help,
  url,
}: {
  label: string;
  value: string;
  tone?: "critical" | "caution" | "success";
  /** a line under the number saying what it counts */
  help?: string;
  /** where the number's details are */
  url?: string;
}) {
  const number = <span data-stat={label}>{value}</span>;
  return (
    <Card>
      <BlockStack gap="100">
        <Text as="p" variant="bodySm" tone="subdued">
          {label}
        </Text>
        <Text as="p" variant="headingLg" tone={tone}>
          {url ? (
            <Link url={url} monochrome removeUnderline>
              {number}
            </Link>
          ) : (
            number
          )}
        </Text>
        {help && (
          <Text as="p" variant="bodySm" tone="subdued">
            {help}
          </Text>
        )}
      </BlockStack>
    </Card>
  );
}

/** The history import's state, in the same words as the Connection page, with a link there. */
function HistoryCard({ history, zone }: { history: HistoryView; zone: string }) {
  const state = historyState(history, (iso) => formatWhen(iso, zone));
  return (
    <SectionCard
      title="Store history"
      badge={<Badge tone={state.tone}>{state.label}</Badge>}
      actions={<Link url="/app/connection">{state.problem && state.label === "Failed" ? "Start it again on Connection" : "Details on Connection"}</Link>}
      gap="200"
    >
      <Text as="p" tone="subdued">
        <span data-history-state>{state.line}</span>
      </Text>
      {state.problem && <ImportProblem problem={state.problem} />}
    </SectionCard>
  );
}

export default function SyncHealth() {
  const view = useLoaderData<typeof loader>();
  const [tab, setTab] = useState(0);
  // The numbers move while the worker delivers.
  useRefreshWhile(true, 10_000);

  const { banner, totals, shop } = view;
  const statusBadge =
    shop.state === "connected" ? <Badge tone="success">Connected</Badge> : shop.state === "paused" ? <Badge tone="critical">Paused</Badge> : <Badge tone="attention">Not connected</Badge>;

  if (shop.state !== "connected" && shop.state !== "paused" && totals.received === 0) {
    return (
      <Page title="Marketing Sync" titleMetadata={statusBadge}>
        <Layout>
          <Layout.Section>
            <Card>
              <Box padding="600">
                <BlockStack gap="400" inlineAlign="center">
                  <Text as="h2" variant="headingLg" alignment="center">
                    Connect your email marketing account
                  </Text>
                  <Text as="p" tone="subdued" alignment="center">
                    Connect {shop.domain} to your marketing account to start syncing customers, consent, orders, products and abandoned carts.
                  </Text>
                  <Button variant="primary" url="/app/connection">
                    Connect account
                  </Button>
                </BlockStack>
              </Box>
            </Card>
          </Layout.Section>
        </Layout>
      </Page>
    );
  }

  const rows = view.kinds.map((k) => [
    KIND_LABEL[k.kind] ?? k.kind,
    formatNumber(k.received),
    formatNumber(k.delivered),
    formatNumber(k.skipped),
    formatNumber(k.stale),
    formatNumber(k.unusable),
    formatNumber(k.failed),
    formatNumber(k.openDead),
    formatNumber(k.queued),
  ]);

  return (
    <Page title="Sync health" titleMetadata={statusBadge} subtitle={shop.domain}>
      <Layout>
        <Layout.Section>
          <Banner
            tone={BANNER_TONE[banner.status]}
            title={banner.title}
            action={
              banner.status === "paused" || banner.status === "not_connected"
                ? { content: "Open Connection", url: "/app/connection" }
                : banner.status === "degraded" && view.openDead > 0
                  ? { content: "Open Problems", url: "/app/problems" }
                  : undefined
            }
          >
            <p>{banner.reason}</p>
            {banner.fix && <p>{banner.fix}</p>}
            {banner.status === "paused" && shop.pauseReason && <SupportDetails>{shop.pauseReason}</SupportDetails>}
          </Banner>
        </Layout.Section>
        {view.importRun && <HistoryCard history={view.importRun} zone={view.zone} />}
        <SectionCard
          title="Tracker on your storefront"
          badge={<EmbedBadge state={view.home.embed.state} />}
          actions={<Link url="/app/storefront">Details on Storefront</Link>}
          gap="200"
        >
          <EmbedStatus embed={view.home.embed} />
          <TrackerRunning status={view.home.tracker} />
        </SectionCard>
        {view.home.contacts && (
          <>
            <Layout.Section>
              <BlockStack gap="100">
                <InlineStack align="space-between" blockAlign="center">
                  <Text as="h2" variant="headingMd">
                    Contacts in your marketing account
                  </Text>
                  <Link url="/app/people">View people</Link>
                </InlineStack>
                <Text as="p" variant="bodySm" tone="subdued">
                  <span data-contacts-source>
                    Counted by your marketing account: its contacts from every source. Shopify counts its own customers subscribed to email
                    marketing apart (Settings shows that count); the two measure different things.
                  </span>
                </Text>
              </BlockStack>
            </Layout.Section>
            {view.home.contacts.read ? (
              <ConsentCounts counts={view.home.contacts.value} />
            ) : (
              <Layout.Section>
                <Banner tone="warning" title="The contact counts could not be read">
                  <p>
                    <span data-contacts-unreadable>{view.home.contacts.reason}</span>
                  </p>
                </Banner>
              </Layout.Section>
            )}
          </>
        )}
        <SectionCard title="Both ways" description="What the app carried between Shopify and your marketing account." gap="200">
          <InlineGrid columns={{ xs: 1, md: 3 }} gap="400">
            <BlockStack gap="100">
              <Text as="p" variant="bodySm" tone="subdued">
                Shopify → marketing account
              </Text>
              <Text as="p" variant="headingLg">
                <span data-both-ways="to-service">{formatNumber(view.home.bothWays.contactsSynced)}</span>
              </Text>
              <Text as="p" variant="bodySm" tone="subdued">
                {`Customers the service holds as contacts, every update delivered${
                  view.home.bothWays.contactsWaiting ? `; ${formatNumber(view.home.bothWays.contactsWaiting)} more with an update still on its way` : ""
                }.`}
              </Text>
            </BlockStack>
            <BlockStack gap="100">
              <Text as="p" variant="bodySm" tone="subdued">
                Marketing account → Shopify
              </Text>
              <Text as="p" variant="headingLg">
                <span data-both-ways="to-shopify">{formatNumber(view.home.bothWays.consentReturned)}</span>
              </Text>
              <Text as="p" variant="bodySm" tone="subdued">
                {`Unsubscribes and blocks at the service written to the customer's email consent in Shopify. Last checked: ${
                  view.home.bothWays.lastReturnSweepAt ? formatWhen(view.home.bothWays.lastReturnSweepAt, view.zone) : "not yet"
                }.`}
              </Text>
            </BlockStack>
            <BlockStack gap="100">
              <Text as="p" variant="bodySm" tone="subdued">
                {`Subscribers gained, last ${view.home.bothWays.gainedDays} days`}
              </Text>
              <Text as="p" variant="headingLg">
                <span data-both-ways="gained">{formatNumber(view.home.bothWays.gained)}</span>
              </Text>
              <Text as="p" variant="bodySm" tone="subdued">
                Customers who subscribed at Shopify in that time and are contacts at the service now.
              </Text>
            </BlockStack>
          </InlineGrid>
        </SectionCard>
        {view.home.campaigns && (
          <SectionCard title="Last campaigns" actions={<Link url="/app/campaigns?status=all">All campaigns</Link>} gap="200">
            {!view.home.campaigns.read ? (
              <Text as="p" tone="caution">
                <span data-campaigns-unreadable>{view.home.campaigns.reason}</span>
              </Text>
            ) : view.home.campaigns.value.length === 0 ? (
              <Text as="p" tone="subdued">
                No campaigns yet. <Link url="/app/campaigns">Create one</Link>
              </Text>
            ) : (
              <BlockStack gap="200">
                {view.home.campaigns.value.map((c) => (
                  <InlineStack key={c.id} gap="200" blockAlign="center" wrap>
                    <Link url={`/app/campaigns/${c.id}`}>
                      <span data-home-campaign>{c.name}</span>
                    </Link>
                    <StatusBadge status={c.status} />
                    <Text as="span" variant="bodySm" tone="subdued">
                      {c.at ? `${c.atLabel} ${formatWhen(c.at, view.zone)}` : ""}
                    </Text>
                  </InlineStack>
                ))}
              </BlockStack>
            )}
          </SectionCard>
        )}
        <Layout.Section>
          <InlineGrid columns={{ xs: 2, md: 4 }} gap="400">
            <Stat
              label="Sent to your marketing account"
              value={formatNumber(totals.delivered)}
              tone="success"
              help={`For ${formatNumber(totals.received)} store ${totals.received === 1 ? "change" : "changes"}: one store change can send several updates.`}
            />
            <Stat
              label="Waiting to send"
              value={formatNumber(totals.queued)}
              tone={view.waiting.count ? "caution" : undefined}
              help={
                view.waiting.count
                  ? `And ${formatNumber(view.waiting.count)} store ${view.waiting.count === 1 ? "change waits" : "changes wait"} before anything can be sent: ${view.waiting.reason ?? "no reason recorded"}.`
                  : undefined
              }
            />
            <Stat label="Current lag" value={formatDuration(view.lagMs)} />
            {/* What is still on the Problems page: replayed or discarded ones are no longer counted. */}
            <Stat
              label="Could not be delivered"
              value={formatNumber(view.openDead)}
              tone={view.openDead ? "critical" : undefined}
              help={view.openDead ? "Replay or discard them on the Problems page." : "Nothing to replay or discard."}
              url="/app/problems"
            />
          </InlineGrid>
        </Layout.Section>
        {shop.connectedAt && (
          <Layout.Section>
            <Stat
              label="Signups added to Shopify"
              value={formatNumber(view.signups.created)}
              help={`${view.signups.on ? "People who signed up through your marketing account's forms, now Shopify customers." : "Off: turn it on in Settings."} ${signupCountText(view.signups, view.signups.on)}`}
            />
          </Layout.Section>
        )}
        <SectionCard
          title="Deliveries and failures"
          actions={
            <Text as="p" variant="bodySm" tone="subdued">
              Last successful delivery: {formatWhen(view.lastDeliveredAt, view.zone)}
            </Text>
          }
        >
          <Tabs
            tabs={[
              { id: "day", content: "Last 24 hours" },
              { id: "month", content: "Last 30 days" },
            ]}
            selected={tab}
            onSelect={setTab}
          />
          <HealthChart points={tab === 0 ? view.history.day : view.history.month} range={tab === 0 ? "24h" : "30d"} timeZone={view.zone} />
        </SectionCard>
        <SectionCard title="By type" flush>
          {rows.length ? (
            <DataTable
              columnContentTypes={["text", "numeric", "numeric", "numeric", "numeric", "numeric", "numeric", "numeric", "numeric"]}
              headings={["Type", "Received", "Sent", "Skipped", "Out of date", "Could not be used", "Failed attempts", "Could not be delivered", "Waiting"]}
              rows={rows}
              totals={[
                "",
                ...[totals.received, totals.delivered, totals.skipped, totals.stale, totals.unusable, totals.failed, view.openDead, totals.queued].map(formatNumber),
              ]}
              showTotalsInFooter
              footerContent={
                <span data-columns-help>
                  Received: changes your store sent. Sent: updates sent to your marketing account (one change can send several). Skipped:
                  changes with nothing to send. Out of date: skipped ones Shopify delivered after a newer version of the same thing.
                  Could not be delivered: changes waiting on the Problems page to be replayed or discarded.
                </span>
              }
            />
          ) : (
            <Box padding="400">
              <Text as="p" tone="subdued">
                Nothing received yet. Changes appear here as soon as your store sends them.
              </Text>
            </Box>
          )}
        </SectionCard>
        <Layout.Section>
          <InlineStack gap="200">
            <Button url="/app/activity">View activity</Button>
            <Button url="/app/problems">View problems</Button>
          </InlineStack>
        </Layout.Section>
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Sync health" />;
}
