/**
 * orders/create|updated|paid|fulfilled|cancelled|edited|delete → order events.
 *
 * Amounts use the shop-currency fields (total_price, total_tax…) with `currency`, exact.
 * `order/completed` is sent once, when settings.orderCompletedOn is met (tracked in nextState).
 */
import type { ServiceCall } from "../../services/marketing/schemas";
import type { ShopSettings } from "../settings";
import type { OrderEditedPayload, OrderPayload } from "../payloads";
import { amount, cleanEmail, compact, currencyOf, mapAddress, mapOrderLines, personRef, revenueHash } from "./common";
import { eventCall, orderEventBody } from "../event-bodies";
import { priorOf, type OrderSyncState, type SyncContext, type SyncPlan } from "../plan-contract";
import { sumMinor, fromMinor } from "../money";

export function orderObjectKey(orderId: string): string {
  return `order:${orderId}`;
}

/**
 * Shopify's `test: true` orders (test gateway, Bogus gateway) are not sent at all: an order event
 * starts purchase automations, and a test purchase is nobody's. Their refunds and edits neither.
 */
export const TEST_ORDER = "test order";

export type OrderTopicAction = "create" | "updated" | "paid" | "fulfilled" | "cancelled";

function emptyOrderState(): OrderSyncState {
  return {
    kind: "order",
    email: null,
    customerId: null,
    currency: null,
    status: null,
    total: null,
    refunded: "0",
    refundIds: [],
    paid: false,
    fulfilled: false,
    completed: false,
    created: false,
    deleted: false,
  };
}

const PAID_STATES = new Set(["paid", "partially_refunded", "refunded"]);
const NEVER_COMPLETE_STATES = new Set(["voided", "refunded"]);

/** One status string for the service: cancelled > refund states > fulfilment > payment. */
export function orderStatus(o: OrderPayload): string {
  if (o.cancelled_at) return "cancelled";
  const financial = o.financial_status?.toLowerCase() ?? null;
  if (financial === "refunded" || financial === "partially_refunded" || financial === "voided") return financial;
  const fulfillment = o.fulfillment_status?.toLowerCase() ?? null;
  if (fulfillment === "fulfilled") return "fulfilled";
  if (fulfillment === "partial") return "partially_fulfilled";
  return financial ?? "pending";
}

export function isPaid(o: OrderPayload): boolean {
  // Stryker disable next-line StringLiteral: no payment state is named "" (or any other text), so the default only has to miss
  return PAID_STATES.has(o.financial_status?.toLowerCase() ?? "");
}

/** Fulfilled, or nothing in it needs shipping (digital goods never get a fulfilment status). */
export function isFulfilled(o: OrderPayload): boolean {
  if (o.fulfillment_status?.toLowerCase() === "fulfilled") return true;
  return o.line_items.length > 0 && o.line_items.every((li) => li.requires_shipping === false);
}

export function completionRuleMet(rule: ShopSettings["orderCompletedOn"], paid: boolean, fulfilled: boolean): boolean {
  if (rule === "paid") return paid;
  if (rule === "fulfilled") return fulfilled;
  return paid && fulfilled;
}

function orderIdentity(o: OrderPayload, prior: OrderSyncState | null) {
  const email = cleanEmail(o.email) ?? cleanEmail(o.contact_email) ?? cleanEmail(o.customer?.email) ?? prior?.email ?? null;
  const customerId = o.customer?.id ?? prior?.customerId ?? null;
  return { email, customerId };
}

/** Checkout and cart tokens an order completes: their abandonment timers must stop. */
function completedTokens(o: OrderPayload): string[] {
  return [...new Set([o.checkout_token, o.cart_token].filter((t): t is string => !!t))];
}

function shippingMinor(o: OrderPayload, currency: string | undefined): bigint | null {
  const set = o.current_shipping_price_set?.shop_money?.amount ?? o.total_shipping_price_set?.shop_money?.amount;
  if (set) return sumMinor([set], currency);
  const lines = o.shipping_lines.filter((l) => !l.is_removed);
  if (lines.length === 0) return null;
  return sumMinor(lines.map((l) => l.discounted_price ?? l.price), currency);
}

/** The order body without identity/occurred_at (those vary per call). */
export function orderEventFields(o: OrderPayload, ctx: SyncContext) {
  const currency = currencyOf(o.currency, ctx.currency);
  const lines = mapOrderLines(o.line_items, currency, ctx.storefrontUrl);
  const shipping = shippingMinor(o, currency);
  const total = o.current_total_price ?? o.total_price;
  const fees = o.current_total_additional_fees_set?.shop_money?.amount ?? o.original_total_additional_fees_set?.shop_money?.amount;
  return compact({
    id: o.id,
    publicId: o.name ?? (o.order_number !== null ? String(o.order_number) : null),
    products: lines.products,
    currency,
    // The order as it stands after edits (current_*), else as placed: the total after discounts,
    // with shipping and taxes; fall back to Σ lines.
    total: total !== null ? amount(total, currency) : fromMinor(lines.totalMinor, currency),
    shipping: shipping !== null ? fromMinor(shipping, currency) : undefined,
    discounts: amount(o.current_total_discounts ?? o.total_discounts, currency),
    taxes: amount(o.current_total_tax ?? o.total_tax, currency),
    fees: amount(fees, currency),
    status: orderStatus(o),
    url: o.order_status_url,
    phone: o.phone ?? o.billing_address?.phone ?? undefined,
    billing_address: mapAddress(o.billing_address),
    shipping_address: mapAddress(o.shipping_address),
    payment_gateway: o.payment_gateway_names.find((g) => g.trim() !== ""),
    _ls: revenueHash(o.note_attributes),
  });
}

export function mapOrder(topic: OrderTopicAction, o: OrderPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "order");
  const objectKey = orderObjectKey(o.id);
  const tokens = completedTokens(o);
  const abandonment = tokens.length > 0 ? { abandonment: { action: "cancel" as const, keys: tokens } } : {};
  if (prior?.deleted) {
    return { objectKey, objectUpdatedAt: o.updated_at, calls: [], nextState: prior, skipped: "order was deleted", ...abandonment };
  }
  if (o.test === true || prior?.test) {
    const nextState = { ...(prior ?? emptyOrderState()), ...orderIdentity(o, prior), test: true };
    return { objectKey, objectUpdatedAt: o.updated_at, calls: [], nextState, skipped: TEST_ORDER, ...abandonment };
  }

  const { email, customerId } = orderIdentity(o, prior);
  const fields = orderEventFields(o, ctx);
  const base = prior ?? emptyOrderState();
  const paid = base.paid || isPaid(o);
  const fulfilled = base.fulfilled || isFulfilled(o);
  // Stryker disable next-line StringLiteral: no never-complete state is named "" (or any other text), so the default only has to miss
  const financial = o.financial_status?.toLowerCase() ?? "";
  const ruleMet =
    !base.completed &&
    !o.cancelled_at &&
    !NEVER_COMPLETE_STATES.has(financial) &&
    completionRuleMet(ctx.settings.orderCompletedOn, paid, fulfilled);
  // An order first seen through orders/updated|cancelled that is already complete is historical
  // (e.g. an old order edited after install): completing it now would start post-purchase flows
  // months late. create/paid/fulfilled topics witness the transition itself.
  const witnessed = prior !== null || topic === "create" || topic === "paid" || topic === "fulfilled";
  const completes = ruleMet && witnessed;

  const stateFields = {
    email,
    customerId,
    currency: fields.currency ?? base.currency,
    status: fields.status,
    total: o.total_price ?? base.total,
    paid,
    fulfilled,
    ...(fields.publicId !== undefined || base.name !== undefined ? { name: fields.publicId ?? base.name } : {}),
  };

  const ref = personRef(email, customerId);
  if (!ref) {
    // Flags are still tracked so a later delivery with an email completes correctly.
    return {
      objectKey,
      objectUpdatedAt: o.updated_at,
      calls: [],
      nextState: { ...base, ...stateFields },
      skipped: "order has neither an email nor a customer: no person to attach it to",
      ...abandonment,
    };
  }

  const bodyWith = (more: { status?: string; occurred_at: string }) => orderEventBody(ref, ctx.settings.source, { ...fields, ...more });
  const calls: ServiceCall[] = [];

  // orders/paid or orders/fulfilled can overtake orders/create (they are sent moments apart):
  // the first of them to arrive announces the order, and the late orders/create adds nothing.
  const announces = !base.created && (topic === "create" || (prior === null && (topic === "paid" || topic === "fulfilled")));
  if (announces) {
    // processed_at is the order's date in Shopify (an imported order's original date); created_at when the app made it.
    calls.push(eventCall("order", "created", bodyWith({ occurred_at: o.processed_at ?? o.created_at ?? ctx.now.toISOString() })));
  } else {
    // An update that changes nothing we send is dropped by the pipeline's content hash.
    // The first the service hears of an order (a history import, the reconcile sweep, an order
    // placed before the install) is the order itself: dated when it was placed, not last touched.
    const placed = prior === null ? (o.processed_at ?? o.created_at) : null;
    const at = topic === "cancelled" ? (o.cancelled_at ?? o.updated_at) : (placed ?? o.updated_at);
    const status = topic === "cancelled" ? "cancelled" : fields.status;
    calls.push(eventCall("order", "updated", bodyWith({ status, occurred_at: at ?? ctx.now.toISOString() })));
  }
  if (completes) {
    calls.push(eventCall("order", "completed", bodyWith({ status: "completed", occurred_at: o.updated_at ?? ctx.now.toISOString() })));
  }

  return {
    objectKey,
    objectUpdatedAt: o.updated_at,
    calls,
    nextState: { ...base, ...stateFields, completed: base.completed || ruleMet, created: base.created || announces },
    ...abandonment,
    ...(ruleMet && !witnessed ? { skipped: "order was already complete when first seen: order/completed not sent" } : {}),
  };
}

/** orders/delete: only the id arrives, the person comes from the prior state. */
export function mapOrderDelete(orderId: string, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "order");
  const objectKey = orderObjectKey(orderId);
  const nextState: OrderSyncState = { ...(prior ?? emptyOrderState()), deleted: true };
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: "already deleted" };
  if (prior?.test) return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: TEST_ORDER };
  const ref = personRef(prior?.email ?? null, prior?.customerId ?? null);
  if (!ref) return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: "order never synced: no person to attach the deletion to" };
  const body = orderEventBody(ref, ctx.settings.source, { id: orderId, occurred_at: ctx.now.toISOString() });
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("order", "deleted", body)], nextState };
}

/**
 * orders/edited: the payload is only the edit (line deltas), so this sends a light `order/updated`
 * with what the state knows; Shopify also sends orders/updated with the full edited order.
 */
export function mapOrderEdited(p: OrderEditedPayload, ctx: SyncContext): SyncPlan {
  const edit = p.order_edit;
  const prior = priorOf(ctx.prior, "order");
  const objectKey = orderObjectKey(edit.order_id);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "order was deleted" };
  if (prior?.test) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: TEST_ORDER };
  const ref = personRef(prior?.email ?? null, prior?.customerId ?? null);
  if (!prior || !ref) {
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "order never synced: no person to attach the edit to" };
  }
  const body = orderEventBody(ref, ctx.settings.source, {
    id: edit.order_id,
    occurred_at: edit.committed_at ?? edit.created_at ?? ctx.now.toISOString(),
    status: prior.status,
    currency: prior.currency,
  });
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("order", "updated", body)], nextState: prior };
}
