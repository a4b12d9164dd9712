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
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { database } from "../db.server";
import { logger } from "../logger.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { retryDelayMs } from "../pipeline/policy";
import { DELIVERY_OUTCOME, DELIVERY_STATUS, type ClaimedDelivery } from "../pipeline/status";
import { adminQuery } from "./admin-graphql.server";
import { customerBody, orderBody } from "./convert";
import { allChildren, FIRST_LINE_ITEMS } from "./children.server";
import { CUSTOMER_FIELDS, ORDER_FIELDS } from "./fields";
import { messageOf } from "../errors";
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
  return lookup && p.objectKey?.startsWith(`${lookup.toLowerCase()}:`) ? lookup : undefined;
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
      const overdue = Date.now() - p.delivery.receivedAt.getTime() > policy.lookupDeadlineMs;
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
      [d.id, workerId, failed ? retryDelayMs(d.attempts, policy) : 0, reason === null ? null : `waiting: ${reason}`, failed],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not release a delivery; its lease will expire"));
}

async function giveUp(workerId: string, d: ClaimedDelivery, objectKey: string, reason: string): Promise<void> {
  await database()
    .sql.query(
      `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.done}', outcome = '${DELIVERY_OUTCOME.ignored}', "outcomeDetail" = $3, "objectKey" = $4, "finishedAt" = now(),
         "lockedBy" = NULL, "lockedUntil" = NULL
       WHERE id = $1 AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}'`,
      [d.id, workerId, reason, objectKey],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not record a delivery; its lease will expire"));
}
