import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useLoaderData, useNavigation, useActionData } from "@remix-run/react";
import { Badge, Banner, BlockStack, Button, InlineStack, Layout, Link, List, Page, Text } from "@shopify/polaris";
import { storeTimeZone } from "~/admin/store-zone.server";
import { trackerModeLabel } from "~/admin/tracker-modes";
import { ActionError, formatNumber, formatWhen, PageError, SectionCard, useToast } from "~/admin/ui";
import { authenticate } from "~/shopify.server";
import { storefrontOverview, type EmbedState } from "~/storefront/onboarding.server";
import { syncTracker } from "~/storefront/tracker.server";

export const meta: MetaFunction = () => [{ title: "Storefront · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { admin, session } = await authenticate.admin(request);
  const [overview, zone] = await Promise.all([storefrontOverview(session.shop), storeTimeZone(admin, session.shop)]);
  return { ...overview, zone };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const result = await syncTracker(session.shop);
  return result.status === "synced"
    ? { ok: true as const, toast: "Tracker published to your storefront", at: Date.now() }
    : { ok: false as const, toast: "The tracker could not be published", error: true, at: Date.now() };
};

const EMBED: Record<EmbedState, { tone: "success" | "attention" | "critical" | undefined; label: string; help: string }> = {
  enabled: { tone: "success", label: "On", help: "The tracker embed is on in your live theme." },
  disabled: { tone: "attention", label: "Off", help: "The tracker embed was added to your live theme but is switched off." },
  not_added: { tone: "critical", label: "Not added", help: "Your live theme does not load the tracker yet." },
  unknown: { tone: undefined, label: "Unknown", help: "We could not read your live theme just now." },
};

export default function Storefront() {
  const o = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  const result = useActionData<typeof action>();
  useToast(result);
  const embed = EMBED[o.embed.state];
  return (
    <Page title="Storefront" subtitle="The tracker on your online store and the browsing events it adds">
      <Layout>
        <ActionError result={result} />
        {!o.connected && (
          <Layout.Section>
            <Banner tone="warning" title="Not connected">
              <p>
                Connect your marketing account first (<Link url="/app/connection">Connection</Link>): the tracker comes from it.
              </p>
            </Banner>
          </Layout.Section>
        )}
        <SectionCard title="Tracker embed in your theme" badge={<Badge tone={embed.tone}>{embed.label}</Badge>}>
          <Text as="p">
            {embed.help}
            {o.embed.themeName ? ` Live theme: ${o.embed.themeName}.` : ""}
          </Text>
          {o.embed.state !== "enabled" && (
            <BlockStack gap="200">
              <Text as="p" tone="subdued">
                The theme editor opens with the Marketing tracker switched on under App embeds: click Save there.
              </Text>
              <InlineStack>
                <Button variant="primary" url={o.embed.activateUrl} target="_blank">
                  Turn on the tracker embed
                </Button>
              </InlineStack>
            </BlockStack>
          )}
        </SectionCard>
        <SectionCard title="Tracker">
          <List>
            <List.Item>
              Mode: {trackerModeLabel(o.tracker.mode)} (change it in <Link url="/app/settings">Settings</Link>)
            </List.Item>
            <List.Item>
              Published to your storefront: {o.tracker.publishedAt ? `${formatWhen(o.tracker.publishedAt, o.zone)} (${trackerModeLabel(o.tracker.publishedMode, true)})` : "not yet"}
            </List.Item>
            <List.Item>
              Last event your marketing account recorded: {o.tracker.lastEventTrackedAt ? formatWhen(o.tracker.lastEventTrackedAt, o.zone) : "none yet"}
            </List.Item>
          </List>
          {/* The account records events from every source (this app's orders and carts too): it does not prove the embed is on. */}
          {o.tracker.lastEventTrackedAt && o.embed.state !== "enabled" && (
            <Text as="p" tone="subdued">
              <span data-tracker-source-hint>
                Your live theme does not load the tracker, so that event came from elsewhere: your marketing account also records the storefront events, orders
                and carts this app sends.
              </span>
            </Text>
          )}
          {o.tracker.syncError && (
            <Banner tone="warning" title="The tracker could not be published">
              <p>It is tried again automatically. {o.tracker.syncError}</p>
            </Banner>
          )}
          <Form method="post">
            <Button submit disabled={!o.connected} loading={navigation.state === "submitting"}>
              Publish the tracker now
            </Button>
          </Form>
        </SectionCard>
        <SectionCard title="Storefront events" badge={<Badge tone={o.events.enabled ? "success" : undefined}>{o.events.enabled ? "On" : "Off"}</Badge>}>
          <Text as="p">
            Product viewed, added to cart, cart viewed and checkout started, from visitors who allow analytics and marketing.
          </Text>
          {!o.events.enabled && (
            <Text as="p" tone="subdued">
              <span data-events-off-hint>
                Off: nothing from the storefront is sent. Turn them on in <Link url="/app/settings">Settings</Link>.
              </span>
            </Text>
          )}
          <List>
            <List.Item>Sent to your marketing account: {formatNumber(o.events.queued)}</List.Item>
            <List.Item>Counted, not sent (anonymous visitors): {formatNumber(o.events.anonymous)}</List.Item>
            <List.Item>Not sent (events off or not connected): {formatNumber(o.events.ignored)}</List.Item>
            <List.Item>Not sent (too many from one visitor): {formatNumber(o.events.rateLimited)}</List.Item>
            <List.Item>Last storefront event received: {o.events.lastEventAt ? formatWhen(o.events.lastEventAt, o.zone) : "none yet"}</List.Item>
          </List>
        </SectionCard>
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Storefront" />;
}
