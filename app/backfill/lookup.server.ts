/**
 * Unknown objects in live traffic: a webhook that needs an object the app never synced (a refund
 * or an order edit for an order it never saw, a consent change for a customer it never saw)
 * fetches that object from the Admin GraphQL API before it is planned. The fetched object is
 * recorded as a delivery of its own (source "lookup", events silent: it is context, not news)
 * and planned in the same batch just before the webhook that needed it, through the same mappers.
 *
 * A lookup that fails (network, timeout, not found, throttled) sends the webhook back to the
 * queue with backoff and the reason in its detail; after policy.lookupDeadlineMs it is planned
 * with what it carries, or recorded with the reason when that is nothing.
 *
 * Webhooks Shopify sends cut short are completed the same way, before any of that
 * (completeWebhooks): a product's variants past the first 100, a 2026-04 subscription contract's
 * lines, dates and plan. The webhook is planned with what was read added to its body (nothing it
 * carries is replaced), so a live product event carries every variant as the history import and
 * the reconciliation sweep do.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { database } from "../db.server";
import { logger } from "../logger.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { nextTry } from "../pipeline/policy";
import { DELIVERY_OUTCOME, DELIVERY_STATUS, type ClaimedDelivery } from "../pipeline/status";
import { adminQuery } from "../shopify/admin-api.server";
import { contractBody, customerBody, orderBody, restVariant } from "./convert";
import { allChildren, everyChild, FIRST_CONTRACT_LINES, FIRST_LINE_ITEMS, ObjectGone } from "./children.server";
import { CONTRACT_FIELDS, CUSTOMER_FIELDS, ORDER_FIELDS } from "./fields";
import { messageOf } from "../errors";
import { isAdvertised } from "../sync/mappers/products";
import { LOOKUP_SOURCES, sourceSql } from "../sync/sources";
import { topicInfo, type Lookup } from "../sync/topics.server";

/** What a sync topic needs when its object is unknown: its registry line's `lookup`. */
function lookupOf(topic: string): Lookup | undefined {
  const info = topicInfo(topic);
  return info?.role === "sync" ? info.lookup : undefined;
}

function needOf(p: PreparedLike): "Order" | "Customer" | undefined {
  if (p.route !== "sync" || !LOOKUP_SOURCES.has(p.delivery.source)) return undefined;
  const lookup = lookupOf(p.delivery.topic);
  if (lookup === "Customer without consent") {
    const consent = (p.body as { email_marketing_consent?: unknown } | null)?.email_marketing_consent;
    return consent === undefined || consent === null ? "Customer" : undefined;
  }
  return (lookup === "Order" || lookup === "Customer") && p.objectKey?.startsWith(`${lookup.toLowerCase()}:`) ? lookup : undefined;
}

// The first 50 line items; more are paged (children.server.ts).
const LOOKUPS = {
  Order: {
    query: `#graphql
      query LookupOrder($id: ID!) { order(id: $id) { ${ORDER_FIELDS} ${FIRST_LINE_ITEMS} } }`,
    topic: "orders/updated",
  },
  Customer: {
    query: `#graphql
      query LookupCustomer($id: ID!) { customer(id: $id) { ${CUSTOMER_FIELDS} } }`,
    topic: "customers/update",
  },
} as const;

const orderAnswer = z.object({
  order: z.looseObject({ id: z.string() }).nullable(),
});
const customerAnswer = z.object({ customer: z.looseObject({}).nullable() });

interface PreparedLike {
  delivery: ClaimedDelivery;
  route: string;
  objectKey?: string;
  body?: unknown;
}

class NotFound extends Error {
  override readonly name = "NotFound";
}

/**
 * Returns the batch to plan: each webhook that needs an unknown object preceded by that object
 * (fetched now), and without the webhooks sent back to wait. Never throws.
 */
export async function fetchUnknownObjects<P extends PreparedLike>(
  workerId: string,
  batch: P[],
  policy: PipelinePolicy,
  prepare: (delivery: ClaimedDelivery) => P,
): Promise<P[]> {
  const wanted = batch.filter((p) => p.objectKey && needOf(p));
  if (!wanted.length) return batch;
  let missing: Set<string>;
  try {
    missing = await unknownObjects(wanted.map((p) => ({ shop: p.delivery.shop, key: p.objectKey! })));
  } catch (error) {
    logger().warn({ err: messageOf(error) }, "could not check for unknown objects; planning without lookups");
    return batch;
  }
  if (!missing.size) return batch;

  const started = Date.now();
  // Lookups must end well within the batch's lease.
  const budgetMs = Math.max(1_000, Math.floor(policy.leaseMs / 4));
  const out: P[] = [];
  const fetched = new Map<string, "fetched" | "failed">();
  for (const p of batch) {
    const key = `${p.delivery.shop}|${p.objectKey}`;
    const need = needOf(p);
    // An earlier delivery of the batch carrying the whole object makes a lookup needless.
    if (!need || !missing.has(key) || fetched.get(key) === "fetched") {
      if (p.route === "sync" && !need) missing.delete(key);
      out.push(p);
      continue;
    }
    if (fetched.get(key) === "failed") {
      await sendBack(workerId, p.delivery, policy, `${need.toLowerCase()} lookup failed for an earlier delivery of the same object`, true);
      continue;
    }
    const elapsed = Date.now() - started;
    if (elapsed > budgetMs) {
      // Not a failure: this batch has spent its time; the next claim does it.
      await sendBack(workerId, p.delivery, policy, null, false);
      continue;
    }
    const id = p.objectKey!.slice(p.objectKey!.indexOf(":") + 1);
    try {
      const delivery = await fetchObject(workerId, p.delivery.shop, need, id, policy, budgetMs - elapsed);
      fetched.set(key, "fetched");
      out.push(prepare(delivery), p);
    } catch (error) {
      if (lookupOf(p.delivery.topic) === "Customer without consent") {
        // Planned at once with what it carries: later deliveries of the batch see it as known.
        logger().warn({ shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id, err: messageOf(error) }, "customer lookup failed; planned without it");
        missing.delete(key);
        out.push(p);
        continue;
      }
      fetched.set(key, "failed");
      const reason = `${need.toLowerCase()} ${id} could not be fetched from Shopify: ${messageOf(error)}`;
      const overdue = nextTry("lookup", { attempts: p.delivery.attempts, since: p.delivery.receivedAt }, policy).giveUp;
      logger().warn(
        { shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id, attempt: p.delivery.attempts, err: messageOf(error) },
        overdue ? "lookup of an unknown object failed for good" : "lookup of an unknown object failed; will retry",
      );
      if (!overdue) await sendBack(workerId, p.delivery, policy, reason, true);
      // A consent change carries its email: planned with what it has. A refund or an edit has no one to attach it to.
      else if (need === "Customer") out.push(p);
      else await giveUp(workerId, p.delivery, p.objectKey!, `gave up: ${reason}`);
    }
  }
  return out;
}

type Completion = "Variants" | "Contract contents";

/** What a webhook lacks that the Admin API has: undefined when it is whole. */
function completionOf(p: PreparedLike): Completion | undefined {
  if (p.route !== "sync" || !LOOKUP_SOURCES.has(p.delivery.source)) return undefined;
  const lookup = lookupOf(p.delivery.topic);
  const body = p.body as Record<string, unknown> | null;
  if (!body || typeof body !== "object") return undefined;
  // A product that is not advertised is sent without its variants: nothing to read.
  if (lookup === "Variants") return missingVariants(body).length && isAdvertised(productLiveness(body)) ? lookup : undefined;
  // Earlier API versions sent `lines`; 2026-04 sends none (its sample and metadata, 2026-11-28).
  if (lookup === "Contract contents") return Array.isArray(body.lines) ? undefined : lookup;
  return undefined;
}

const productLiveness = (body: Record<string, unknown>) => ({
  status: typeof body.status === "string" ? body.status.toLowerCase() : null,
  published_at: typeof body.published_at === "string" ? body.published_at : null,
});

const gidOf = (v: unknown): string | undefined => {
  if (typeof v === "string") return v;
  const g = (v as { admin_graphql_api_id?: unknown } | null)?.admin_graphql_api_id;
  return typeof g === "string" ? g : undefined;
};

/** The variants `variant_gids` names that the payload does not detail. */
function missingVariants(body: Record<string, unknown>): string[] {
  if (!Array.isArray(body.variant_gids)) return [];
  const detailed = new Set(
    (Array.isArray(body.variants) ? body.variants : []).flatMap((v) => {
      const gid = gidOf(v) ?? ((v as { id?: unknown } | null)?.id != null ? `gid://shopify/ProductVariant/${String((v as { id: unknown }).id)}` : undefined);
      return gid ? [gid] : [];
    }),
  );
  return body.variant_gids.flatMap((v) => gidOf(v) ?? []).filter((gid) => !detailed.has(gid));
}

const CONTRACT_QUERY = `#graphql
  query SubscriptionContractContents($id: ID!) { subscriptionContract(id: $id) { ${CONTRACT_FIELDS} ${FIRST_CONTRACT_LINES} } }`;
const contractAnswer = z.object({ subscriptionContract: z.looseObject({ id: z.string() }).nullable() });

/** The webhook's body with what it lacked read from Shopify; the body itself when Shopify no longer has the object. */
async function completedBody(shop: string, kind: Completion, body: Record<string, unknown>, maxWaitMs: number): Promise<Record<string, unknown>> {
  if (kind === "Variants") {
    const productGid = gidOf(body) ?? `gid://shopify/Product/${String(body.id)}`;
    const named = new Set(missingVariants(body));
    let read: unknown[];
    try {
      read = await everyChild(shop, productGid, "variants", { maxWaitMs });
    } catch (error) {
      // Deleted since: products/delete follows; the webhook is planned with what it carries.
      if (error instanceof ObjectGone) return body;
      throw error;
    }
    // In Shopify's order (by position, as the export and the sweep read them), only those the webhook names.
    const more = read.flatMap((v) => {
      const rest = restVariant(productGid, v);
      return rest && named.has(rest.admin_graphql_api_id as string) ? [rest] : [];
    });
    return { ...body, variants: [...(Array.isArray(body.variants) ? body.variants : []), ...more] };
  }
  const contractGid = gidOf(body) ?? `gid://shopify/SubscriptionContract/${String(body.id)}`;
  const contract = contractAnswer.parse(await adminQuery(shop, CONTRACT_QUERY, { id: contractGid }, { maxWaitMs })).subscriptionContract;
  if (!contract) return body;
  const read = contractBody(contract, await allChildren(shop, contract, "lines", { maxWaitMs }));
  // What the webhook carries stands (its status, policies and currency are of its moment).
  const added = Object.fromEntries(Object.entries(read).filter(([k]) => body[k] === undefined || body[k] === null));
  return { ...body, ...added };
}

/**
 * Returns the batch to plan, each webhook Shopify sent cut short (for a connected shop) completed
 * from the Admin API and prepared again from its completed body. A product whose variants cannot
 * be read goes back to the queue with backoff and the reason (planned cut short it would overwrite
 * the whole product the import or the sweep sent); past policy.lookupDeadlineMs it is planned with
 * what it carries. A contract whose contents cannot be read is planned at once with what it
 * carries: its status change is news that must not wait. Never throws.
 */
export async function completeWebhooks<P extends PreparedLike>(
  workerId: string,
  batch: P[],
  policy: PipelinePolicy,
  prepare: (delivery: ClaimedDelivery) => P,
): Promise<P[]> {
  const wanted = batch.filter((p) => completionOf(p));
  if (!wanted.length) return batch;
  let connected: Set<string>;
  try {
    connected = await connectedShops([...new Set(wanted.map((p) => p.delivery.shop))]);
  } catch (error) {
    logger().warn({ err: messageOf(error) }, "could not check the shops' connections; planning webhooks as Shopify sent them");
    return batch;
  }
  const started = Date.now();
  const budgetMs = Math.max(1_000, Math.floor(policy.leaseMs / 4));
  const out: P[] = [];
  for (const p of batch) {
    const kind = connected.has(p.delivery.shop) ? completionOf(p) : undefined;
    if (!kind) {
      out.push(p);
      continue;
    }
    const elapsed = Date.now() - started;
    if (elapsed > budgetMs) {
      // Not a failure: this batch has spent its time; the next claim does it.
      await sendBack(workerId, p.delivery, policy, null, false);
      continue;
    }
    try {
      const body = await completedBody(p.delivery.shop, kind, p.body as Record<string, unknown>, budgetMs - elapsed);
      // Planned from the completed body; the recorded delivery keeps what Shopify sent.
      out.push(body === p.body ? p : prepare({ ...p.delivery, rawBody: JSON.stringify(body) }));
    } catch (error) {
      const what = kind === "Variants" ? "the product's other variants" : "the contract's lines";
      const reason = `${what} could not be read from Shopify: ${messageOf(error)}`;
      // A contract's lines are not retried: the contract is planned with what it carries at once.
      const overdue = nextTry("lookup", { attempts: p.delivery.attempts, since: p.delivery.receivedAt, permanent: kind === "Contract contents" }, policy).giveUp;
      logger().warn(
        { shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id, attempt: p.delivery.attempts, err: messageOf(error) },
        overdue ? `${what} could not be read; planned with what it carries` : `${what} could not be read; will retry`,
      );
      if (overdue) out.push(p);
      else await sendBack(workerId, p.delivery, policy, reason, true);
    }
  }
  return out;
}

async function connectedShops(shops: string[]): Promise<Set<string>> {
  const rows = await database().sql.query<{ domain: string }>(
    `SELECT domain FROM "Shop" WHERE domain = ANY($1::text[]) AND "serviceKeyEnc" IS NOT NULL AND "uninstalledAt" IS NULL`,
    [shops],
  );
  return new Set(rows.map((r) => r.domain));
}

/** Of these objects, the ones of connected shops that have no ObjectState. */
async function unknownObjects(keys: { shop: string; key: string }[]): Promise<Set<string>> {
  const rows = await database().sql.query<{ shop: string; key: string }>(
    `SELECT DISTINCT k.shop, k.key FROM jsonb_to_recordset($1::jsonb) AS k(shop text, key text)
       JOIN "Shop" s ON s.domain = k.shop AND s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL
      WHERE NOT EXISTS (SELECT 1 FROM "ObjectState" o WHERE o.shop = k.shop AND o."objectKey" = k.key)`,
    [JSON.stringify(keys)],
  );
  return new Set(rows.map((r) => `${r.shop}|${r.key}`));
}

/** Fetches one object and records it as a delivery this worker holds (planned in this batch). */
async function fetchObject(
  workerId: string,
  shop: string,
  kind: "Order" | "Customer",
  id: string,
  policy: PipelinePolicy,
  maxWaitMs: number,
): Promise<ClaimedDelivery> {
  const lookup = LOOKUPS[kind];
  const gid = `gid://shopify/${kind}/${id}`;
  const data = await adminQuery(shop, lookup.query, { id: gid }, { maxWaitMs });
  let body: Record<string, unknown>;
  if (kind === "Order") {
    const order = orderAnswer.parse(data).order;
    if (!order) throw new NotFound(`Shopify has no order ${id}`);
    // Every line item, not the first page only: an order is never sent cut short.
    body = orderBody(order, await allChildren(shop, order, "lineItems", { maxWaitMs }));
  } else {
    const customer = customerAnswer.parse(data).customer;
    if (!customer) throw new NotFound(`Shopify has no customer ${id}`);
    body = customerBody(customer);
  }
  const eventId = `lookup:${gid}:${randomUUID()}`;
  const [row] = await database().sql.query<ClaimedDelivery>(
    // Held by this worker from the start: a crash before planning leaves it to the lease's expiry.
    `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source, status, attempts, "lockedBy", "lockedUntil")
     VALUES (gen_random_uuid()::text, $1, $2, $3, $3, $4, ${sourceSql("lookup")}, '${DELIVERY_STATUS.running}', 1, $5, now() + ($6::int * interval '1 millisecond'))
     RETURNING id, "receivedAt" AT TIME ZONE 'UTC' AS "receivedAt", "triggeredAt" AT TIME ZONE 'UTC' AS "triggeredAt",
       shop, topic, "eventId", "rawBody", attempts, source`,
    [shop, lookup.topic, eventId, JSON.stringify(body), workerId, policy.leaseMs],
  );
  logger().info({ shop, topic: lookup.topic, deliveryId: row.id }, "unknown object fetched from Shopify");
  return row;
}

/** Back to the queue: after a failure with backoff and the reason; otherwise at once, the attempt given back. */
async function sendBack(workerId: string, d: ClaimedDelivery, policy: PipelinePolicy, reason: string | null, failed: boolean): Promise<void> {
  await database()
    .sql.query(
      `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.queued}', "runAt" = now() + ($3::int * interval '1 millisecond'),
         "outcomeDetail" = coalesce($4, "outcomeDetail"), attempts = CASE WHEN $5::boolean THEN attempts ELSE GREATEST(attempts - 1, 0) END,
         "lockedBy" = NULL, "lockedUntil" = NULL
       WHERE id = $1 AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}'`,
      [d.id, workerId, failed ? nextTry("lookup", { attempts: d.attempts }, policy).delayMs : 0, reason === null ? null : `waiting: ${reason}`, failed],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not release a delivery; its lease will expire"));
}

/** Past the look-up deadline the change could not be used: recorded invalid, so Problems lists it with its reason. */
async function giveUp(workerId: string, d: ClaimedDelivery, objectKey: string, reason: string): Promise<void> {
  await database()
    .sql.query(
      `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.done}', outcome = '${DELIVERY_OUTCOME.invalid}', "outcomeDetail" = $3, "objectKey" = $4, "finishedAt" = now(),
         "lockedBy" = NULL, "lockedUntil" = NULL
       WHERE id = $1 AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}'`,
      [d.id, workerId, reason, objectKey],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not record a delivery; its lease will expire"));
}
