import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import type { ReactNode } from "react";
import { Form, useActionData, useLoaderData, useNavigation, useSearchParams } from "@remix-run/react";
import {
  Badge,
  BlockStack,
  Box,
  Button,
  Card,
  IndexTable,
  InlineStack,
  Layout,
  Page,
  Text,
  type IndexTableProps,
} from "@shopify/polaris";
import { SearchCard } from "~/admin/SearchCard";
import { problemAction } from "~/admin/problems-action.server";
import { listProblems, listRetrying, listUnprocessed } from "~/admin/problems.server";
import { EmptyState, PageError, formatWhen, useToast } from "~/admin/ui";
import { authenticate } from "~/shopify.server";

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const search = (new URL(request.url).searchParams.get("q") ?? "").slice(0, 200);
  const [problems, retrying, unprocessed] = await Promise.all([
    listProblems(session.shop, { search }),
    listRetrying(session.shop, { search, limit: 10 }),
    // Not searchable (nothing was sent): shown only without a search.
    search ? { count: 0, items: [] } : listUnprocessed(session.shop),
  ]);
  return { search, groups: problems.groups, causes: problems.causes, retrying: retrying.groups, unprocessed };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return problemAction(session.shop, await request.formData());
};

function ActionButton({
  intent,
  fields,
  children,
  tone,
}: {
  intent: string;
  fields: Record<string, string>;
  children: string;
  tone?: "critical";
}) {
  const navigation = useNavigation();
  const busy =
    navigation.state !== "idle" &&
    navigation.formData?.get("intent") === intent &&
    Object.entries(fields).every(([k, v]) => navigation.formData?.get(k) === v);
  return (
    <Form method="post" style={{ display: "inline" }}>
      <input type="hidden" name="intent" value={intent} />
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <Button submit size="slim" tone={tone} variant={tone ? "plain" : undefined} loading={busy}>
        {children}
      </Button>
    </Form>
  );
}

/** What failed, for whom, how often and what the service said: the cells both failure tables share. */
function FailureCells({
  problem: p,
}: {
  problem: { what: string; customer: string | null; attempts: number; message: string | null };
}) {
  return (
    <>
      <IndexTable.Cell>{p.what}</IndexTable.Cell>
      <IndexTable.Cell>{p.customer ?? "—"}</IndexTable.Cell>
      <IndexTable.Cell>
        <Text as="span" alignment="end" numeric>
          {p.attempts}
        </Text>
      </IndexTable.Cell>
      <IndexTable.Cell>
        <div style={{ whiteSpace: "normal", maxWidth: 340 }}>{p.message ?? "—"}</div>
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

/** A titled card around a table: heading (and a count badge), a line of explanation, then the table. */
function TableCard({
  title,
  badge,
  hint,
  children,
}: {
  title: string;
  badge?: ReactNode;
  hint: string;
  children: ReactNode;
}) {
  return (
    <Layout.Section>
      <Card padding="0">
        <Box padding="400">
          <BlockStack gap="100">
            <InlineStack gap="200" blockAlign="center">
              <Text as="h2" variant="headingMd">
                {title}
              </Text>
              {badge}
            </InlineStack>
            <Text as="p" tone="subdued">
              {hint}
            </Text>
          </BlockStack>
        </Box>
        {children}
      </Card>
    </Layout.Section>
  );
}

export default function Problems() {
  const { groups, causes, retrying, unprocessed, search } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  useToast(result);
  const [params] = useSearchParams();
  const total = groups.reduce((n, g) => n + g.count, 0);

  return (
    <Page title="Problems" subtitle="Changes the marketing service did not accept, grouped by reason">
      <Layout>
        <Layout.Section>
          <SearchCard search={search} placeholder="Search by customer email or order name (#1001)" />
        </Layout.Section>
        {retrying.length > 0 && (
          <TableCard
            title="Being retried automatically"
            hint="These failed recently and are retried for up to 24 hours; nothing to do unless they end up below."
          >
            <IndexTable
              resourceName={{ singular: "failure", plural: "failures" }}
              itemCount={retrying.reduce((n, g) => n + g.problems.length, 0)}
              selectable={false}
              headings={failureHeadings({ title: "Last error" })}
            >
              {retrying
                .flatMap((g) => g.problems)
                .map((p, i) => (
                  <IndexTable.Row id={p.id} key={p.id} position={i}>
                    <IndexTable.Cell>{p.orderName ? `Order ${p.orderName}` : p.object}</IndexTable.Cell>
                    <FailureCells problem={p} />
                  </IndexTable.Row>
                ))}
            </IndexTable>
          </TableCard>
        )}
        {total === 0 && unprocessed.count > 0 ? null : total === 0 ? (
          <Layout.Section>
            <Card>
              <EmptyState
                heading
                title={params.get("q") ? "No problems match your search" : "No problems"}
                hint={
                  params.get("q")
                    ? "Try another customer email or order name."
                    : "Everything your store sent was accepted by the marketing service, or is still being retried."
                }
              />
            </Card>
          </Layout.Section>
        ) : (
          groups.map((g) => (
            <Layout.Section key={g.key}>
              <Card padding="0">
                <Box padding="400">
                  <InlineStack align="space-between" blockAlign="center" gap="200">
                    <BlockStack gap="100">
                      <InlineStack gap="200" blockAlign="center">
                        <Text as="h2" variant="headingMd">
                          {g.reason.charAt(0).toUpperCase() + g.reason.slice(1)}
                        </Text>
                        <Badge tone="critical">{`${g.count}`}</Badge>
                      </InlineStack>
                    </BlockStack>
                    <ActionButton intent="replay-reason" fields={{ key: g.key }}>
                      {g.count === 1 ? "Replay" : `Replay all ${g.count}`}
                    </ActionButton>
                  </InlineStack>
                </Box>
                <IndexTable
                  resourceName={{ singular: "problem", plural: "problems" }}
                  itemCount={g.problems.length}
                  selectable={false}
                  headings={failureHeadings({ title: "Service message" }, { title: "" })}
                >
                  {g.problems.map((p, i) => (
                    <IndexTable.Row id={p.id} key={p.id} position={i}>
                      <IndexTable.Cell>
                        <BlockStack gap="050">
                          <Text as="span" fontWeight="semibold">
                            {p.orderName ? `Order ${p.orderName}` : p.object}
                          </Text>
                          <Text as="span" variant="bodySm" tone="subdued">
                            {formatWhen(p.createdAt)}
                          </Text>
                        </BlockStack>
                      </IndexTable.Cell>
                      <FailureCells problem={p} />
                      <IndexTable.Cell>
                        <InlineStack gap="200" wrap={false}>
                          <ActionButton intent="replay" fields={{ id: p.id }}>
                            Replay
                          </ActionButton>
                          <ActionButton intent="discard" fields={{ id: p.id }} tone="critical">
                            Discard
                          </ActionButton>
                        </InlineStack>
                      </IndexTable.Cell>
                    </IndexTable.Row>
                  ))}
                </IndexTable>
                {g.count > g.problems.length && (
                  <Box padding="400">
                    <Text as="p" tone="subdued">
                      Showing {g.problems.length} of {g.count}. Search to find a particular one.
                    </Text>
                  </Box>
                )}
              </Card>
            </Layout.Section>
          ))
        )}
        {unprocessed.count > 0 && (
          <TableCard
            title="Could not be used"
            badge={<Badge tone="warning">{`${unprocessed.count}`}</Badge>}
            hint="Shopify sent these, but they could not be read or turned into anything to send, so the marketing service never got them and a replay cannot help. If they keep appearing, send the reason to support."
          >
            <IndexTable
              resourceName={{ singular: "item", plural: "items" }}
              itemCount={unprocessed.items.length}
              selectable={false}
              headings={[{ title: "When" }, { title: "What" }, { title: "Object" }, { title: "Reason" }]}
            >
              {unprocessed.items.map((u, i) => (
                <IndexTable.Row id={`${i}`} key={`${u.at}-${i}`} position={i}>
                  <IndexTable.Cell>{formatWhen(u.at)}</IndexTable.Cell>
                  <IndexTable.Cell>{u.what}</IndexTable.Cell>
                  <IndexTable.Cell>{u.object ?? "—"}</IndexTable.Cell>
                  <IndexTable.Cell>
                    <div style={{ whiteSpace: "normal", maxWidth: 420 }}>{u.reason}</div>
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
          </TableCard>
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
