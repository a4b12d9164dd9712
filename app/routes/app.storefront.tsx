import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useLoaderData, useNavigation, useActionData } from "@remix-run/react";
import { Badge, Banner, Button, Layout, Link, List, Page, Text } from "@shopify/polaris";
import { EmbedBadge, EmbedStatus, TrackerRunning } from "~/admin/EmbedStatus";
import { storeTimeZone } from "~/admin/store-zone.server";
import { trackerModeLabel } from "~/admin/tracker-modes";
import { ActionError, formatNumber, formatWhen, PageError, SectionCard, useToast } from "~/admin/ui";
import { authenticate } from "~/shopify.server";
import { storefrontOverview } from "~/storefront/onboarding.server";
import { syncTracker } from "~/storefront/tracker.server";

export const meta: MetaFunction = () => [{ title: "Storefront · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [overview, zone] = await Promise.all([storefrontOverview(session.shop), storeTimeZone(session.shop)]);
  return { ...overview, zone };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const result = await syncTracker(session.shop);
  return result.status === "synced"
    ? { ok: true as const, toast: "Tracker published for the embed to load", at: Date.now() }
    : { ok: false as const, toast: "The tracker could not be published", error: true, at: Date.now() };
};

export default function Storefront() {
  const o = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  const result = useActionData<typeof action>();
  useToast(result);
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
        <SectionCard title="Tracker embed in your theme" badge={<EmbedBadge state={o.embed.state} />}>
          <EmbedStatus embed={o.embed} />
        </SectionCard>
        <SectionCard title="Tracker">
          {/* From the live theme's embed, the same reading as the card above: a published snippet alone reaches no visitor. */}
          <TrackerRunning status={o.tracker.onStorefront} />
          <List>
            <List.Item>
              Mode: {trackerModeLabel(o.tracker.mode)} (change it in <Link url="/app/settings">Settings</Link>)
            </List.Item>
            <List.Item>
              Published for the embed to load: {o.tracker.publishedAt ? `${formatWhen(o.tracker.publishedAt, o.zone)} (${trackerModeLabel(o.tracker.publishedMode, true)})` : "not yet"}
            </List.Item>
            <List.Item>
              Last event your marketing account recorded: {o.tracker.lastEventTrackedAt ? formatWhen(o.tracker.lastEventTrackedAt, o.zone) : "none yet"}
            </List.Item>
          </List>
          {/* The account records events from every source (this app's orders and carts too): it does not prove the embed is on. */}
          {o.tracker.lastEventTrackedAt && o.tracker.onStorefront.state !== "running" && o.tracker.onStorefront.state !== "unknown" && (
            <Text as="p" tone="subdued">
              <span data-tracker-source-hint>
                The tracker does not run on your storefront, so that event came from elsewhere: your marketing account also records the storefront events, orders
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
