/**
 * Every webhook topic the app subscribes to, in one place: what kind of object it concerns (the
 * counter bucket the health page shows) and what handles it.
 *
 * - sync: mapped to service calls by planWebhook (app/sync);
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
}

const sync = (kind: ObjectKind): TopicEntry => ({ kind, role: "sync" });

export const TOPICS = {
  "customers/create": sync("customer"),
  "customers/update": sync("customer"),
  "customers/delete": sync("customer"),
  "customers/enable": sync("customer"),
  "customers/disable": sync("customer"),
  "customers_email_marketing_consent/update": sync("customer"),
  "orders/create": sync("order"),
  "orders/updated": sync("order"),
  "orders/paid": sync("order"),
  "orders/fulfilled": sync("order"),
  "orders/partially_fulfilled": sync("order"),
  "orders/cancelled": sync("order"),
  "orders/edited": sync("order"),
  "orders/delete": sync("order"),
  "refunds/create": sync("order"),
  "products/create": sync("product"),
  "products/update": sync("product"),
  "products/delete": sync("product"),
  "carts/create": sync("cart"),
  "carts/update": sync("cart"),
  "checkouts/create": sync("checkout"),
  "checkouts/update": sync("checkout"),
  "checkouts/delete": sync("checkout"),
  "subscription_contracts/create": sync("subscription"),
  "subscription_contracts/update": sync("subscription"),
  "subscription_contracts/activate": sync("subscription"),
  "subscription_contracts/pause": sync("subscription"),
  "subscription_contracts/cancel": sync("subscription"),
  "subscription_contracts/expire": sync("subscription"),
  "subscription_contracts/fail": sync("subscription"),
  "app/uninstalled": { kind: "app", role: "lifecycle" },
  "app/scopes_update": { kind: "app", role: "lifecycle" },
  "customers/data_request": { kind: "privacy", role: "compliance" },
  "customers/redact": { kind: "privacy", role: "compliance" },
  "shop/redact": { kind: "privacy", role: "compliance" },
  "bulk_operations/finish": { kind: "bulk", role: "bulk" },
} as const satisfies Record<string, TopicEntry>;

export type Topic = keyof typeof TOPICS;

/** "orders/create", "ORDERS/CREATE", "orders.create" (fixture file names) → "orders/create". */
export function normalizeTopic(topic: string): string {
  return topic.trim().toLowerCase().replace(/\./g, "/");
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
