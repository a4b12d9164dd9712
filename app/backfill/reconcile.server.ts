/**
 * Reconciliation: once a day per connected shop, ask Shopify for the customers, orders and
 * products updated since the last sweep (small paginated `updated_at:>` queries, not a bulk
 * export) and record as deliveries (source "reconcile", events silent) those newer than what was
 * synced — catching the webhooks Shopify never delivered. The planner's staleness and dedupe
 * rules apply as to any delivery.
 *
 * One row per shop (ReconcileState). A worker claims a due row with SKIP LOCKED and works one
 * page per step under a lease, so any number of workers sweep each shop exactly once a day, and
 * a crash resumes from the saved kind and cursor.
 */
import { z } from "zod";
import { database } from "../db.server";
import { logger } from "../logger.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { nextTry } from "../pipeline/policy";
import { adminQuery } from "../shopify/admin-api.server";
import { allChildren, FIRST_VARIANTS } from "./children.server";
import { customerBody, orderBody, productBody } from "./convert";
import { CUSTOMER_FIELDS, LINE_ITEM_FIELDS, ORDER_FIELDS, PRODUCT_FIELDS } from "./fields";
import { messageOf } from "../errors";
import { sourceSql } from "../sync/sources";

const KINDS = ["customers", "orders", "products"] as const;
type Kind = (typeof KINDS)[number];

// Page sizes from Shopify's requested cost (docs/shopify-graphql.md), each query at most 900 of
// Shopify's 1,000 points (it adds per-field costs the documented rules do not show): a customer
// costs 5 (3 + 5 × 179 = 898); an order with its first 20 line items 118 (3 + 7 × 118 = 829); a
// product with its first 50 variants 107 (3 + 8 × 107 = 859). Written into the documents as the
// `$first` default, so the schema test computes each query's cost; halved on MAX_COST_EXCEEDED.
const SWEEP_LINE_ITEMS = `lineItems(first: 20) { pageInfo { hasNextPage endCursor } nodes { ${LINE_ITEM_FIELDS} } }`;
const SWEEP = {
  customers: {
    query: `#graphql
      query ReconcileCustomers($query: String!, $after: String, $first: Int = 179) {
        customers(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) { pageInfo { hasNextPage endCursor } nodes { ${CUSTOMER_FIELDS} } }
      }`,
    objectKey: "customer",
    topic: () => "customers/update",
    children: null,
    body: (node: Node) => customerBody(node),
  },
  orders: {
    query: `#graphql
      query ReconcileOrders($query: String!, $after: String, $first: Int = 7) {
        orders(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) { pageInfo { hasNextPage endCursor }
          nodes { ${ORDER_FIELDS} ${SWEEP_LINE_ITEMS} } }
      }`,
    objectKey: "order",
    topic: () => "orders/updated",
    children: "lineItems",
    body: (node: Node, children: unknown[]) => orderBody(node, children),
  },
  products: {
    query: `#graphql
      query ReconcileProducts($query: String!, $after: String, $first: Int = 8) {
        products(first: $first, after: $after, query: $query, sortKey: UPDATED_AT) { pageInfo { hasNextPage endCursor }
          nodes { ${PRODUCT_FIELDS} ${FIRST_VARIANTS} } }
      }`,
    objectKey: "product",
    // A product never synced is planned as a create, so a draft is not "withdrawn".
    topic: (known: boolean) => (known ? "products/update" : "products/create"),
    children: "variants",
    body: (node: Node, children: unknown[]) => productBody(node, children),
  },
} as const;

const node = z.looseObject({ id: z.string(), updatedAt: z.string().nullish() });
type Node = z.infer<typeof node>;
const page = z.object({
  pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
  nodes: z.array(node),
});

const numericId = (gid: string) => /\/(\d+)(?:\?.*)?$/.exec(gid)?.[1] ?? gid;

let lastSeed = 0;
let quietUntil = 0;
const SEED_EVERY_MS = 60_000;

/**
 * Gives every connected shop without one its sweep row: first due a day after it connected,
 * looking back to just before the connection (the history import covers what came earlier).
 */
export async function seedReconcileStates(policy: Pick<PipelinePolicy, "reconcileEveryMs" | "reconcileOverlapMs">): Promise<void> {
  lastSeed = Date.now();
  await database().sql.query(
    `INSERT INTO "ReconcileState" (shop, "dueAt", "sweptThrough")
     SELECT s.domain, coalesce(s."connectedAt", now()) + ($1::bigint * interval '1 millisecond'),
            coalesce(s."connectedAt", now()) - ($2::bigint * interval '1 millisecond')
       FROM "Shop" s
      WHERE s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "ReconcileState" r WHERE r.shop = s.domain)
     ON CONFLICT (shop) DO NOTHING`,
    [policy.reconcileEveryMs, policy.reconcileOverlapMs],
  );
}

interface Claimed {
  shop: string;
  sweptThrough: Date;
  kindIndex: number;
  cursor: string | null;
  attempts: number;
  startedAt: Date;
}

/**
 * One page of one due sweep (the worker's unit of reconciliation work); `shop` limits it to one
 * shop (the CLI). Returns 1 when it did something.
 */
export async function runReconcileStep(workerId: string, policy: PipelinePolicy, shop?: string): Promise<number> {
  if (!shop) {
    // A sweep is due once a day: an idle worker need not ask on every poll.
    if (Date.now() < quietUntil) return 0;
    if (Date.now() - lastSeed > SEED_EVERY_MS) await seedReconcileStates(policy);
  }
  const [row] = await database().sql.query<Claimed>(
    `UPDATE "ReconcileState" r SET "lockedBy" = $1, "lockedUntil" = now() + ($2::int * interval '1 millisecond'),
       attempts = r.attempts + 1, "startedAt" = coalesce(r."startedAt", now())
     WHERE r.shop = (
       SELECT q.shop FROM "ReconcileState" q JOIN "Shop" s ON s.domain = q.shop
        WHERE q."dueAt" <= now() AND (q."lockedUntil" IS NULL OR q."lockedUntil" < now())
          AND s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL AND ($3::text IS NULL OR q.shop = $3)
        ORDER BY q."dueAt" LIMIT 1
        FOR UPDATE OF q SKIP LOCKED)
     RETURNING r.shop, r."sweptThrough" AT TIME ZONE 'UTC' AS "sweptThrough", r."kindIndex", r.cursor, r.attempts,
       r."startedAt" AT TIME ZONE 'UTC' AS "startedAt"`,
    [workerId, policy.leaseMs, shop ?? null],
  );
  if (!row) {
    if (!shop) quietUntil = Date.now() + policy.pollMs * 20;
    return 0;
  }
  try {
    await sweepPage(row, workerId, policy);
  } catch (error) {
    const message = messageOf(error);
    const next = nextTry("reconcileSweep", { attempts: row.attempts, since: new Date(row.startedAt) }, policy);
    if (next.giveUp) {
      // A page that keeps failing (bad data, a long Shopify outage) must not hold the shop's sweeps
      // for good: this one is given up with its reason, and the next, a day later, covers the same
      // span again (sweptThrough is kept).
      logger().error({ shop: row.shop, attempt: row.attempts, err: message }, "reconciliation sweep given up; the next one covers its span");
      await database().sql.query(
        `UPDATE "ReconcileState" SET "dueAt" = now() + ($3::bigint * interval '1 millisecond'), "lastError" = $4, "startedAt" = NULL,
           "kindIndex" = 0, cursor = NULL, enqueued = 0, attempts = 0, "lockedBy" = NULL, "lockedUntil" = NULL
          WHERE shop = $1 AND "lockedBy" = $2`,
        [row.shop, workerId, policy.reconcileEveryMs, `gave up this sweep after ${row.attempts} attempts: ${message}`],
      );
      return 1;
    }
    logger().warn({ shop: row.shop, attempt: row.attempts, err: message }, "reconciliation step failed; will retry");
    // Resumes where it stopped (kind and cursor are kept).
    await database().sql.query(
      `UPDATE "ReconcileState" SET "dueAt" = now() + ($3::int * interval '1 millisecond'), "lastError" = $4, "lockedBy" = NULL, "lockedUntil" = NULL
        WHERE shop = $1 AND "lockedBy" = $2`,
      [row.shop, workerId, next.delayMs, message],
    );
  }
  return 1;
}

async function sweepPage(row: Claimed, workerId: string, policy: PipelinePolicy): Promise<void> {
  const kind: Kind = KINDS[row.kindIndex] ?? "products";
  const sweep = SWEEP[kind];
  const data = await adminQuery(
    row.shop,
    sweep.query,
    { query: `updated_at:>'${row.sweptThrough.toISOString()}'`, after: row.cursor },
    { maxWaitMs: Math.floor(policy.leaseMs / 4), pageVariable: "first" },
  );
  const result = page.parse((data as Record<string, unknown>)[kind]);
  const candidates: { key: string; updated: string | null; n: Node; children: unknown[] }[] = [];
  for (const n of result.nodes) {
    // Every line item (variant), not the first page only: an object is never sent cut short.
    const children = sweep.children ? await allChildren(row.shop, n, sweep.children, { maxWaitMs: Math.floor(policy.leaseMs / 4) }) : [];
    candidates.push({ key: `${sweep.objectKey}:${numericId(n.id)}`, updated: n.updatedAt ?? null, n, children });
  }

  const next = result.pageInfo.hasNextPage && result.pageInfo.endCursor
    ? { kindIndex: row.kindIndex, cursor: result.pageInfo.endCursor }
    : { kindIndex: row.kindIndex + 1, cursor: null };
  const finished = next.kindIndex >= KINDS.length;

  await database().sql.transaction(async (tx) => {
    const [mine] = await tx.query(`SELECT 1 FROM "ReconcileState" WHERE shop = $1 AND "lockedBy" = $2 FOR UPDATE`, [row.shop, workerId]);
    if (!mine) throw new Error("lease lost during the reconciliation step");
    // Newer than what was synced, or never synced at all. unnest() of arrays, not
    // jsonb_to_recordset(): with the page's true row count the planner probes the primary key;
    // estimating 100 rows, it hash-joined a scan of every ObjectState row up to ~50,000.
    const newer = await tx.query<{ key: string; known: boolean }>(
      `SELECT k.key, o."objectKey" IS NOT NULL AS known
         FROM unnest($2::text[], $3::timestamptz[]) AS k(key, updated)
         LEFT JOIN "ObjectState" o ON o.shop = $1 AND o."objectKey" = k.key
        WHERE o."lastUpdatedAt" IS NULL OR k.updated IS NULL OR (k.updated AT TIME ZONE 'UTC') > o."lastUpdatedAt"`,
      [row.shop, candidates.map((c) => c.key), candidates.map((c) => c.updated)],
    );
    const known = new Map(newer.map((r) => [r.key, r.known]));
    const rows = candidates
      .filter((c) => known.has(c.key))
      .map((c) => ({
        topic: sweep.topic(known.get(c.key)!),
        eventId: `reconcile:${c.n.id}:${c.updated ?? ""}`,
        rawBody: JSON.stringify(sweep.body(c.n, c.children)),
      }));
    if (rows.length) {
      await tx.query(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source)
         SELECT gen_random_uuid()::text, $1, r.topic, r."eventId", r."eventId", r."rawBody", ${sourceSql("reconcile")}
           FROM jsonb_to_recordset($2::jsonb) AS r(topic text, "eventId" text, "rawBody" text)
         ON CONFLICT (shop, topic, "eventId") DO NOTHING`,
        [row.shop, JSON.stringify(rows)],
      );
    }
    if (finished) {
      // The next sweep looks back to a little before this one started (clock skew, late writes).
      await tx.query(
        `UPDATE "ReconcileState" SET "sweptThrough" = "startedAt" - ($2::bigint * interval '1 millisecond'),
           "dueAt" = GREATEST("startedAt" + ($3::bigint * interval '1 millisecond'), now() + interval '1 minute'),
           "lastEnqueued" = enqueued + $4, enqueued = 0, "startedAt" = NULL, "kindIndex" = 0, cursor = NULL,
           attempts = 0, "lastError" = NULL, "lastSweepAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1`,
        [row.shop, policy.reconcileOverlapMs, policy.reconcileEveryMs, rows.length],
      );
    } else {
      await tx.query(
        `UPDATE "ReconcileState" SET "kindIndex" = $2, cursor = $3, enqueued = enqueued + $4, attempts = 0, "lastError" = NULL,
           "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1`,
        [row.shop, next.kindIndex, next.cursor, rows.length],
      );
    }
    if (rows.length || finished) logger().info({ shop: row.shop, kind, enqueued: rows.length, finished }, "reconciliation page swept");
  });
}

export interface ReconcileStatus {
  dueAt: Date;
  sweptThrough: Date;
  running: boolean;
  lastSweepAt: Date | null;
  lastEnqueued: number | null;
  lastError: string | null;
}

export async function reconcileStatus(shop: string): Promise<ReconcileStatus | null> {
  const [row] = await database().sql.query<ReconcileStatus>(
    `SELECT "dueAt" AT TIME ZONE 'UTC' AS "dueAt", "sweptThrough" AT TIME ZONE 'UTC' AS "sweptThrough", "startedAt" IS NOT NULL AS running,
            "lastSweepAt" AT TIME ZONE 'UTC' AS "lastSweepAt", "lastEnqueued", "lastError"
       FROM "ReconcileState" WHERE shop = $1`,
    [shop],
  );
  return row ?? null;
}

export class ReconcileRefused extends Error {
  override readonly name = "ReconcileRefused";
}

/**
 * A sweep of one shop now, in this process (the CLI): the shop's row is made due and worked page
 * by page to the end. Refused while a worker holds the shop's sweep.
 */
export async function reconcileShopNow(shop: string, workerId: string, policy: PipelinePolicy): Promise<ReconcileStatus> {
  await seedReconcileStates(policy);
  const [row] = await database().sql.query<{ shop: string }>(
    `UPDATE "ReconcileState" SET "dueAt" = now() WHERE shop = $1 AND ("lockedUntil" IS NULL OR "lockedUntil" < now()) RETURNING shop`,
    [shop],
  );
  if (!row) {
    const exists = await reconcileStatus(shop);
    throw new ReconcileRefused(exists ? `A reconciliation of ${shop} is under way in a worker; try again when it has finished.` : `${shop} is not connected: nothing to reconcile.`);
  }
  for (let steps = 0; ; steps++) {
    const status = await reconcileStatus(shop);
    // Checked first: a sweep given up is over (not running, due tomorrow) but did not succeed.
    if (status?.lastError && steps > 0) throw new ReconcileRefused(`The reconciliation of ${shop} failed: ${status.lastError}`);
    if (steps > 0 && status && !status.running && status.dueAt.getTime() > Date.now()) return status;
    await runReconcileStep(workerId, policy, shop);
  }
}
