import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useSearchParams } from "@remix-run/react";
import { Badge, Box, Button, IndexTable, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import { SearchCard } from "~/admin/SearchCard";
import { NotConnectedCard } from "~/admin/ServiceUi";
import { storeTimeZone } from "~/admin/store-zone.server";
import { recentActivity } from "~/admin/activity.server";
import { EmptyState, PageError, SectionCard, formatWhen } from "~/admin/ui";
import { describeShop } from "~/shops/shops.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Activity · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const url = new URL(request.url);
  const search = (url.searchParams.get("q") ?? "").slice(0, 200);
  const before = url.searchParams.get("before") ?? undefined;
  const [shop, zone, activity] = await Promise.all([
    describeShop(session.shop),
    storeTimeZone(session.shop),
    recentActivity(session.shop, { search, before }),
  ]);
  return { search, zone, notConnected: shop.state === "not_connected" || shop.state === "not_installed", ...activity };
};

const STATUS: Record<string, { label: string; tone?: "success" | "critical" | "attention" | "info" }> = {
  delivered: { label: "Delivered", tone: "success" },
  queued: { label: "Waiting", tone: "attention" },
  running: { label: "Sending", tone: "info" },
  dead: { label: "Could not be delivered", tone: "critical" },
  // Declined for good by the service (a blocked contact, a cart bought meanwhile): not a problem to replay.
  refused: { label: "Declined by the service" },
  superseded: { label: "Not needed" },
};

export default function Activity() {
  const { entries, search, nextBefore, zone, notConnected } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();

  return (
    <Page title="Activity" subtitle="What was sent to your marketing account, newest first">
      <Layout>
        {notConnected && <NotConnectedCard />}
        <Layout.Section>
          <SearchCard search={search} placeholder="Search by customer email or order name (#1001)" />
        </Layout.Section>
        <SectionCard
          flush
          footer={
            nextBefore && (
              <Box padding="400">
                <InlineStack align="center">
                  <Button url={`/app/activity?${new URLSearchParams({ ...(search ? { q: search } : {}), before: nextBefore })}`}>Older</Button>
                </InlineStack>
              </Box>
            )
          }
        >
          {entries.length === 0 ? (
            // Not connected, "No activity yet" would promise activity to come: the card above says why there is none.
            <EmptyState
              heading
              title={params.get("q") ? "Nothing matches your search" : notConnected ? "Nothing sent" : "No activity yet"}
              hint={
                params.get("q")
                  ? "Try another customer email or order name."
                  : notConnected
                    ? "Changes in your store appear here once your marketing account is connected."
                    : "Changes in your store appear here as they are sent."
              }
            />
          ) : (
            <IndexTable
              resourceName={{ singular: "delivery", plural: "deliveries" }}
              itemCount={entries.length}
              selectable={false}
              headings={[{ title: "When" }, { title: "Object" }, { title: "What was sent" }, { title: "Customer" }, { title: "Outcome" }]}
            >
              {entries.map((e, i) => {
                const st = STATUS[e.status] ?? { label: e.status };
                return (
                  <IndexTable.Row id={e.id} key={e.id} position={i}>
                    <IndexTable.Cell>{formatWhen(e.at, zone)}</IndexTable.Cell>
                    <IndexTable.Cell>{e.orderName ? `Order ${e.orderName}` : e.object}</IndexTable.Cell>
                    <IndexTable.Cell>{e.what}</IndexTable.Cell>
                    <IndexTable.Cell>{e.customer ?? "—"}</IndexTable.Cell>
                    <IndexTable.Cell>
                      <InlineStack gap="100" blockAlign="center" wrap={false}>
                        <Badge tone={st.tone}>{st.label}</Badge>
                        {e.attempts > 1 && (
                          <Text as="span" variant="bodySm" tone="subdued">
                            {`${e.attempts} attempts`}
                          </Text>
                        )}
                      </InlineStack>
                    </IndexTable.Cell>
                  </IndexTable.Row>
                );
              })}
            </IndexTable>
          )}
        </SectionCard>
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Activity" />;
}
