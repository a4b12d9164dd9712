/**
 * Every webhook topic the app subscribes to, one line each: what kind of object it concerns (the
 * counter bucket the health page shows), its role, what it means in the merchant's words, and what
 * handles it.
 *
 * - sync: mapped to service calls by planWebhook through the line's planner (payload schema and
 *   mapper), and what it needs looked up when its object is unknown (app/backfill/lookup.server.ts);
 * - lifecycle: the app's own installation (uninstall, scope changes), acted on only once Shopify
 *   confirms it (app/shops/lifecycle.server.ts);
 * - compliance: the mandatory privacy topics (data request, customer and shop redaction);
 * - bulk: Admin bulk operations finishing (history backfill).
 *
 * Lifecycle and compliance lines list the body fields that name the shop (the webhook route
 * refuses a body naming another shop than the header). shopify.app.toml subscribes to these topics
 * but those marked `through: "admin api"`, which Shopify offers only to GraphQL subscriptions (its
 * topic metadata's available_on): the app subscribes to those per shop when it needs them
 * (app/segments/webhook-subscriptions.server.ts). test/foundation/topics.test.ts holds the registry,
 * the toml and Shopify's metadata together. Server-only: the planners pull in every mapper; the
 * admin pages get labels as strings from their loaders.
 */
import { planner, type PlanKeys, type Planner } from "./topic-planner";
import type { SyncContext, SyncPlan } from "./plan-contract";
import {
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
  type SubscriptionBillingAttemptPayload,
  type SubscriptionContractPayload,
} from "./payloads";
import {
  customerObjectKey,
  mapConsentUpdate,
  mapCustomerAccount,
  mapCustomerDelete,
  mapCustomerMerge,
  mapCustomerTags,
  mapCustomerUpsert,
  mapPurchasingSummary,
  mapSegmentMembership,
} from "./mappers/customers";
import { mapOrder, mapOrderDelete, mapOrderEdited, orderObjectKey } from "./mappers/orders";
import { mapRefund } from "./mappers/refunds";
import { mapProduct, mapProductDelete, productObjectKey } from "./mappers/products";
import { checkoutKey, checkoutObjectKey, mapCheckout, mapCheckoutDelete } from "./mappers/checkouts";
import { mapBillingAttempt, mapBillingCycleSkip, mapSubscription, subscriptionObjectKey } from "./mappers/subscriptions";

export type TopicRole = "sync" | "lifecycle" | "compliance" | "bulk";
export type ObjectKind =
  | "customer"
  | "order"
  | "product"
  | "cart"
  | "checkout"
  | "subscription"
  | "app"
  | "privacy"
  | "bulk"
  | "other";

/**
 * What a sync topic needs from the Admin API when its object is unknown to the app:
 * - "Order" / "Customer": the payload is not the object itself (a refund, a consent change); the
 *   object is fetched first and the delivery waits for it;
 * - "Customer without consent": the payload is the customer without its consent and tags (API
 *   2025-01 on); a customer first seen this way is fetched for them, and a failed fetch never
 *   holds the delivery;
 * - "Variants": the payload details the first 100 variants only (`variant_gids` names them all);
 *   the rest are read before it is planned, whether the product is known or not;
 * - "Contract contents": the payload (API 2026-04) has no lines, dates or amounts; the contract's
 *   are read before it is planned.
 * The last two complete the webhook itself (app/backfill/lookup.server.ts, completeWebhooks).
 */
export type Lookup = "Order" | "Customer" | "Customer without consent" | "Variants" | "Contract contents";

interface Facts {
  kind: ObjectKind;
  /** What the topic means, in the merchant's words (the admin pages show it instead of the topic). */
  label: string;
}
export interface SyncTopicEntry extends Facts {
  role: "sync";
  planner: Planner;
  lookup?: Lookup;
  /**
   * "admin api": not declared in shopify.app.toml (Shopify refuses it there); subscribed per shop
   * with webhookSubscriptionCreate while the app needs it.
   */
  through?: "admin api";
}
export interface ShopTopicEntry extends Facts {
  role: "lifecycle" | "compliance";
  /**
   * Top-level body fields that name the shop. A signed body is replayable with any header, so for
   * the topics that act on a whole shop or a person each one present must agree with the header
   * (app/webhooks/receive.server.ts).
   */
  bodyShopFields: readonly string[];
}
export interface BulkTopicEntry extends Facts {
  role: "bulk";
}
export type TopicEntry = SyncTopicEntry | ShopTopicEntry | BulkTopicEntry;

const sync = (kind: ObjectKind, label: string, plan: Planner, lookup?: Lookup): SyncTopicEntry =>
  lookup ? { kind, role: "sync", label, planner: plan, lookup } : { kind, role: "sync", label, planner: plan };
const throughAdminApi = (entry: SyncTopicEntry): SyncTopicEntry => ({ ...entry, through: "admin api" });
const lifecycle = (label: string, bodyShopFields: readonly string[]) => ({ kind: "app", role: "lifecycle", label, bodyShopFields }) as const;
const compliance = (label: string) => ({ kind: "privacy", role: "compliance", label, bodyShopFields: ["shop_domain"] }) as const;

/*
 * The keys each mapper's plan has, read from the payload alone (test/sync/plan-keys.test.ts holds
 * them to the mappers): planning locks and loads them, then runs the mapper once.
 */
const customer = (id: string): PlanKeys => ({ objectKey: customerObjectKey(id) });
const order = (id: string): PlanKeys => ({ objectKey: orderObjectKey(id) });
const product = (id: string): PlanKeys => ({ objectKey: productObjectKey(id) });
const checkout = (ch: Parameters<typeof checkoutKey>[0]): PlanKeys => ({ objectKey: checkoutObjectKey(checkoutKey(ch)) });
const subscription = (id: string): PlanKeys => ({ objectKey: subscriptionObjectKey(id) });
// A segment the shop does not mirror is planned as nothing, under the segment's key.
const membership = (p: { segment_id: string; customer_id: string }, ctx: Omit<SyncContext, "prior">): PlanKeys =>
  ctx.segmentTags?.[p.segment_id] ? customer(p.customer_id) : { objectKey: `segment:${p.segment_id}` };

const contract = planner(
  subscriptionContractPayload,
  (s: SubscriptionContractPayload, ctx: SyncContext, topic: string): SyncPlan => mapSubscription(topic, s, ctx),
  (s) => ({ ...subscription(s.id), customerId: s.customer_id ?? null }),
);
const billingAttempt = planner(
  subscriptionBillingAttemptPayload,
  (a: SubscriptionBillingAttemptPayload, ctx: SyncContext, topic: string) => mapBillingAttempt(topic, a, ctx),
  (a) => subscription(a.subscription_contract_id),
);

/** Adding a topic: one line here, and the topic in shopify.app.toml (or `throughAdminApi`, where Shopify's metadata says graphql only). */
export const TOPICS = {
  "customers/create": sync("customer", "New customer", planner(customerPayload, (c, ctx) => mapCustomerUpsert("created", c, ctx), (c) => customer(c.id)), "Customer without consent"),
  "customers/update": sync("customer", "Customer updated", planner(customerPayload, (c, ctx) => mapCustomerUpsert("updated", c, ctx), (c) => customer(c.id)), "Customer without consent"),
  "customers/delete": sync("customer", "Customer deleted", planner(customerPayload, mapCustomerDelete, (c) => customer(c.id))),
  "customers/enable": sync("customer", "Customer account enabled", planner(customerPayload, (c, ctx) => mapCustomerAccount("enabled", c, ctx), (c) => customer(c.id))),
  "customers/disable": sync("customer", "Customer account disabled", planner(customerPayload, (c, ctx) => mapCustomerAccount("disabled", c, ctx), (c) => customer(c.id))),
  "customers_email_marketing_consent/update": sync("customer", "Email consent changed", planner(consentUpdatePayload, mapConsentUpdate, (p) => customer(p.customer_id)), "Customer"),
  "customers/merge": sync("customer", "Customers merged", planner(customerMergePayload, mapCustomerMerge, (p) => ({ ...customer(p.admin_graphql_api_customer_deleted_id), relatedKeys: [customerObjectKey(p.admin_graphql_api_customer_kept_id)] }))),
  "customers/purchasing_summary": sync("customer", "Customer purchase totals", planner(purchasingSummaryPayload, mapPurchasingSummary, (p) => customer(p.customerId)), "Customer"),
  "customer.tags_added": sync("customer", "Customer tags added", planner(customerTagsPayload, (p, ctx) => mapCustomerTags("add", p, ctx), (p) => customer(p.customerId)), "Customer"),
  "customer.tags_removed": sync("customer", "Customer tags removed", planner(customerTagsPayload, (p, ctx) => mapCustomerTags("remove", p, ctx), (p) => customer(p.customerId)), "Customer"),
  // Looked up only for segments the shop mirrors: any other segment's plan names no customer.
  // Subscribed while the shop mirrors a segment (app/segments/webhook-subscriptions.server.ts).
  "customer.joined_segment": throughAdminApi(sync("customer", "Customer joined a segment", planner(segmentMembershipPayload, (m, ctx) => mapSegmentMembership("joined", m, ctx), membership), "Customer")),
  "customer.left_segment": throughAdminApi(sync("customer", "Customer left a segment", planner(segmentMembershipPayload, (m, ctx) => mapSegmentMembership("left", m, ctx), membership), "Customer")),
  "orders/create": sync("order", "New order", planner(orderPayload, (o, ctx) => mapOrder("create", o, ctx), (o) => order(o.id))),
  "orders/updated": sync("order", "Order updated", planner(orderPayload, (o, ctx) => mapOrder("updated", o, ctx), (o) => order(o.id))),
  "orders/paid": sync("order", "Order paid", planner(orderPayload, (o, ctx) => mapOrder("paid", o, ctx), (o) => order(o.id))),
  "orders/fulfilled": sync("order", "Order fulfilled", planner(orderPayload, (o, ctx) => mapOrder("fulfilled", o, ctx), (o) => order(o.id))),
  "orders/partially_fulfilled": sync("order", "Order partly fulfilled", planner(orderPayload, (o, ctx) => mapOrder("fulfilled", o, ctx), (o) => order(o.id))),
  "orders/cancelled": sync("order", "Order cancelled", planner(orderPayload, (o, ctx) => mapOrder("cancelled", o, ctx), (o) => order(o.id))),
  "orders/edited": sync("order", "Order edited", planner(orderEditedPayload, mapOrderEdited, (p) => order(p.order_edit.order_id)), "Order"),
  "orders/delete": sync("order", "Order deleted", planner(deletePayload, (d, ctx) => mapOrderDelete(d.id, ctx), (d) => order(d.id))),
  "refunds/create": sync("order", "Refund", planner(refundPayload, mapRefund, (r) => order(r.order_id)), "Order"),
  "products/create": sync("product", "New product", planner(productPayload, (p, ctx) => mapProduct("create", p, ctx), (p) => product(p.id)), "Variants"),
  "products/update": sync("product", "Product updated", planner(productPayload, (p, ctx) => mapProduct("update", p, ctx), (p) => product(p.id)), "Variants"),
  "products/delete": sync("product", "Product deleted", planner(deletePayload, (d, ctx) => mapProductDelete(d.id, ctx), (d) => product(d.id))),
  "checkouts/create": sync("checkout", "New checkout", planner(checkoutPayload, mapCheckout, checkout)),
  "checkouts/update": sync("checkout", "Checkout updated", planner(checkoutPayload, mapCheckout, checkout)),
  "checkouts/delete": sync("checkout", "Checkout deleted", planner(checkoutPayload, mapCheckoutDelete, checkout)),
  "subscription_contracts/create": sync("subscription", "New subscription", contract, "Contract contents"),
  "subscription_contracts/update": sync("subscription", "Subscription updated", contract, "Contract contents"),
  "subscription_contracts/activate": sync("subscription", "Subscription activated", contract, "Contract contents"),
  "subscription_contracts/pause": sync("subscription", "Subscription paused", contract, "Contract contents"),
  "subscription_contracts/cancel": sync("subscription", "Subscription cancelled", contract, "Contract contents"),
  "subscription_contracts/expire": sync("subscription", "Subscription expired", contract, "Contract contents"),
  "subscription_contracts/fail": sync("subscription", "Subscription failed", contract, "Contract contents"),
  "subscription_billing_attempts/success": sync("subscription", "Subscription renewed", billingAttempt),
  "subscription_billing_attempts/failure": sync("subscription", "Subscription payment failed", billingAttempt),
  "subscription_billing_attempts/challenged": sync("subscription", "Subscription payment needs the customer's confirmation", billingAttempt),
  "subscription_billing_cycles/skip": sync("subscription", "Subscription delivery skipped", planner(subscriptionBillingCyclePayload, mapBillingCycleSkip, (c) => subscription(c.subscription_contract_id))),
  "app/uninstalled": lifecycle("App uninstalled", ["myshopify_domain", "domain"]),
  "app/scopes_update": lifecycle("App permissions changed", ["shop_domain", "myshopify_domain", "domain"]),
  "customers/data_request": compliance("Customer data request"),
  "customers/redact": compliance("Customer erasure request"),
  "shop/redact": compliance("Store erasure request"),
  "bulk_operations/finish": { kind: "bulk", role: "bulk", label: "Shopify export finished" },
} as const satisfies Record<string, TopicEntry>;

export type Topic = keyof typeof TOPICS;
/** The topics planWebhook maps to service calls, each through its line's planner. */
export type SyncTopic = { [T in Topic]: (typeof TOPICS)[T]["role"] extends "sync" ? T : never }[Topic];

/**
 * "orders/create", "ORDERS/CREATE", "orders.create" (fixture file names) → "orders/create". A topic
 * Shopify itself names with a dot (customer.tags_added) stays as it is.
 */
export function normalizeTopic(topic: string): string {
  const t = topic.trim().toLowerCase();
  return Object.hasOwn(TOPICS, t) ? t : t.replace(/\./g, "/");
}

export function isKnownTopic(topic: string): topic is Topic {
  return Object.hasOwn(TOPICS, topic);
}

/** The registry line of a topic the app subscribes to; undefined for any other. */
export function topicInfo(topic: string): TopicEntry | undefined {
  const t = normalizeTopic(topic);
  return isKnownTopic(t) ? TOPICS[t] : undefined;
}

export function topicsWithRole(role: TopicRole): Topic[] {
  return (Object.keys(TOPICS) as Topic[]).filter((t) => TOPICS[t].role === role);
}

/** The topics subscribed per shop through the Admin API, not in shopify.app.toml. */
export function topicsThroughAdminApi(): Topic[] {
  return (Object.keys(TOPICS) as Topic[]).filter((t) => (TOPICS[t] as TopicEntry & { through?: string }).through === "admin api");
}

/** The body fields that name the shop in a lifecycle or compliance topic's body; none for any other. */
export function bodyShopFields(topic: string): readonly string[] {
  const info = topicInfo(topic);
  return info?.role === "lifecycle" || info?.role === "compliance" ? info.bodyShopFields : [];
}

/** "customers/create" → "New customer"; a topic the app does not subscribe to shows as it is. */
export function topicLabel(topic: string): string {
  return topicInfo(topic)?.label ?? topic;
}

// Object keys are "<kind>:<id>" (customer:123, checkout:abc, unhandled:<topic>).
const OBJECT_KEY_KINDS: Record<string, ObjectKind> = {
  customer: "customer",
  order: "order",
  product: "product",
  cart: "cart",
  checkout: "checkout",
  subscription: "subscription",
};

/**
 * Counter bucket of a topic or an object key: customers/update → customer, checkout:abc →
 * checkout. Anything else counts as "other".
 */
export function kindOf(topicOrKey: string): ObjectKind {
  const info = topicInfo(topicOrKey);
  if (info) return info.kind;
  return OBJECT_KEY_KINDS[topicOrKey.split(":")[0]] ?? "other";
}
