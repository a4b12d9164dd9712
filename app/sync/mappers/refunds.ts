/**
 * refunds/create → custom event `order_refunded` + `order/updated` (refunded / partially_refunded).
 *
 * A refund payload names no person; it shares the order's object key so the order's state
 * (email, customer id, total, refunded so far) is the prior.
 */
import { compareMoney, fromMinor, minorToDecimal, sumMinor, toMinor } from "../money";
import type { RefundPayload } from "../payloads";
import { amount, compact, currencyOf, personRef } from "./common";
import { customEventBody, eventCall, orderEventBody } from "../event-bodies";
import { priorOf, type SyncContext, type SyncPlan } from "../plan-contract";
import { orderObjectKey, TEST_ORDER } from "./orders";

export const ORDER_REFUNDED_EVENT = "order_refunded";

/** The shop currency: the order's (its amounts are in it), else the refund lines' shop money. */
function refundCurrency(r: RefundPayload, orderCurrency: string | null, ctx: SyncContext): string | undefined {
  const fromLines = r.refund_line_items.map((l) => l.subtotal_set?.shop_money?.currency_code ?? null);
  return currencyOf(orderCurrency, ...fromLines, ctx.currency);
}

type MoneySet = RefundPayload["refund_line_items"][number]["subtotal_set"];
/** The shop-money amount of a { shop_money, presentment_money } pair, else the legacy field. */
const shop = (set: MoneySet, legacy?: string | null) => set?.shop_money?.amount ?? legacy ?? null;

/** Money that went back to the buyer: successful refund transactions only (not failed, pending or restock-only). */
function moneyRefunds(r: RefundPayload) {
  return r.transactions.filter((t) => t.kind?.toLowerCase() === "refund" && t.status?.toLowerCase() === "success");
}

/**
 * The refund in minor units of the currency it is reported in: the shop currency whenever the
 * payload allows. Transactions are in the buyer's (presentment) currency: summed as they are only
 * when that is the shop currency; otherwise the refund's own shop-money breakdown is used (lines +
 * tax + shipping, less the adjustments that record a refund short of it; a shipping refund is a
 * negative adjustment when no shipping line says it). A refund with money returned but no breakdown
 * (no lines, shipping or adjustments) is reported as paid back, in the buyer's currency, rather
 * than as nothing; it then cannot count towards the order's refunded total, which is in the shop's.
 */
export function refundMoney(r: RefundPayload, currency: string | undefined): { minor: bigint; currency: string | undefined; inShopCurrency: boolean } {
  const refunds = moneyRefunds(r);
  const presentment = r.refund_line_items.map((l) => l.subtotal_set?.presentment_money?.currency_code).find(Boolean) ?? currency;
  if (refunds.every((t) => (t.currency ?? presentment) === currency)) {
    return { minor: sumMinor(refunds.map((t) => t.amount), currency), currency, inShopCurrency: true };
  }
  const shippingLines = r.refund_shipping_lines.flatMap((s) => [shop(s.subtotal_amount_set), shop(s.tax_amount_set)]);
  const adjustments = r.order_adjustments
    .filter((a) => !(r.refund_shipping_lines.length > 0 && a.kind === "shipping_refund"))
    .flatMap((a) => [shop(a.amount_set, a.amount), shop(a.tax_amount_set, a.tax_amount)]);
  const fromBreakdown =
    sumMinor(r.refund_line_items.flatMap((l) => [shop(l.subtotal_set, l.subtotal), shop(l.total_tax_set, l.total_tax)]), currency) +
    sumMinor(shippingLines, currency) -
    sumMinor(adjustments, currency);
  if (fromBreakdown > 0n) return { minor: fromBreakdown, currency, inShopCurrency: true };
  // Stryker disable next-line OptionalChaining: refunds is never empty here (every() of none is true above)
  const paidIn = refunds[0]?.currency ?? presentment;
  if (!refunds.every((t) => (t.currency ?? presentment) === paidIn)) {
    // Stryker disable next-line BooleanLiteral: the amount is 0, so whether it counts towards the order's total changes nothing
    return { minor: 0n, currency, inShopCurrency: true };
  }
  return { minor: sumMinor(refunds.map((t) => t.amount), paidIn), currency: paidIn, inShopCurrency: false };
}

export function mapRefund(r: RefundPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "order");
  const objectKey = orderObjectKey(r.order_id);
  if (prior?.refundIds.includes(r.id)) {
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "refund already synced" };
  }
  // A refund through the test gateway is a test order's, even when the order is not known as one.
  if (prior?.test || (r.transactions.length > 0 && r.transactions.every((t) => t.test === true))) {
    if (!prior) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: TEST_ORDER };
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: { ...prior, refundIds: [...prior.refundIds, r.id] }, skipped: TEST_ORDER };
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

  if (moneyRefunds(r).length === 0) {
    // order_refunded starts the service's automations: a refund email for money that never moved
    // would mislead the buyer, and Shopify's financial status has not changed either.
    return {
      objectKey,
      objectUpdatedAt: null,
      calls: [],
      nextState: { ...prior, refundIds: [...prior.refundIds, r.id] },
      skipped: "refund returned no money (restock only, or no successful refund transaction)",
    };
  }

  const currency = refundCurrency(r, prior.currency, ctx);
  const paidBack = refundMoney(r, currency);
  const refundedSoFar = toMinor(prior.refunded, currency) + (paidBack.inShopCurrency ? paidBack.minor : 0n);
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
      amount: amount(shop(l.subtotal_set, l.subtotal), currency),
      taxes: amount(shop(l.total_tax_set, l.total_tax), currency),
    }),
  );

  const refundEvent = customEventBody(ref, ctx.settings.source, {
    eventName: ORDER_REFUNDED_EVENT,
    properties: {
      order_id: r.order_id,
      refund_id: r.id,
      amount: fromMinor(paidBack.minor, paidBack.currency),
      currency: paidBack.currency,
      items,
      note: r.note,
      occurred_at: occurredAt,
    },
  });
  const orderUpdate = orderEventBody(ref, ctx.settings.source, { id: r.order_id, occurred_at: occurredAt, status, currency });

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
