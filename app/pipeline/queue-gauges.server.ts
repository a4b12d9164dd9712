import { database } from "../db.server";
import { BACKFILL_STATUS, CALL_STATUS, DELIVERY_STATUS, TIMER_STATUS } from "./status";
import { historyImportObjects, historyImports, queueDepth, queueOldestAge, shopLag } from "../observability/metrics.server";

/** How many of the slowest shops the lag gauge names. */
const SLOWEST_SHOPS = 10;

interface QueueRow {
  queue: string;
  depth: number;
  oldest_age: number | null;
}

/**
 * Reads the queues' depth and age, the slowest shops and the history imports from the shared
 * database into the gauges; called on each scrape, so it costs nothing between scrapes.
 */
export async function refreshQueueGauges(): Promise<void> {
  const sql = database().sql;
  const [queues, slowest, imports] = await Promise.all([
    sql.query<QueueRow>(
      `SELECT 'webhooks' AS queue, count(*)::int AS depth,
              EXTRACT(EPOCH FROM now() - min("receivedAt") FILTER (WHERE "runAt" <= now()))::float8 AS oldest_age
         FROM "WebhookDelivery" WHERE status = '${DELIVERY_STATUS.queued}'
       UNION ALL
       SELECT 'calls', count(*)::int, EXTRACT(EPOCH FROM now() - min("createdAt") FILTER (WHERE "runAt" <= now()))::float8
         FROM "OutboundCall" WHERE status = '${CALL_STATUS.queued}'
       UNION ALL
       SELECT 'dead_letters', count(*)::int, NULL FROM "OutboundCall" WHERE status = '${CALL_STATUS.dead}'
       UNION ALL
       SELECT 'abandonment_timers', count(*)::int, EXTRACT(EPOCH FROM now() - min("dueAt") FILTER (WHERE "dueAt" <= now()))::float8
         FROM "AbandonmentTimer" WHERE status = '${TIMER_STATUS.pending}'
       UNION ALL
       SELECT 'history_imports', count(*)::int, NULL FROM "BackfillRun" WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`,
    ),
    sql.query<{ shop: string; lag: number }>(
      `SELECT shop, EXTRACT(EPOCH FROM now() - min(since))::float8 AS lag FROM (
         SELECT shop, "receivedAt" AS since FROM "WebhookDelivery" WHERE status = '${DELIVERY_STATUS.queued}' AND "runAt" <= now()
         UNION ALL
         SELECT shop, "createdAt" FROM "OutboundCall" WHERE status = '${CALL_STATUS.queued}' AND "runAt" <= now()
       ) due GROUP BY shop ORDER BY lag DESC LIMIT ${SLOWEST_SHOPS}`,
    ),
    sql.query<{ status: string; runs: number; objects: number | null; expected: number | null }>(
      `SELECT status, count(*)::int AS runs, sum(objects)::int AS objects, sum("objectCount")::int AS expected
         FROM "BackfillRun"
        WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')
           OR (status = '${BACKFILL_STATUS.failed}' AND "updatedAt" > now() - interval '1 day')
        GROUP BY status`,
    ),
  ]);
  for (const q of queues) {
    queueDepth.set({ queue: q.queue }, q.depth);
    if (q.queue !== "dead_letters" && q.queue !== "history_imports") queueOldestAge.set({ queue: q.queue }, Math.max(0, q.oldest_age ?? 0));
  }
  shopLag.reset(); // only the shops that are slowest now
  for (const s of slowest) shopLag.set({ shop: s.shop }, Math.max(0, s.lag));
  historyImports.reset();
  for (const status of [BACKFILL_STATUS.queued, BACKFILL_STATUS.running, BACKFILL_STATUS.failed]) {
    historyImports.set({ status }, imports.find((i) => i.status === status)?.runs ?? 0);
  }
  const underWay = imports.filter((i) => i.status !== BACKFILL_STATUS.failed);
  historyImportObjects.set({ measure: "recorded" }, underWay.reduce((n, i) => n + (i.objects ?? 0), 0));
  historyImportObjects.set({ measure: "in_current_exports" }, underWay.reduce((n, i) => n + (i.expected ?? 0), 0));
}
