/**
 * planWebhook: THE entry point. Shopify webhook (topic + body) → the service calls to make, the
 * state to remember, and abandonment-timer instructions. Pure: no I/O, no clock (ctx.now).
 */
import type { z } from "zod";
import { normalizeTopic, topicsWithRole, type SyncTopic } from "../topics";
import { parseShopifyJson } from "./json";
import {
  cartPayload,
  checkoutPayload,
  consentUpdatePayload,
  customerMergePayload,
  customerPayload,
  customerTagsPayload,
  deletePayload,
  orderEditedPayload,
  orderPayload,
  productPayload,
  purchasingSummaryPayload,
  refundPayload,
  segmentMembershipPayload,
  subscriptionBillingAttemptPayload,
  subscriptionBillingCyclePayload,
  subscriptionContractPayload,
} from "./payloads";
import type { SyncContext, SyncPlan } from "./mappers/common";
import {
  mapConsentUpdate,
  mapCustomerAccount,
  mapCustomerDelete,
  mapCustomerMerge,
  mapCustomerTags,
  mapCustomerUpsert,
  mapPurchasingSummary,
  mapSegmentMembership,
} from "./mappers/customers";
import { mapOrder, mapOrderDelete, mapOrderEdited } from "./mappers/orders";
import { mapRefund } from "./mappers/refunds";
import { mapProduct, mapProductDelete } from "./mappers/products";
import { mapCart } from "./mappers/carts";
import { mapCheckout, mapCheckoutDelete } from "./mappers/checkouts";
import { mapBillingAttempt, mapBillingCycleSkip, mapSubscription } from "./mappers/subscriptions";
import type { SubscriptionBillingAttemptPayload, SubscriptionContractPayload } from "./payloads";

export type {
  AbandonedCheckoutSnapshot,
  AbandonmentInstruction,
  ObjectSyncState,
  SyncContext,
  SyncPlan,
} from "./mappers/common";
export { abandonedCheckoutSnapshotSchema, objectSyncStateSchema, STORE_ACTOR_PREFIX, storeActorReferenceId } from "./mappers/common";
export { mapAbandonedCheckout } from "./mappers/checkouts";

/** A webhook body that does not match the topic's schema. `issues` are zod's. */
export class InvalidPayloadError extends Error {
  override readonly name = "InvalidPayloadError";
  constructor(
    readonly topic: string,
    readonly issues: z.core.$ZodIssue[],
  ) {
    const first = issues[0];
    const where = first ? `${first.path.join(".") || "(body)"}: ${first.message}` : "invalid";
    super(`Invalid ${topic} payload (${issues.length} issue${issues.length === 1 ? "" : "s"}; ${where})`);
  }
}

/** The topics planWebhook maps to service calls (the registry's "sync" role). */
export const HANDLED_TOPICS = topicsWithRole("sync");

export { normalizeTopic };

function parse<S extends z.ZodType>(schema: S, body: unknown, topic: string): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new InvalidPayloadError(topic, result.error.issues);
  return result.data;
}

type Planner = (body: unknown, ctx: SyncContext, topic: string) => SyncPlan;

/** A topic's planner: its payload schema and the mapper it feeds. */
function planner<S extends z.ZodType>(schema: S, map: (data: z.output<S>, ctx: SyncContext, topic: string) => SyncPlan): Planner {
  return (body, ctx, topic) => map(parse(schema, body, topic), ctx, topic);
}

/**
 * The handler of every sync topic of the registry (app/topics.ts), one line each; the type makes
 * a registered sync topic without a planner (or a planner for an unregistered one) a compile error.
 */
const PLANNERS: Record<SyncTopic, Planner> = {
  "customers/create": planner(customerPayload, (c, ctx) => mapCustomerUpsert("created", c, ctx)),
  "customers/update": planner(customerPayload, (c, ctx) => mapCustomerUpsert("updated", c, ctx)),
  "customers/delete": planner(customerPayload, mapCustomerDelete),
  "customers/enable": planner(customerPayload, (c, ctx) => mapCustomerAccount("enabled", c, ctx)),
  "customers/disable": planner(customerPayload, (c, ctx) => mapCustomerAccount("disabled", c, ctx)),
  "customers/merge": planner(customerMergePayload, mapCustomerMerge),
  "customers/purchasing_summary": planner(purchasingSummaryPayload, mapPurchasingSummary),
  "customer.tags_added": planner(customerTagsPayload, (p, ctx) => mapCustomerTags("add", p, ctx)),
  "customer.tags_removed": planner(customerTagsPayload, (p, ctx) => mapCustomerTags("remove", p, ctx)),
  "customer.joined_segment": planner(segmentMembershipPayload, (m, ctx) => mapSegmentMembership("joined", m, ctx)),
  "customer.left_segment": planner(segmentMembershipPayload, (m, ctx) => mapSegmentMembership("left", m, ctx)),
  "customers_email_marketing_consent/update": planner(consentUpdatePayload, mapConsentUpdate),
  "orders/create": planner(orderPayload, (o, ctx) => mapOrder("create", o, ctx)),
  "orders/updated": planner(orderPayload, (o, ctx) => mapOrder("updated", o, ctx)),
  "orders/paid": planner(orderPayload, (o, ctx) => mapOrder("paid", o, ctx)),
  "orders/fulfilled": planner(orderPayload, (o, ctx) => mapOrder("fulfilled", o, ctx)),
  "orders/partially_fulfilled": planner(orderPayload, (o, ctx) => mapOrder("fulfilled", o, ctx)),
  "orders/cancelled": planner(orderPayload, (o, ctx) => mapOrder("cancelled", o, ctx)),
  "orders/edited": planner(orderEditedPayload, mapOrderEdited),
  "orders/delete": planner(deletePayload, (d, ctx) => mapOrderDelete(d.id, ctx)),
  "refunds/create": planner(refundPayload, mapRefund),
  "products/create": planner(productPayload, (p, ctx) => mapProduct("create", p, ctx)),
  "products/update": planner(productPayload, (p, ctx) => mapProduct("update", p, ctx)),
  "products/delete": planner(deletePayload, (d, ctx) => mapProductDelete(d.id, ctx)),
  "carts/create": planner(cartPayload, (c, ctx) => mapCart("created", c, ctx)),
  "carts/update": planner(cartPayload, (c, ctx) => mapCart("updated", c, ctx)),
  "checkouts/create": planner(checkoutPayload, mapCheckout),
  "checkouts/update": planner(checkoutPayload, mapCheckout),
  "checkouts/delete": planner(checkoutPayload, mapCheckoutDelete),
  "subscription_contracts/create": planner(subscriptionContractPayload, contract),
  "subscription_contracts/update": planner(subscriptionContractPayload, contract),
  "subscription_contracts/activate": planner(subscriptionContractPayload, contract),
  "subscription_contracts/pause": planner(subscriptionContractPayload, contract),
  "subscription_contracts/cancel": planner(subscriptionContractPayload, contract),
  "subscription_contracts/expire": planner(subscriptionContractPayload, contract),
  "subscription_contracts/fail": planner(subscriptionContractPayload, contract),
  "subscription_billing_attempts/success": planner(subscriptionBillingAttemptPayload, billingAttempt),
  "subscription_billing_attempts/failure": planner(subscriptionBillingAttemptPayload, billingAttempt),
  "subscription_billing_attempts/challenged": planner(subscriptionBillingAttemptPayload, billingAttempt),
  "subscription_billing_cycles/skip": planner(subscriptionBillingCyclePayload, mapBillingCycleSkip),
};

function contract(s: SubscriptionContractPayload, ctx: SyncContext, topic: string): SyncPlan {
  return mapSubscription(topic, s, ctx);
}
function billingAttempt(a: SubscriptionBillingAttemptPayload, ctx: SyncContext, topic: string): SyncPlan {
  return mapBillingAttempt(topic, a, ctx);
}

/**
 * Plans one webhook delivery. `body` is the parsed JSON (ideally from parseShopifyJson) or the raw
 * text. Throws InvalidPayloadError for a body that does not validate; unknown topics plan nothing.
 */
export function planWebhook(topic: string, body: unknown, ctx: SyncContext): SyncPlan {
  const t = normalizeTopic(topic);
  const data = typeof body === "string" ? parseShopifyJson(body) : body;
  if (Object.hasOwn(PLANNERS, t)) return PLANNERS[t as SyncTopic](data, ctx, t);
  return {
    objectKey: `unhandled:${t}`,
    objectUpdatedAt: null,
    calls: [],
    nextState: null,
    skipped: `topic ${t} is not synced`,
  };
}
