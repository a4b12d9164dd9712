/**
 * subscription_contracts/* → subscription/<action>.
 *
 * | topic    | action         | why |
 * |----------|----------------|-----|
 * | create   | created        | |
 * | update   | updated        | |
 * | activate | updated        | a paused contract resumes; "renewed" is a successful billing cycle (billing attempts), not this |
 * | pause    | updated        | the service has no "paused" action; status travels in the contract state |
 * | cancel   | cancelled      | |
 * | expire   | expired        | |
 * | fail     | renewal_failed | the contract failed because billing failed |
 *
 * The payload names the customer only by id, so the person is `referenceId` = customer id.
 */
import type { SubscriptionAction, SubscriptionEvent, SubscriptionLineItem } from "../../services/marketing/schemas";
import type { SubscriptionContractPayload } from "../payloads";
import { amount, compact, currencyOf, eventCall, personRef, priorOf, type SyncContext, type SyncPlan } from "./common";

export const SUBSCRIPTION_TOPIC_ACTIONS = {
  create: "created",
  update: "updated",
  activate: "updated",
  pause: "updated",
  cancel: "cancelled",
  expire: "expired",
  fail: "renewal_failed",
} as const satisfies Record<string, SubscriptionAction>;
export type SubscriptionTopic = keyof typeof SUBSCRIPTION_TOPIC_ACTIONS;

export function subscriptionObjectKey(id: string): string {
  return `subscription:${id}`;
}

function lineItems(s: SubscriptionContractPayload, currency: string | undefined): SubscriptionLineItem[] {
  return s.lines.map((l, i) => {
    const price = l.current_price === null ? null : typeof l.current_price === "string" ? l.current_price : l.current_price.amount;
    const image = typeof l.variant_image === "string" ? l.variant_image : (l.variant_image?.src ?? undefined);
    return compact({
      id: l.product_id ?? l.id ?? `line-${i + 1}`,
      name: l.title ?? l.variant_title ?? "Subscription item",
      variant_id: l.variant_id,
      image_url: image,
      price: amount(price, currency),
      quantity: l.quantity,
    }) as SubscriptionLineItem;
  });
}

export function mapSubscription(topic: SubscriptionTopic, s: SubscriptionContractPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "subscription");
  const objectKey = subscriptionObjectKey(s.id);
  const customerId = s.customer_id ?? prior?.customerId ?? null;
  const nextState = { kind: "subscription" as const, customerId, status: s.status ?? prior?.status ?? null };
  const ref = personRef(null, customerId);
  if (!ref) return { objectKey, objectUpdatedAt: s.updated_at, calls: [], nextState, skipped: "subscription contract names no customer" };
  const currency = currencyOf(s.currency_code, ctx.currency);
  const products = lineItems(s, currency);
  const body = compact({
    ...ref,
    source: ctx.settings.source,
    id: s.id,
    currency,
    products: products.length > 0 ? products : undefined,
  }) as SubscriptionEvent;
  return {
    objectKey,
    // Contract payloads carry no updated_at in the samples; null = apply in arrival order.
    objectUpdatedAt: s.updated_at,
    calls: [eventCall("subscription", SUBSCRIPTION_TOPIC_ACTIONS[topic], body)],
    nextState,
  };
}
