import { setImmediate as nextTurn } from "node:timers/promises";
import { database } from "../db.server";
import { PIPELINE_POLICY, type PipelinePolicy } from "./policy";
import { CALL_STATUS, DELIVERY_STATUS, TIMER_STATUS } from "./status";
import { yieldToWebhooks } from "./webhook-priority.server";

/**
 * Retention: deletes finished work older than the retention period, in small batches that give
 * way to webhooks. On PGlite every statement holds the only connection and the JavaScript thread,
 * so one big DELETE would stall acknowledgements for as long as it runs; on PostgreSQL it would
 * hold row locks and bloat one transaction. Each batch is one statement that walks an index from
 * where the last one stopped, so a prune reads each row once however many batches it takes.
 */
export const RETENTION_BATCH = {
  /** Rows examined per statement. */
  rows: 500,
  /**
   * …while webhooks are arriving: one batch must stay short next to a 25 ms acknowledgement
   * (about 5 ms on PGlite), yet the prune must keep up with a steady stream of webhooks.
   */
  busyRows: 200,
} as const;

export interface PruneResult {
  deliveries: number;
  calls: number;
  timers: number;
  completedCheckouts: number;
  /** statements run */
  batches: number;
}

export interface PruneOptions {
  now?: Date;
  /** The policy whose batch size yieldToWebhooks shrinks while webhooks arrive. */
  policy?: PipelinePolicy;
  rows?: number;
  busyRows?: number;
}

/**
 * A call reduced to what tells its kind (see callKind and the replay's KIND_FIELDS): no address, no
 * name, no order. `c` is the row.
 */
const CALL_KIND_ONLY = `jsonb_strip_nulls(jsonb_build_object('op', c.call->'op', 'type', c.call->'type', 'action', c.call->'action',
  'body', jsonb_strip_nulls(jsonb_build_object('eventName', c.call->'body'->'eventName'))))`;

type Step = (cursor: string[] | undefined, limit: number) => Promise<{ deleted: number; last: string[] | undefined }>;

/** Deletes finished deliveries, finished calls (see below), finished timers and old checkouts. */
export async function pruneOldRows(retentionDays: number, options: PruneOptions | Date = {}): Promise<PruneResult> {
  const o = options instanceof Date ? { now: options } : options;
  const before = new Date((o.now ?? new Date()).getTime() - retentionDays * 86_400_000).toISOString();
  const policy = o.policy ?? PIPELINE_POLICY;
  const result: PruneResult = { deliveries: 0, calls: 0, timers: 0, completedCheckouts: 0, batches: 0 };

  const run = async (step: Step): Promise<number> => {
    let cursor: string[] | undefined;
    let deleted = 0;
    for (;;) {
      // Waits while a webhook is being recorded; a smaller batch while they keep arriving.
      const given = await yieldToWebhooks(policy);
      const busy = given.batchSize < policy.batchSize || given.planBatchSize < policy.planBatchSize;
      // When it did not wait, a turn of the event loop all the same: PGlite answers without one,
      // and a request that has just arrived must be read and marked in flight first.
      if (!busy) await nextTurn();
      const limit = busy ? (o.busyRows ?? RETENTION_BATCH.busyRows) : (o.rows ?? RETENTION_BATCH.rows);
      const batch = await step(cursor, limit);
      result.batches++;
      deleted += batch.deleted;
      if (!batch.last) return deleted;
      cursor = batch.last;
    }
  };
  const sql = database().sql;

  // Calls: ids grow with createdAt, so the walk stops at the first batch with nothing old enough.
  // Delivered, refused and superseded (discarded or overtaken) calls go. A delivered or refused one
  // that an older dead letter of its object is still waiting behind is kept without its data (the
  // payload reduced to which kind of call it was, no response, no delivery): replay compares a dead
  // letter with the later calls of its object, and an old subscribe must not undo a newer
  // unsubscribe, or bring back a deleted person, because the newer call was pruned.
  result.calls = await run(async (cursor, limit) => {
    const [row] = await sql.query<{ deleted: number; last: string | null; anyOld: boolean | null }>(
      `WITH batch AS (
         SELECT id, "createdAt" FROM "OutboundCall" WHERE id > $1::bigint ORDER BY id LIMIT $2
       ), old AS (
         SELECT c.id, c.status <> $5 AND EXISTS (
                  SELECT 1 FROM "OutboundCall" d
                   WHERE d.shop = c.shop AND d."objectKey" = c."objectKey" AND d.id < c.id AND d.status = $6) AS guards
           FROM "OutboundCall" c JOIN batch b ON c.id = b.id
          WHERE c.status IN ($3, $4, $5) AND c."createdAt" < $7::timestamp
       ), gone AS (
         DELETE FROM "OutboundCall" c USING old o WHERE c.id = o.id AND NOT o.guards
         RETURNING 1
       ), stripped AS (
         UPDATE "OutboundCall" c SET call = ${CALL_KIND_ONLY}, "lastResponse" = NULL, "lastError" = NULL, cause = NULL, "deliveryId" = NULL
           FROM old o WHERE c.id = o.id AND o.guards AND c.call IS DISTINCT FROM ${CALL_KIND_ONLY}
         RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT max(id)::text FROM batch) AS last,
              (SELECT bool_or("createdAt" < $7::timestamp) FROM batch) AS "anyOld"`,
      [cursor?.[0] ?? "0", limit, CALL_STATUS.delivered, CALL_STATUS.refused, CALL_STATUS.superseded, CALL_STATUS.dead, before],
    );
    return { deleted: row.deleted, last: row.last && row.anyOld ? [row.last] : undefined };
  });

  // Deliveries, along the receivedAt index. One is kept while any of its calls is (dead letters
  // point back at their delivery); discarded and delivered calls are gone by now, and the kind-only
  // rows kept above no longer point at theirs.
  result.deliveries = await run(async (cursor, limit) => {
    const [row] = await sql.query<{ deleted: number; lastAt: string | null; lastId: string | null }>(
      `WITH batch AS (
         SELECT id, "receivedAt" FROM "WebhookDelivery"
          WHERE "receivedAt" < $3::timestamp AND ("receivedAt", id) > ($1::timestamp, $2)
          ORDER BY "receivedAt", id LIMIT $4
       ), gone AS (
         DELETE FROM "WebhookDelivery" d USING batch b
          WHERE d.id = b.id AND d.status = $5 AND d."receivedAt" < $3::timestamp
            AND NOT EXISTS (SELECT 1 FROM "OutboundCall" c WHERE c."deliveryId" = d.id)
         RETURNING 1
       ), last AS (SELECT "receivedAt", id FROM batch ORDER BY "receivedAt" DESC, id DESC LIMIT 1)
       SELECT (SELECT count(*)::int FROM gone) AS deleted,
              (SELECT to_char("receivedAt", 'YYYY-MM-DD"T"HH24:MI:SS.US') FROM last) AS "lastAt",
              (SELECT id FROM last) AS "lastId"`,
      [cursor?.[0] ?? "-infinity", cursor?.[1] ?? "", before, limit, DELIVERY_STATUS.done],
    );
    return { deleted: row.deleted, last: row.lastAt && row.lastId !== null ? [row.lastAt, row.lastId] : undefined };
  });

  // Timers and completed checkouts are one row per checkout: walked along their primary keys.
  const byPrimaryKey = (table: string, key: [string, string], condition: string, params: unknown[]): Step =>
    async (cursor, limit) => {
      const [a, b] = key.map((k) => `"${k}"`);
      const [row] = await sql.query<{ deleted: number; a: string | null; b: string | null }>(
        `WITH batch AS (
           SELECT ${a}, ${b} FROM "${table}" WHERE (${a}, ${b}) > ($1, $2) ORDER BY ${a}, ${b} LIMIT $3
         ), gone AS (
           DELETE FROM "${table}" t USING batch x WHERE t.${a} = x.${a} AND t.${b} = x.${b} AND ${condition} RETURNING 1
         ), last AS (SELECT ${a} AS a, ${b} AS b FROM batch ORDER BY ${a} DESC, ${b} DESC LIMIT 1)
         SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT a FROM last) AS a, (SELECT b FROM last) AS b`,
        [cursor?.[0] ?? "", cursor?.[1] ?? "", limit, ...params],
      );
      return { deleted: row.deleted, last: row.a !== null && row.b !== null ? [row.a, row.b] : undefined };
    };
  result.timers = await run(
    // A failed one (listed on the Problems page as "could not be used") holds its snapshot's email and
    // items too: it goes with the same period.
    byPrimaryKey("AbandonmentTimer", ["shop", "checkoutToken"], `t.status IN ($4, $5, $6) AND t."updatedAt" < $7::timestamp`, [
      TIMER_STATUS.sent,
      TIMER_STATUS.cancelled,
      TIMER_STATUS.failed,
      before,
    ]),
  );
  // Kept while a reminder for the checkout still waits: delivery looks here, right before sending,
  // whether the checkout was bought meanwhile.
  result.completedCheckouts = await run(
    byPrimaryKey(
      "CompletedCheckout",
      ["shop", "token"],
      `t."completedAt" < $4::timestamp AND NOT EXISTS (
         SELECT 1 FROM "OutboundCall" c WHERE c.shop = t.shop AND c."objectKey" = 'checkout:' || t.token AND c.status IN ($5, $6, $7))`,
      [before, CALL_STATUS.queued, CALL_STATUS.running, CALL_STATUS.dead],
    ),
  );
  return result;
}
