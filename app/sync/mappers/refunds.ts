/**
 * refunds/create → custom event `order_refunded` + `order/updated` (refunded / partially_refunded).
 *
 * A refund payload names no person; it shares the order's object key so the order's state
 * (email, customer id, total, refunded so far) is the prior.
 */
import type { CustomEvent, OrderEvent } from "../../services/marketing/schemas";
import { compareMoney, fromMinor, minorToDecimal, sumMinor, toMinor } from "../money";
import type { RefundPayload } from "../payloads";
import { compact, currencyOf, eventCall, personRef, priorOf, type SyncContext, type SyncPlan } from "./common";
import { orderObjectKey } from "./orders";

export const ORDER_REFUNDED_EVENT = "order_refunded";

function refundCurrency(r: RefundPayload, orderCurrency: string | null, ctx: SyncContext): string | undefined {
  const fromLines = r.refund_line_items.map((l) => l.subtotal_set?.shop_money?.currency_code ?? null);
  const fromTransactions = r.transactions.map((t) => t.currency);
  return currencyOf(orderCurrency, ...fromLines, ...fromTransactions, ctx.currency);
}

/**
 * Money actually returned: successful refund transactions. Without transactions (e.g. a restock-only
 * or store-credit refund) the refunded lines (subtotal + tax) and shipping are used instead.
 */
export function refundAmountMinor(r: RefundPayload, currency: string | undefined): bigint {
  const refunds = r.transactions.filter(
    (t) => (t.kind ?? "refund").toLowerCase() === "refund" && ["success", null].includes(t.status?.toLowerCase() ?? null),
  );
  if (refunds.length > 0) return sumMinor(refunds.map((t) => t.amount), currency);
  return (
    sumMinor(r.refund_line_items.flatMap((l) => [l.subtotal, l.total_tax]), currency) +
    sumMinor(r.refund_shipping_lines.map((s) => s.subtotal_amount_set?.shop_money?.amount ?? null), currency)
  );
}

export function mapRefund(r: RefundPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "order");
  const objectKey = orderObjectKey(r.order_id);
  if (prior?.refundIds.includes(r.id)) {
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "refund already synced" };
  }
  const ref = personRef(prior?.email ?? null, prior?.customerId ?? null);
  if (!prior || !ref) {
    return {
      objectKey,
      objectUpdatedAt: null,
      calls: [],
      nextState: prior,
      skipped: "refund for an order never synced: no person to attach it to",
    };
  }

  const currency = refundCurrency(r, prior.currency, ctx);
  const refundMinor = refundAmountMinor(r, currency);
  const refundedSoFar = toMinor(prior.refunded, currency) + refundMinor;
  const refundedDecimal = minorToDecimal(refundedSoFar, currency);
  const fully = prior.total !== null && compareMoney(refundedDecimal, prior.total, currency) >= 0;
  const status = fully ? "refunded" : "partially_refunded";
  const occurredAt = r.processed_at ?? r.created_at ?? ctx.now.toISOString();

  const items = r.refund_line_items.map((l) =>
    compact({
      id: l.line_item?.product_id ?? l.line_item_id ?? l.id,
      line_item_id: l.line_item_id,
      variant_id: l.line_item?.variant_id,
      name: l.line_item?.name ?? l.line_item?.title,
      sku: l.line_item?.sku,
      quantity: l.quantity,
      amount: l.subtotal !== null ? fromMinor(toMinor(l.subtotal, currency), currency) : undefined,
      taxes: l.total_tax !== null ? fromMinor(toMinor(l.total_tax, currency), currency) : undefined,
    }),
  );

  const refundEvent: CustomEvent = {
    ...ref,
    source: ctx.settings.source,
    eventName: ORDER_REFUNDED_EVENT,
    properties: compact({
      order_id: r.order_id,
      refund_id: r.id,
      amount: fromMinor(refundMinor, currency),
      currency,
      items,
      note: r.note,
      occurred_at: occurredAt,
    }),
  };
  const orderUpdate = compact({
    ...ref,
    source: ctx.settings.source,
    id: r.order_id,
    occurred_at: occurredAt,
    status,
    currency,
  }) as OrderEvent;

  return {
    objectKey,
    objectUpdatedAt: null,
    calls: [{ op: "event.custom", body: refundEvent }, eventCall("order", "updated", orderUpdate)],
    nextState: {
      ...prior,
      refunded: refundedDecimal,
      refundIds: [...prior.refundIds, r.id],
      status,
    },
  };
}
