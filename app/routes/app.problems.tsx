import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useState } from "react";
import { Form, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import {
  Badge,
  BlockStack,
  Box,
  Button,
  IndexTable,
  Layout,
  Page,
  Text,
  type IndexTableProps,
} from "@shopify/polaris";
import { SearchCard } from "~/admin/SearchCard";
import { NotConnectedCard } from "~/admin/ServiceUi";
import { failureText, unusableText } from "~/admin/plain-words";
import { storeTimeZone } from "~/admin/store-zone.server";
import { problemAction } from "~/admin/problems-action.server";
import { listProblems, listReplayed, listRetrying, listUnprocessed, type ReplayOutcome } from "~/admin/problems.server";
import { ActionError, EmptyState, PageError, SectionCard, SupportDetails, formatWhen, useRefreshWhile, useToast } from "~/admin/ui";
import { describeShop } from "~/shops/shops.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Problems · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const search = (new URL(request.url).searchParams.get("q") ?? "").slice(0, 200);
  const [shop, zone, problems, retrying, unprocessed, replayed] = await Promise.all([
    describeShop(session.shop),
    storeTimeZone(session.shop),
    listProblems(session.shop, { search }),
    listRetrying(session.shop, { search, limit: 10 }),
    // Not searchable (nothing was sent): shown only without a search.
    search ? { count: 0, items: [] } : listUnprocessed(session.shop),
    search ? [] : listReplayed(session.shop),
  ]);
  const notConnected = shop.state === "not_connected" || shop.state === "not_installed";
  return { search, zone, notConnected, groups: problems.groups, causes: problems.causes, retrying: retrying.groups, unprocessed, replayed };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return problemAction(session.shop, await request.formData());
};

function ActionButton({
  intent,
  fields,
  children,
  label,
  tone,
}: {
  intent: string;
  fields: Record<string, string>;
  children: string;
  /** what a screen reader announces when the visible text alone is ambiguous ("Replay Customer 7001") */
  label?: string;
  tone?: "critical";
}) {
  const navigation = useNavigation();
  const busy =
    navigation.state !== "idle" &&
    navigation.formData?.get("intent") === intent &&
    Object.entries(fields).every(([k, v]) => navigation.formData?.get(k) === v);
  return (
    <Form method="post" style={{ display: "inline-flex" }}>
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <Button submit size="slim" tone={tone} accessibilityLabel={label} loading={busy}>
        {children}
      </Button>
    </Form>
  );
}

/**
 * Replay and Discard of one failure, stacked so the column stays narrow and inside its card at
 * every width; Discard asks first (it is never sent then). `name` is the row's unique label.
 */
function RowActions({ id, name }: { id: string; name: string }) {
  const [confirming, setConfirming] = useState(false);
  if (confirming) {
    return (
      <BlockStack gap="100" inlineAlign="start">
        <div style={{ whiteSpace: "normal", maxWidth: 200 }}>
          <Text as="p" variant="bodySm">
            Discard this change? It will not be sent to your marketing account.
          </Text>
        </div>
        <ActionButton intent="discard" fields={{ id }} tone="critical" label={`Discard ${name}`}>
          Discard
        </ActionButton>
        <Button size="slim" onClick={() => setConfirming(false)} accessibilityLabel={`Keep ${name}`}>
          Cancel
        </Button>
      </BlockStack>
    );
  }
  return (
    <BlockStack gap="100" inlineAlign="start">
      <ActionButton intent="replay" fields={{ id }} label={`Replay ${name}`}>
        Replay
      </ActionButton>
      <Button size="slim" tone="critical" accessibilityLabel={`Discard ${name}`} onClick={() => setConfirming(true)}>
        Discard
      </Button>
    </BlockStack>
  );
}

/**
 * Each row's label for its buttons: what, for whom and when ("Order refunded · $85.00 for Ada
 * Lovelace <ada@example.com>, Order #1001, 28 Nov 2026, 10:02"), numbered where two rows still read alike.
 */
function rowLabels(problems: { what: string; customer: string | null; orderName: string | null; object: string; createdAt: string }[], zone: string): string[] {
  const labels = problems.map((p) => `${p.what} for ${[p.customer, objectName(p)].filter(Boolean).join(", ")}, ${formatWhen(p.createdAt, zone)}`);
  const total = new Map<string, number>();
  for (const l of labels) total.set(l, (total.get(l) ?? 0) + 1);
  const seen = new Map<string, number>();
  return labels.map((l) => {
    if (total.get(l) === 1) return l;
    const n = (seen.get(l) ?? 0) + 1;
    seen.set(l, n);
    return `${l} (${n} of ${total.get(l)})`;
  });
}

/** "Order #1001" or "Customer 7001": what a row is about. */
const objectName = (p: { orderName: string | null; object: string }) => (p.orderName ? `Order ${p.orderName}` : p.object);

const REPLAY_OUTCOME: Record<ReplayOutcome, { label: string; tone?: "success" | "critical" | "info" | "attention" }> = {
  sending: { label: "Sending…", tone: "info" },
  retrying: { label: "Failed again, being retried", tone: "attention" },
  delivered: { label: "Delivered", tone: "success" },
  failed: { label: "Could not be delivered again", tone: "critical" },
  not_needed: { label: "Not sent: newer data was already sent" },
};

/** How many tries a group's failures gave up after, when they all took the same number. */
function sameAttempts(problems: { attempts: number }[]): number | undefined {
  const counts = new Set(problems.map((p) => p.attempts));
  return counts.size === 1 ? problems[0].attempts : undefined;
}

/** What failed, for whom, how often and what the service said: the cells both failure tables share. */
function FailureCells({
  problem: p,
}: {
  problem: { what: string; customer: string | null; attempts: number; message: string | null; meaning: string };
}) {
  return (
    <>
      <IndexTable.Cell>
        <div style={{ whiteSpace: "normal", minWidth: 120 }}>{p.what}</div>
      </IndexTable.Cell>
      <IndexTable.Cell>
        <div style={{ whiteSpace: "normal", wordBreak: "break-word", minWidth: 140 }}>{p.customer ?? "—"}</div>
      </IndexTable.Cell>
      <IndexTable.Cell>
        <Text as="span" alignment="end" numeric>
          {p.attempts}
        </Text>
      </IndexTable.Cell>
      <IndexTable.Cell>
        {/* What it means for the merchant; the service's own words ("Server Error") as detail. */}
        <div style={{ whiteSpace: "normal", minWidth: 200 }} data-failure-meaning>
          {p.meaning}
          {p.message && <SupportDetails>{p.message}</SupportDetails>}
        </div>
      </IndexTable.Cell>
    </>
  );
}

/** Headings: Object, the columns of FailureCells (What, Customer, Attempts), then `after`: the message column and any after it. */
function failureHeadings(...after: IndexTableProps["headings"][number][]): IndexTableProps["headings"] {
  return [
    { title: "Object" },
    { title: "What" },
    { title: "Customer" },
    { title: "Attempts", alignment: "end" },
    ...after,
  ];
}

export default function Problems() {
  const { groups, causes, retrying, unprocessed, replayed, search, zone, notConnected } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  useToast(result);
  // While a replayed change is on its way, the page reads its outcome again every 2 s.
  useRefreshWhile(replayed.some((r) => r.outcome === "sending" || r.outcome === "retrying"), 2_000);
  const [params] = useSearchParams();
  const total = groups.reduce((n, g) => n + g.count, 0);

  return (
    <Page title="Problems" subtitle="Changes that could not be delivered, grouped by reason">
      <Layout>
        <ActionError result={result} />
        {notConnected && <NotConnectedCard />}
        <Layout.Section>
          <SearchCard search={search} placeholder="Search by customer email or order name (#1001)" />
        </Layout.Section>
        {replayed.length > 0 && (
          <SectionCard flush title="Replayed in the last hour" description="What became of the changes you replayed. This list updates by itself while one is being sent.">
            <IndexTable
              resourceName={{ singular: "change", plural: "changes" }}
              itemCount={replayed.length}
              selectable={false}
              headings={[{ title: "Object" }, { title: "What" }, { title: "Customer" }, { title: "Result" }, { title: "Replayed" }]}
            >
              {replayed.map((r, i) => (
                <IndexTable.Row id={r.id} key={r.id} position={i}>
                  <IndexTable.Cell>{objectName(r)}</IndexTable.Cell>
                  <IndexTable.Cell>{r.what}</IndexTable.Cell>
                  <IndexTable.Cell>{r.customer ?? "—"}</IndexTable.Cell>
                  <IndexTable.Cell>
                    <span data-replay-outcome={r.outcome}>
                      <Badge tone={REPLAY_OUTCOME[r.outcome].tone}>{REPLAY_OUTCOME[r.outcome].label}</Badge>
                    </span>
                  </IndexTable.Cell>
                  <IndexTable.Cell>{formatWhen(r.replayedAt, zone)}</IndexTable.Cell>
                </IndexTable.Row>
              ))}
            </IndexTable>
          </SectionCard>
        )}
        {retrying.length > 0 && (
          <SectionCard
            flush
            title="Being retried automatically"
            description="These failed recently and are retried for up to 24 hours; nothing to do unless they end up below."
          >
            <IndexTable
              resourceName={{ singular: "failure", plural: "failures" }}
              itemCount={retrying.reduce((n, g) => n + g.problems.length, 0)}
              selectable={false}
              headings={failureHeadings({ title: "What it means" })}
            >
              {retrying
                .flatMap((g) => g.problems)
                .map((p, i) => (
                  <IndexTable.Row id={p.id} key={p.id} position={i}>
                    <IndexTable.Cell>{objectName(p)}</IndexTable.Cell>
                    <FailureCells problem={p} />
                  </IndexTable.Row>
                ))}
            </IndexTable>
          </SectionCard>
        )}
        {/* Not connected, "No problems" would reassure about nothing: the card above says why there are none. */}
        {total === 0 && (unprocessed.count > 0 || (notConnected && !params.get("q"))) ? null : total === 0 ? (
          <SectionCard>
            <EmptyState
              heading
              title={params.get("q") ? "No problems match your search" : "No problems"}
              hint={
                params.get("q")
                  ? "Try another customer email or order name."
                  : "Everything your store sent was accepted by the marketing service, or is still being retried."
              }
            />
          </SectionCard>
        ) : (
          groups.map((g) => (
            <SectionCard
              key={g.key}
              flush
              title={failureText(g.reason, sameAttempts(g.problems))}
              badge={<Badge tone="critical">{`${g.count}`}</Badge>}
              description={<SupportDetails>{g.reason}</SupportDetails>}
              actions={
                <ActionButton intent="replay-reason" fields={{ key: g.key }}>
                  {`Replay all (${g.count})`}
                </ActionButton>
              }
              footer={
                g.calls > g.problems.length && (
                  <Box padding="400">
                    <Text as="p" tone="subdued">
                      Showing the newest {g.problems.length}. Search to find a particular one.
                    </Text>
                  </Box>
                )
              }
            >
              <IndexTable
                resourceName={{ singular: "problem", plural: "problems" }}
                itemCount={g.problems.length}
                selectable={false}
                headings={failureHeadings({ title: "What it means" }, { title: "Actions", hidden: true })}
              >
                {rowLabels(g.problems, zone).map((label, i) => {
                  const p = g.problems[i];
                  return (
                  <IndexTable.Row id={p.id} key={p.id} position={i}>
                    <IndexTable.Cell>
                      <BlockStack gap="050">
                        <Text as="span" fontWeight="semibold">
                          {objectName(p)}
                        </Text>
                        <Text as="span" variant="bodySm" tone="subdued">
                          {formatWhen(p.createdAt, zone)}
                        </Text>
                      </BlockStack>
                    </IndexTable.Cell>
                    <FailureCells problem={p} />
                    <IndexTable.Cell>
                      <RowActions id={p.id} name={label} />
                    </IndexTable.Cell>
                  </IndexTable.Row>
                );
                })}
              </IndexTable>
            </SectionCard>
          ))
        )}
        {unprocessed.count > 0 && (
          <SectionCard
            flush
            title="Could not be used"
            badge={<Badge tone="warning">{`${unprocessed.count}`}</Badge>}
            description="Shopify sent these, but they could not be read or turned into anything to send, so the marketing service never got them and a replay cannot help. If they keep appearing, send the reason to support."
          >
            <IndexTable
              resourceName={{ singular: "item", plural: "items" }}
              itemCount={unprocessed.items.length}
              selectable={false}
              headings={[{ title: "When" }, { title: "What" }, { title: "Object" }, { title: "Reason" }]}
            >
              {unprocessed.items.map((u, i) => (
                <IndexTable.Row id={`${i}`} key={`${u.at}-${i}`} position={i}>
                  <IndexTable.Cell>{formatWhen(u.at, zone)}</IndexTable.Cell>
                  <IndexTable.Cell>{u.label}</IndexTable.Cell>
                  <IndexTable.Cell>{u.object ?? "—"}</IndexTable.Cell>
                  <IndexTable.Cell>
                    <div style={{ whiteSpace: "normal", maxWidth: 420 }}>
                      {unusableText(u.reason)}
                      <SupportDetails>{u.reason}</SupportDetails>
                    </div>
                  </IndexTable.Cell>
                </IndexTable.Row>
              ))}
            </IndexTable>
            {unprocessed.count > unprocessed.items.length && (
              <Box padding="400">
                <Text as="p" tone="subdued">
                  {`Showing the newest ${unprocessed.items.length} of ${unprocessed.count}.`}
                </Text>
              </Box>
            )}
          </SectionCard>
        )}
        {causes > groups.length && (
          <Layout.Section>
            <Text as="p" tone="subdued">
              {`Showing the ${groups.length} largest of ${causes} reasons. Search by customer email or order name to find the others.`}
            </Text>
          </Layout.Section>
        )}
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Problems" />;
}
