/**
 * planWebhook: THE entry point. Shopify webhook (topic + body) → the service calls to make, the
 * state to remember, and abandonment-timer instructions. Pure: no I/O, no clock (ctx.now).
 */
import type { z } from "zod";
import { normalizeTopic, topicsWithRole } from "../topics";
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
import { mapBillingAttempt, mapBillingCycleSkip, mapSubscription, subscriptionStateOfTopic } from "./mappers/subscriptions";

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

/**
 * Plans one webhook delivery. `body` is the parsed JSON (ideally from parseShopifyJson) or the raw
 * text. Throws InvalidPayloadError for a body that does not validate; unknown topics plan nothing.
 */
export function planWebhook(topic: string, body: unknown, ctx: SyncContext): SyncPlan {
  const t = normalizeTopic(topic);
  const data = typeof body === "string" ? parseShopifyJson(body) : body;

  switch (t) {
    case "customers/create":
      return mapCustomerUpsert("created", parse(customerPayload, data, t), ctx);
    case "customers/update":
      return mapCustomerUpsert("updated", parse(customerPayload, data, t), ctx);
    case "customers/delete":
      return mapCustomerDelete(parse(customerPayload, data, t), ctx);
    case "customers/enable":
      return mapCustomerAccount("enabled", parse(customerPayload, data, t), ctx);
    case "customers/disable":
      return mapCustomerAccount("disabled", parse(customerPayload, data, t), ctx);
    case "customers/merge":
      return mapCustomerMerge(parse(customerMergePayload, data, t), ctx);
    case "customers/purchasing_summary":
      return mapPurchasingSummary(parse(purchasingSummaryPayload, data, t), ctx);
    case "customer.tags_added":
      return mapCustomerTags("add", parse(customerTagsPayload, data, t), ctx);
    case "customer.tags_removed":
      return mapCustomerTags("remove", parse(customerTagsPayload, data, t), ctx);
    case "customer.joined_segment":
      return mapSegmentMembership("joined", parse(segmentMembershipPayload, data, t), ctx);
    case "customer.left_segment":
      return mapSegmentMembership("left", parse(segmentMembershipPayload, data, t), ctx);
    case "customers_email_marketing_consent/update":
      return mapConsentUpdate(parse(consentUpdatePayload, data, t), ctx);

    case "orders/create":
      return mapOrder("create", parse(orderPayload, data, t), ctx);
    case "orders/updated":
      return mapOrder("updated", parse(orderPayload, data, t), ctx);
    case "orders/paid":
      return mapOrder("paid", parse(orderPayload, data, t), ctx);
    case "orders/fulfilled":
    case "orders/partially_fulfilled":
      return mapOrder("fulfilled", parse(orderPayload, data, t), ctx);
    case "orders/cancelled":
      return mapOrder("cancelled", parse(orderPayload, data, t), ctx);
    case "orders/edited":
      return mapOrderEdited(parse(orderEditedPayload, data, t), ctx);
    case "orders/delete":
      return mapOrderDelete(parse(deletePayload, data, t).id, ctx);
    case "refunds/create":
      return mapRefund(parse(refundPayload, data, t), ctx);

    case "products/create":
      return mapProduct("create", parse(productPayload, data, t), ctx);
    case "products/update":
      return mapProduct("update", parse(productPayload, data, t), ctx);
    case "products/delete":
      return mapProductDelete(parse(deletePayload, data, t).id, ctx);

    case "carts/create":
      return mapCart("created", parse(cartPayload, data, t), ctx);
    case "carts/update":
      return mapCart("updated", parse(cartPayload, data, t), ctx);
    case "checkouts/create":
    case "checkouts/update":
      return mapCheckout(parse(checkoutPayload, data, t), ctx);
    case "checkouts/delete":
      return mapCheckoutDelete(parse(checkoutPayload, data, t), ctx);
  }

  if (subscriptionStateOfTopic(t)) {
    if (t.startsWith("subscription_contracts/")) return mapSubscription(t, parse(subscriptionContractPayload, data, t), ctx);
    if (t.startsWith("subscription_billing_attempts/")) return mapBillingAttempt(t, parse(subscriptionBillingAttemptPayload, data, t), ctx);
    return mapBillingCycleSkip(parse(subscriptionBillingCyclePayload, data, t), ctx);
  }

  return {
    objectKey: `unhandled:${t}`,
    objectUpdatedAt: null,
    calls: [],
    nextState: null,
    skipped: `topic ${t} is not synced`,
  };
}
