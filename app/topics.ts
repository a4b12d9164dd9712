/**
 * Every webhook topic the app subscribes to, in one place: what kind of object it concerns (the
 * counter bucket the health page shows) and what handles it.
 *
 * - sync: mapped to service calls by planWebhook, through its line in PLANNERS (app/sync/plan.ts);
 * - lifecycle: the app's own installation (uninstall, scope changes);
 * - compliance: the mandatory privacy topics (data request, customer and shop redaction);
 * - bulk: Admin bulk operations finishing (history backfill).
 *
 * shopify.app.toml subscribes to exactly these (a test holds the two together).
 */

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

interface TopicEntry {
  kind: ObjectKind;
  role: TopicRole;
  /** What the topic means, in the merchant's words (the admin pages show it instead of the topic). */
  label: string;
}

const sync = (kind: ObjectKind, label: string) => ({ kind, role: "sync", label }) as const satisfies TopicEntry;

export const TOPICS = {
  "customers/create": sync("customer", "New customer"),
  "customers/update": sync("customer", "Customer updated"),
  "customers/delete": sync("customer", "Customer deleted"),
  "customers/enable": sync("customer", "Customer account enabled"),
  "customers/disable": sync("customer", "Customer account disabled"),
  "customers_email_marketing_consent/update": sync("customer", "Email consent changed"),
  "customers/merge": sync("customer", "Customers merged"),
  "customers/purchasing_summary": sync("customer", "Customer purchase totals"),
  "customer.tags_added": sync("customer", "Customer tags added"),
  "customer.tags_removed": sync("customer", "Customer tags removed"),
  "customer.joined_segment": sync("customer", "Customer joined a segment"),
  "customer.left_segment": sync("customer", "Customer left a segment"),
  "orders/create": sync("order", "New order"),
  "orders/updated": sync("order", "Order updated"),
  "orders/paid": sync("order", "Order paid"),
  "orders/fulfilled": sync("order", "Order fulfilled"),
  "orders/partially_fulfilled": sync("order", "Order partly fulfilled"),
  "orders/cancelled": sync("order", "Order cancelled"),
  "orders/edited": sync("order", "Order edited"),
  "orders/delete": sync("order", "Order deleted"),
  "refunds/create": sync("order", "Refund"),
  "products/create": sync("product", "New product"),
  "products/update": sync("product", "Product updated"),
  "products/delete": sync("product", "Product deleted"),
  "carts/create": sync("cart", "New cart"),
  "carts/update": sync("cart", "Cart updated"),
  "checkouts/create": sync("checkout", "New checkout"),
  "checkouts/update": sync("checkout", "Checkout updated"),
  "checkouts/delete": sync("checkout", "Checkout deleted"),
  "subscription_contracts/create": sync("subscription", "New subscription"),
  "subscription_contracts/update": sync("subscription", "Subscription updated"),
  "subscription_contracts/activate": sync("subscription", "Subscription activated"),
  "subscription_contracts/pause": sync("subscription", "Subscription paused"),
  "subscription_contracts/cancel": sync("subscription", "Subscription cancelled"),
  "subscription_contracts/expire": sync("subscription", "Subscription expired"),
  "subscription_contracts/fail": sync("subscription", "Subscription failed"),
  "subscription_billing_attempts/success": sync("subscription", "Subscription renewed"),
  "subscription_billing_attempts/failure": sync("subscription", "Subscription payment failed"),
  "subscription_billing_attempts/challenged": sync("subscription", "Subscription payment needs the customer's confirmation"),
  "subscription_billing_cycles/skip": sync("subscription", "Subscription delivery skipped"),
  "app/uninstalled": { kind: "app", role: "lifecycle", label: "App uninstalled" },
  "app/scopes_update": { kind: "app", role: "lifecycle", label: "App permissions changed" },
  "customers/data_request": { kind: "privacy", role: "compliance", label: "Customer data request" },
  "customers/redact": { kind: "privacy", role: "compliance", label: "Customer erasure request" },
  "shop/redact": { kind: "privacy", role: "compliance", label: "Store erasure request" },
  "bulk_operations/finish": { kind: "bulk", role: "bulk", label: "Shopify export finished" },
} as const satisfies Record<string, TopicEntry>;

export type Topic = keyof typeof TOPICS;
/** The topics planWebhook maps to service calls; each has its planner in app/sync/plan.ts (PLANNERS). */
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

/** The registry entry of a topic the app subscribes to; undefined for any other. */
export function topicInfo(topic: string): TopicEntry | undefined {
  const t = normalizeTopic(topic);
  return isKnownTopic(t) ? TOPICS[t] : undefined;
}

export function topicsWithRole(role: TopicRole): Topic[] {
  return (Object.keys(TOPICS) as Topic[]).filter((t) => TOPICS[t].role === role);
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
