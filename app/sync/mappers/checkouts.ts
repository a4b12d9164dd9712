/**
 * checkouts/create|update|delete → cart/updated + abandonment schedule/cancel.
 *
 * A checkout with an email is the moment a cart becomes recoverable: it is reported as
 * `cart/updated` (url = Shopify's abandoned_checkout_url) and the scheduler is asked to send one
 * `cart/abandoned` after settings.abandonmentDelayMinutes unless an order completes it first.
 * Checkout amounts are in the buyer's presentment currency.
 */
import type { CartEvent, ServiceCall } from "../../services/marketing/schemas";
import { fromMinor } from "../money";
import type { CheckoutPayload } from "../payloads";
import { cleanEmail, currencyOf, mapCartLines, personRef } from "./common";
import { cartEventBody, eventCall } from "../event-bodies";
import {
  abandonedCheckoutSnapshotSchema,
  priorOf,
  type AbandonedCheckoutSnapshot,
  type CheckoutSyncState,
  type SyncContext,
  type SyncPlan,
} from "../plan-contract";

export function checkoutObjectKey(tokenOrId: string): string {
  return `checkout:${tokenOrId}`;
}

/** The token a checkout is known by (its object key's id). */
export function checkoutKey(ch: CheckoutPayload): string {
  return (ch.token ?? ch.id ?? ch.cart_token) as string;
}

function tokensOf(ch: CheckoutPayload): string[] {
  return [...new Set([ch.token, ch.cart_token].filter((t): t is string => !!t))];
}

function closedState(prior: CheckoutSyncState | null, email: string | null): CheckoutSyncState {
  return { kind: "checkout", email: prior?.email ?? email, closed: true };
}

/** The data `mapAbandonedCheckout` needs; stored by the scheduler, so it is plain JSON. */
export function checkoutSnapshot(ch: CheckoutPayload, email: string, ctx: SyncContext): AbandonedCheckoutSnapshot {
  const currency = currencyOf(ch.presentment_currency, ch.currency, ctx.currency);
  const lines = mapCartLines(ch.line_items, currency, "checkout", ctx.storefrontUrl);
  return {
    token: checkoutKey(ch),
    cartToken: ch.cart_token,
    cartId: ch.cart_token ?? checkoutKey(ch),
    email,
    referenceId: ch.customer?.id ?? null,
    url: ch.abandoned_checkout_url,
    currency: currency ?? null,
    // One meaning of a cart's `total` whatever reports it: the lines after their discounts. Cart
    // webhooks carry no tax or shipping, so checkouts leave theirs out too (total_price is not used).
    total: fromMinor(lines.totalMinor, currency),
    totalProducts: lines.totalQuantity,
    products: lines.products,
    updatedAt: ch.updated_at,
  };
}

function cartBodyFrom(s: AbandonedCheckoutSnapshot, source: string, occurredAt: string): CartEvent {
  const ref = personRef(s.email, s.referenceId);
  if (!ref) throw new Error(`Checkout ${s.token} has no person to attach the cart event to`);
  return cartEventBody(ref, source, {
    // Cart token when known, so the web pixel's cart/created → cart/updated → cart/abandoned share one id.
    id: s.cartId,
    occurredAt,
    products: s.products,
    total: s.total,
    total_products: s.totalProducts,
    url: s.url,
    currency: s.currency,
    modified_at: s.updatedAt,
  });
}

export function mapCheckout(ch: CheckoutPayload, ctx: SyncContext): SyncPlan {
  const key = checkoutKey(ch);
  const objectKey = checkoutObjectKey(key);
  const prior = priorOf(ctx.prior, "checkout");
  const email = cleanEmail(ch.email) ?? cleanEmail(ch.customer?.email);
  const cancel = { action: "cancel" as const, keys: tokensOf(ch) };

  if (ch.completed_at || prior?.closed) {
    return {
      objectKey,
      objectUpdatedAt: ch.updated_at,
      calls: [],
      nextState: closedState(prior, email),
      abandonment: cancel,
      skipped: ch.completed_at ? "checkout completed" : "checkout already closed",
    };
  }
  if (!email) {
    return {
      objectKey,
      objectUpdatedAt: ch.updated_at,
      calls: [],
      nextState: prior,
      skipped: "checkout has no email yet: nothing to recover",
    };
  }

  const snapshot = checkoutSnapshot(ch, email, ctx);
  const body = cartBodyFrom(snapshot, ctx.settings.source, ch.updated_at ?? ctx.now.toISOString());
  // An unchanged checkout is dropped by the pipeline's content hash (the timer still restarts
  // only when the snapshot changed).
  const calls: ServiceCall[] = [eventCall("cart", "updated", body)];
  return {
    objectKey,
    objectUpdatedAt: ch.updated_at,
    calls,
    nextState: { kind: "checkout", email, closed: false },
    // Always handed over: the scheduler restarts the timer only when the snapshot changed.
    abandonment: { action: "schedule", key: snapshot.token, snapshot },
  };
}

export function mapCheckoutDelete(ch: CheckoutPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "checkout");
  return {
    objectKey: checkoutObjectKey(checkoutKey(ch)),
    objectUpdatedAt: null,
    calls: [],
    nextState: closedState(prior, null),
    abandonment: { action: "cancel", keys: [...new Set([...tokensOf(ch), ...(ch.id ? [ch.id] : [])])] },
    skipped: "checkout deleted: abandonment cancelled",
  };
}

/** The scheduler's call, after the delay: exactly one `cart/abandoned` for the snapshot. */
export function mapAbandonedCheckout(snapshot: unknown, ctx: Pick<SyncContext, "settings" | "now">): ServiceCall {
  const s = abandonedCheckoutSnapshotSchema.parse(withCartId(snapshot));
  return eventCall("cart", "abandoned", cartBodyFrom(s, ctx.settings.source, ctx.now.toISOString()));
}

/**
 * Timers scheduled before blank cart tokens were read as missing hold `cartId: ""` (and would fail
 * for ever): such a cart is named by its checkout token, as a new snapshot would be.
 */
function withCartId(snapshot: unknown): unknown {
  if (typeof snapshot !== "object" || snapshot === null) return snapshot;
  const s = snapshot as { cartId?: unknown; cartToken?: unknown; token?: unknown };
  if (typeof s.cartId !== "string" || s.cartId.trim() !== "") return snapshot;
  const cartToken = typeof s.cartToken === "string" && s.cartToken.trim() !== "" ? s.cartToken : null;
  return { ...s, cartToken, cartId: cartToken ?? s.token };
}
