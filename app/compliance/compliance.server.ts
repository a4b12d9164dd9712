import { z } from "zod";
import type { SqlQueryable } from "../db/migrate.server";
import type { ServiceCall } from "../services/marketing/schemas";
import type { ShopSettings } from "../sync/settings";
import { CALL_STATUS } from "../pipeline/status";
import { parseShopifyJson } from "../sync/json";

/** A delivery of one of the registry's "compliance" topics, as the planner hands it over. */
export interface ComplianceDelivery {
  id: string;
  shop: string;
  topic: string;
  /** The parsed body (lossless ids as strings). */
  body: unknown;
  triggeredAt: Date | null;
}

export interface ComplianceResult {
  /** handled: the request was carried out; ignored: nothing to do; invalid: the body was refused. */
  outcome: "handled" | "ignored" | "invalid";
  detail: string;
  /** Service calls to queue (for example the person's deletion), keyed by the object they concern. */
  calls: { objectKey: string; call: ServiceCall }[];
}

export const shopifyId = z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,30}$/)]).transform(String);
const shopDomain = z.string().max(255);
const customerRequestSchema = z.object({
  shop_domain: shopDomain,
  customer: z.object({
    id: shopifyId,
    email: z.string().max(320).nullish(),
    phone: z.string().max(64).nullish(),
  }),
  orders_to_redact: z.array(shopifyId).max(100_000).nullish(),
  orders_requested: z.array(shopifyId).max(100_000).nullish(),
});
const shopRedactSchema = z.object({ shop_domain: shopDomain });

/** Who a customer request is about: what the app's rows can be matched on. */
export interface CustomerRef {
  id: string;
  email?: string | null;
  phone?: string | null;
  orderIds?: string[];
  /** The customer's subscription contracts: found in the app's own rows (Shopify's requests do not list them). */
  subscriptionIds?: string[];
}

/**
 * customers/data_request, customers/redact, shop/redact. Runs inside the planning transaction, so
 * what it deletes or records commits together with the delivery's outcome. Every request is
 * idempotent: a repeat finds nothing more to delete (the service deletion is repeated, and a
 * person already gone is not an error there).
 */
export async function handleCompliance(
  tx: SqlQueryable,
  delivery: ComplianceDelivery,
  settings: ShopSettings,
): Promise<ComplianceResult> {
  const none = { calls: [] };
  const schema = delivery.topic === "shop/redact" ? shopRedactSchema : customerRequestSchema;
  const parsed = schema.safeParse(delivery.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { outcome: "invalid", detail: `${delivery.topic}: ${issue.path.join(".") || "body"} ${issue.message}`, ...none };
  }
  if (parsed.data.shop_domain.toLowerCase() !== delivery.shop) {
    return { outcome: "invalid", detail: `${delivery.topic}: the body names another shop`, ...none };
  }

  if (delivery.topic === "shop/redact") {
    // Shopify asks 48 hours after an uninstall. A shop that is installed (again) keeps its data:
    // purging would also drop its key and its queue, and break a live installation.
    const [installed] = await tx.query(`SELECT 1 FROM "Shop" WHERE domain = $1 AND "uninstalledAt" IS NULL`, [delivery.shop]);
    if (installed) return { outcome: "ignored", detail: "shop/redact: the shop is installed; nothing was deleted", ...none };
    const counts = await purgeShop(tx, delivery.shop);
    return { outcome: "handled", detail: `shop redacted: ${describeCounts(counts)}`, ...none };
  }

  const body = parsed.data as z.output<typeof customerRequestSchema>;
  const customer: CustomerRef = {
    id: body.customer.id,
    email: body.customer.email ?? (await knownEmail(tx, delivery.shop, body.customer.id)),
    phone: body.customer.phone,
    orderIds: body.orders_to_redact ?? body.orders_requested ?? [],
  };
  if (delivery.topic === "customers/data_request") {
    const found = await exportCustomer(tx, delivery.shop, customer, { excludeDelivery: delivery.id });
    return {
      outcome: "handled",
      detail: `data request: ${found.rowCount} rows stored about customer ${customer.id}; download the export from the Privacy page`,
      ...none,
    };
  }
  if (delivery.topic === "customers/redact") {
    const counts = await redactCustomer(tx, delivery.shop, customer, delivery.id);
    const calls =
      settings.eraseContactOnRedact && customer.email && !(await deletionQueued(tx, delivery.shop, customer.id))
        ? [{ objectKey: `customer:${customer.id}`, call: { op: "person.delete", idOrEmail: customer.email } as ServiceCall }]
        : [];
    return {
      outcome: "handled",
      detail: `customer redacted: ${describeCounts(counts)}${calls.length ? "; deletion in the service queued" : "; service contact kept (the merchant's choice on the Privacy page)"}`,
      calls,
    };
  }
  return { outcome: "ignored", detail: `${delivery.topic}: not a compliance topic`, ...none };
}

/** A repeated request must not send a second deletion (the service answers 404 to it). */
async function deletionQueued(tx: SqlQueryable, shop: string, id: string): Promise<boolean> {
  const rows = await tx.query(
    `SELECT 1 FROM "OutboundCall" WHERE shop = $1 AND "objectKey" = $2 AND call->>'op' = 'person.delete' AND status <> '${CALL_STATUS.dead}' LIMIT 1`,
    [shop, `customer:${id}`],
  );
  return rows.length > 0;
}

/** The email the app last knew for a customer (a redact body may omit it). */
export async function knownEmail(tx: SqlQueryable, shop: string, id: string): Promise<string | null> {
  const rows = await tx.query<{ email: string | null }>(
    `SELECT state->>'email' AS email FROM "ObjectState" WHERE shop = $1 AND "objectKey" = $2`,
    [shop, `customer:${id}`],
  );
  return rows[0]?.email ?? null;
}

/**
 * Completes a request's reference from the app's own rows: the customer's subscription contracts
 * (their state names the customer only by `customerId`; billing-attempt bodies name only the
 * contract) and the orders the app holds for them, which Shopify's request may not list.
 */
export async function resolveCustomer(db: SqlQueryable, shop: string, c: CustomerRef): Promise<CustomerRef> {
  const gid = `gid://shopify/Customer/${c.id}`;
  const owned = await db.query<{ objectKey: string }>(
    `SELECT "objectKey" FROM "ObjectState" WHERE shop = $1 AND ("objectKey" LIKE 'subscription:%' OR "objectKey" LIKE 'order:%') AND state->>'customerId' = $2`,
    [shop, c.id],
  );
  // A contract whose state is gone (or never written) is still named in its own deliveries.
  const bodies = await db.query<{ rawBody: string }>(
    `SELECT "rawBody" FROM "WebhookDelivery" WHERE shop = $1 AND topic LIKE 'subscription_contracts/%' AND strpos("rawBody", $2) > 0`,
    [shop, `"${gid}"`],
  );
  const subscriptions = new Set(c.subscriptionIds ?? []);
  const orders = new Set(c.orderIds ?? []);
  for (const { objectKey } of owned) {
    const [kind, id] = [objectKey.slice(0, objectKey.indexOf(":")), objectKey.slice(objectKey.indexOf(":") + 1)];
    (kind === "order" ? orders : subscriptions).add(id);
  }
  for (const { rawBody } of bodies) {
    const contract = contractOf(rawBody, gid);
    if (contract) subscriptions.add(contract);
  }
  return { ...c, orderIds: [...orders], subscriptionIds: [...subscriptions] };
}

const contractBody = z.object({ id: shopifyId, admin_graphql_api_customer_id: z.string().nullish() });
function contractOf(rawBody: string, gid: string): string | undefined {
  try {
    const parsed = contractBody.safeParse(parseShopifyJson(rawBody));
    return parsed.success && parsed.data.admin_graphql_api_customer_id === gid ? parsed.data.id : undefined;
  } catch {
    return undefined;
  }
}

// What ties a row to a customer: the object keys of the customer, their orders and contracts;
// their Admin API ids (every Shopify body carries admin_graphql_api_id of the customer, order or
// contract), their email and phone; and the fields that name them by number.
function matchParams(shop: string, c: CustomerRef): unknown[] {
  const orders = c.orderIds ?? [];
  const contracts = c.subscriptionIds ?? [];
  const strings = [
    `gid://shopify/Customer/${c.id}`,
    ...orders.map((o) => `gid://shopify/Order/${o}`),
    ...contracts.map((s) => `gid://shopify/SubscriptionContract/${s}`),
    ...(c.email ? [c.email] : []),
    ...(c.phone ? [c.phone] : []),
  ].map((v) => v.toLowerCase());
  return [shop, [`customer:${c.id}`, ...orders.map((o) => `order:${o}`), ...contracts.map((s) => `subscription:${s}`)], strings, c.id, orders, contracts];
}
// A gid, an email or a phone counts only as a whole JSON string ("…" with its quotes): as a
// substring, ann@example.com would match joann@example.com and Customer/1001 would match
// Customer/10015. Fields that name the customer, an order or a contract only by number count too,
// the number whole ("…"? then a non-digit): Shopify's customer_id, order_id, origin_order_id,
// subscription_contract_id (refunds, fulfillments, contracts, billing attempts) and the app's own
// customerId (a contract's state), referenceId (a call for a customer known by id only),
// subscription_id (a contract's custom events).
const NUMBERED = {
  customer: `"(customer_id|customerId|referenceId)"\\s*:\\s*"?`,
  order: `"(order_id|origin_order_id|orderId)"\\s*:\\s*"?`,
  contract: `"(subscription_contract_id|subscription_id)"\\s*:\\s*"?`,
};
const mentions = (column: string) =>
  `(EXISTS (SELECT 1 FROM unnest($3::text[]) g WHERE strpos(lower(${column}), '"' || g || '"') > 0)
    OR ${column} ~ ('${NUMBERED.customer}' || $4::text || '([^0-9]|$)')
    OR EXISTS (SELECT 1 FROM unnest($5::text[]) o WHERE ${column} ~ ('${NUMBERED.order}' || o || '([^0-9]|$)'))
    OR EXISTS (SELECT 1 FROM unnest($6::text[]) s WHERE ${column} ~ ('${NUMBERED.contract}' || s || '([^0-9]|$)')))`;
// Every statement binds all six parameters; this names them all (PostgreSQL refuses unused ones).
const ALL = `num_nonnulls($1::text, $2::text[], $3::text[], $4::text, $5::text[], $6::text[]) >= 0`;
const MATCH = {
  ObjectState: `${ALL} AND shop = $1 AND ("objectKey" = ANY($2::text[]) OR ${mentions("state::text")})`,
  OutboundCall: `${ALL} AND shop = $1 AND ("objectKey" = ANY($2::text[]) OR ${mentions("call::text")})`,
  AbandonmentTimer: `${ALL} AND shop = $1 AND ${mentions("snapshot::text")}`,
  CompletedCheckout: `${ALL} AND shop = $1 AND ("orderId" = ANY($2::text[]) OR "orderId" = ANY($5::text[]))`,
  WebhookDelivery: `${ALL} AND shop = $1 AND ${mentions('"rawBody"')}`,
} as const;

export interface CustomerExport {
  shop: string;
  customer: CustomerRef;
  generatedAt: string;
  rowCount: number;
  objectStates: Record<string, unknown>[];
  outboundCalls: Record<string, unknown>[];
  abandonmentTimers: Record<string, unknown>[];
  completedCheckouts: Record<string, unknown>[];
  webhookDeliveries: Record<string, unknown>[];
}

/**
 * Everything the app stores about one customer of a shop, for a data request: assembled on demand
 * from the live rows (no copy of the personal data is kept for it).
 */
export async function exportCustomer(
  db: SqlQueryable,
  shop: string,
  customer: CustomerRef,
  options: { excludeDelivery?: string } = {},
): Promise<CustomerExport> {
  customer = await resolveCustomer(db, shop, customer);
  const p = matchParams(shop, customer);
  const objectStates = await db.query(
    `SELECT "objectKey", "lastUpdatedAt", state, "updatedAt" FROM "ObjectState" WHERE ${MATCH.ObjectState} ORDER BY "objectKey"`,
    p,
  );
  const outboundCalls = await db.query(
    `SELECT id::text AS id, "objectKey", kind, call, status, attempts, "lastError", "createdAt", "deliveredAt" FROM "OutboundCall" WHERE ${MATCH.OutboundCall} ORDER BY id`,
    p,
  );
  const abandonmentTimers = await db.query(
    `SELECT "checkoutToken", "cartToken", "dueAt", snapshot, status FROM "AbandonmentTimer" WHERE ${MATCH.AbandonmentTimer} ORDER BY "checkoutToken"`,
    p,
  );
  const completedCheckouts = await db.query(
    `SELECT token, "orderId", "completedAt" FROM "CompletedCheckout" WHERE ${MATCH.CompletedCheckout} ORDER BY token`,
    p,
  );
  const webhookDeliveries = await db.query(
    `SELECT id, topic, "eventId", "receivedAt", outcome, "rawBody" FROM "WebhookDelivery"
      WHERE ${MATCH.WebhookDelivery} AND id <> $7 ORDER BY "receivedAt", id`,
    [...p, options.excludeDelivery ?? ""],
  );
  const parts = { objectStates, outboundCalls, abandonmentTimers, completedCheckouts, webhookDeliveries };
  return {
    shop,
    customer,
    generatedAt: new Date().toISOString(),
    rowCount: Object.values(parts).reduce((n, rows) => n + rows.length, 0),
    ...parts,
  };
}

/**
 * customers/redact: every row about the customer goes — object state, queued and dead calls, timers,
 * completed-checkout markers, raw bodies. A call a worker is sending right now is left to finish
 * (deleting it would let the service deletion overtake it; retention removes its row within 14
 * days, inside the 30 Shopify allows), and earlier deletions of the person
 * stay (the email they carry is what was erased, and a repeat must not send a second one); the
 * request's own body is emptied.
 */
export async function redactCustomer(tx: SqlQueryable, shop: string, customer: CustomerRef, requestId: string): Promise<Record<string, number>> {
  customer = await resolveCustomer(tx, shop, customer);
  const p = matchParams(shop, customer);
  const count = async (sql: string, params: unknown[]) => (await tx.query(`${sql} RETURNING 1`, params)).length;
  const counts = {
    ObjectState: await count(`DELETE FROM "ObjectState" WHERE ${MATCH.ObjectState}`, p),
    OutboundCall: await count(`DELETE FROM "OutboundCall" WHERE ${MATCH.OutboundCall} AND status <> '${CALL_STATUS.running}' AND call->>'op' IS DISTINCT FROM 'person.delete'`, p),
    AbandonmentTimer: await count(`DELETE FROM "AbandonmentTimer" WHERE ${MATCH.AbandonmentTimer}`, p),
    CompletedCheckout: await count(`DELETE FROM "CompletedCheckout" WHERE ${MATCH.CompletedCheckout}`, p),
    WebhookDelivery: await count(`DELETE FROM "WebhookDelivery" WHERE ${MATCH.WebhookDelivery} AND id <> $7`, [...p, requestId]),
    // Which service signup became this customer (app/signups); the tombstone below keeps the sweep from creating it again.
    SignupCustomer: await count(`DELETE FROM "SignupCustomer" WHERE shop = $1 AND ("customerId" = $2 OR email = lower($3))`, [shop, customer.id, customer.email ?? ""]),
  };
  await tx.query(`UPDATE "WebhookDelivery" SET "rawBody" = '{"redacted":true}' WHERE id = $1`, [requestId]);
  // The tombstone (hashes only): a history import whose export predates this erasure must not
  // record the customer again (the trigger of migration 202611261500_erased_customers).
  const refs = [`customer:${customer.id}`, ...(customer.orderIds ?? []).map((o) => `order:${o}`), ...(customer.email ? [`email:${customer.email.toLowerCase()}`] : [])];
  await tx.query(
    `INSERT INTO "ErasedReference" (shop, ref) SELECT $1, erased_reference_hash($1, r) FROM unnest($2::text[]) AS r
     ON CONFLICT (shop, ref) DO UPDATE SET "erasedAt" = now()`,
    [shop, refs],
  );
  return counts;
}

/** Every table that holds rows of a shop, with its shop column. */
export const SHOP_TABLES = [
  ["OutboundCall", "shop"],
  ["AbandonmentTimer", "shop"],
  ["CompletedCheckout", "shop"],
  ["ObjectState", "shop"],
  ["SyncCounter", "shop"],
  ["SyncCounterHourly", "shop"],
  ["StorefrontState", "shop"],
  ["StorefrontRateWindow", "shop"],
  ["WebhookDelivery", "shop"],
  ["Session", "shop"],
  ["BackfillRun", "shop"],
  ["ReconcileState", "shop"],
  ["ErasedReference", "shop"],
  ["MirroredSegment", "shop"],
  ["CampaignActivity", "shop"],
  ["ConsentReturnState", "shop"],
  ["SignupSweepState", "shop"],
  ["SignupCustomer", "shop"],
  ["Shop", "domain"],
] as const;

/** shop/redact: every row of the shop, its stored service key included, the request itself too. */
export async function purgeShop(tx: SqlQueryable, shop: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [table, column] of SHOP_TABLES) {
    counts[table] = (await tx.query(`DELETE FROM "${table}" WHERE "${column}" = $1 RETURNING 1`, [shop])).length;
  }
  return counts;
}

function describeCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([t, n]) => `${n} ${t}`);
  return parts.length ? parts.join(", ") : "nothing stored";
}
