import { Form, useNavigation } from "@remix-run/react";
import { Badge, BlockStack, Box, Button, InlineStack, ProgressBar, Select, Text } from "@shopify/polaris";
import { useEffect, useRef, useState } from "react";
import { BACKFILL_STATUS } from "../pipeline/status";
import { historyState } from "./history-words";
import type { HistoryView } from "./history.server";
import { formatDuration, formatNumber, formatWhen, SectionCard, SupportDetails, useRefreshWhile } from "./ui";

const POLL_MS = 2_000;
const isActive = (h: HistoryView) => h.status === BACKFILL_STATUS.queued || h.status === BACKFILL_STATUS.running;
const KIND_LABEL: Record<string, string> = { customers: "Customers", products: "Products", orders: "Orders" };

/** Lines per second between the last two samples of the same kind (null until there are two). */
function useRate(history: HistoryView | null): number | null {
  const last = useRef<{ key: string; done: number; at: number } | null>(null);
  const [rate, setRate] = useState<number | null>(null);
  useEffect(() => {
    if (!history || !isActive(history) || history.exporting) return;
    const key = `${history.id}:${history.kindNumber}`;
    const now = Date.now();
    const prev = last.current;
    if (prev && prev.key === key && now > prev.at && history.done >= prev.done) {
      const current = ((history.done - prev.done) * 1000) / (now - prev.at);
      // Smoothed: one slow poll does not swing the estimate.
      setRate((r) => (r === null ? current : r * 0.6 + current * 0.4));
    } else if (!prev || prev.key !== key) setRate(null);
    last.current = { key, done: history.done, at: now };
  }, [history]);
  return rate;
}

/** What to do about a failed or retried import step, with the stored text folded away for support. */
export function ImportProblem({ problem }: { problem: { why: string; fix: string; details: string } }) {
  return (
    <BlockStack gap="100">
      <Text as="p">
        <span data-history-problem>{problem.why}</span> {problem.fix}
      </Text>
      <SupportDetails>{problem.details}</SupportDetails>
    </BlockStack>
  );
}

/** The history import on the Connection page: a live progress bar while it runs, and a restart with the orders period. */
export function HistoryImport({ history, timeZone, ordersWindow }: { history: HistoryView | null; timeZone?: string; ordersWindow: number | null }) {
  const navigation = useNavigation();
  const [orders, setOrders] = useState(ordersWindow === null ? "365" : String(ordersWindow));
  const active = history !== null && isActive(history);
  const sending = history?.status === BACKFILL_STATUS.done && history.sending > 0;
  // Live while it runs (and until what it read has been sent).
  useRefreshWhile(active || sending, POLL_MS);
  const rate = useRate(history);

  const progress = history && history.total ? Math.min(100, Math.round((history.done / history.total) * 100)) : 0;
  const remaining = history?.total ? Math.max(0, history.total - history.done) : null;
  const eta = rate && rate > 0 && remaining !== null ? formatDuration((remaining / rate) * 1000) : null;
  const kind = history?.kind ? (KIND_LABEL[history.kind] ?? history.kind) : null;
  const state = history ? historyState(history, (iso) => formatWhen(iso, timeZone)) : null;

  return (
    <SectionCard
      title="Store history"
      badge={state && <Badge tone={state.tone}>{state.label}</Badge>}
    >
      {active && history ? (
        <BlockStack gap="200">
          <Text as="p">
            {kind ?? "Starting"} ({history.kindNumber} of {history.kinds}){history.exporting ? ": waiting for Shopify to prepare the export…" : ""}
          </Text>
          {state?.problem && <ImportProblem problem={state.problem} />}
          <div data-history-progress={progress}>
            <ProgressBar progress={progress} tone="primary" size="small" animated />
          </div>
          {history.exporting ? (
            // Nothing of this kind can be counted until Shopify's file is ready: no "0 / …", no "0 per second".
            <Text as="p" variant="bodySm" tone="subdued">
              <span data-history-exporting>Large stores take a few minutes to export; the import starts as soon as the file is ready.</span>
              {history.objects > 0 ? ` · ${formatNumber(history.objects)} objects imported so far` : ""}
            </Text>
          ) : (
            <Text as="p" variant="bodySm" tone="subdued">
              <span data-history-done>
                {formatNumber(history.done)} / {history.total === null ? "…" : formatNumber(history.total)}
              </span>{" "}
              · {rate === null ? "measuring speed…" : `${formatNumber(Math.round(rate))} per second`}
              {eta ? ` · about ${eta} left` : ""} · {formatNumber(history.objects)} objects imported so far
            </Text>
          )}
        </BlockStack>
      ) : (
        <BlockStack gap="200">
          <Text as="p" tone="subdued">
            <span data-history-state>
              {state ? state.line : "Customers, products and orders that existed before you connected are imported once, without starting any automation."}
            </span>
          </Text>
          {state?.problem && <ImportProblem problem={state.problem} />}
        </BlockStack>
      )}
      {ordersWindow !== null && (
        // Shopify's rule, not ours: without read_all_orders the Admin API shows 60 days of orders.
        <Text as="p" variant="bodySm" tone="subdued">
          <span data-orders-window={ordersWindow}>
            Orders of the last {ordersWindow} days only: Shopify lets an app read older orders once it has approved the app&apos;s
            request for access to all orders (<code>read_all_orders</code>). The app&apos;s developer asks for it in the Shopify
            Partner Dashboard (the app&apos;s API access page, &quot;Read all orders scope&quot;); once Shopify approves it, you are
            asked to accept the new permission, and &quot;Import history again&quot; then reaches older orders.
          </span>
        </Text>
      )}
      {!active && (
        <Form method="post">
          <input type="hidden" name="intent" value="resync" />
          <InlineStack gap="300" blockAlign="end">
            <Box minWidth="220px">
              <Select
                label="Orders to import"
                name="orders"
                value={orders}
                onChange={setOrders}
                options={
                  ordersWindow === null
                    ? [
                        { label: "Last 90 days", value: "90" },
                        { label: "Last year", value: "365" },
                        { label: "All orders", value: "all" },
                      ]
                    : [{ label: `Last ${ordersWindow} days (all Shopify lets the app read)`, value: String(ordersWindow) }]
                }
              />
            </Box>
            <Button submit loading={navigation.state === "submitting" && navigation.formData?.get("intent") === "resync"}>
              Import history again
            </Button>
          </InlineStack>
        </Form>
      )}
    </SectionCard>
  );
}
