import { database } from "../db.server";
import { logger } from "../logger.server";

/**
 * Queue-table upkeep: VACUUM, with statistics, of the tables every claim and result rewrites.
 *
 * Each claim and each result writes a new version of a row and new index entries; the claims
 * then walk the (status, …) indexes past every dead version until VACUUM removes them. PGlite
 * has no autovacuum, and a PostgreSQL server may run without it (the CI server here does) or
 * fall behind a history import. Measured on PostgreSQL without autovacuum, a 100k-customer
 * import: claims took 100–390 ms at 110k rows and the import fell from 850 to 150 objects/s;
 * one VACUUM brought the claims back to milliseconds. So the worker does it itself, per table,
 * once its dead rows pass a threshold (nothing happens where autovacuum keeps up).
 */

/** Tables with churn, and the columns their statements filter, join and sort on. */
const TABLES: Record<string, string[]> = {
  WebhookDelivery: ["id", "status", "runAt", "lockedUntil", "receivedAt", "source"],
  OutboundCall: ["id", "shop", "objectKey", "status", "runAt", "lockedUntil", "createdAt", "deliveryId"],
  ObjectState: ["shop", "objectKey"],
  AbandonmentTimer: ["shop", "status", "dueAt", "lockedUntil"],
  BackfillRun: ["shop", "status", "runAt"],
  SyncCounter: ["shop", "kind"],
  SyncCounterHourly: ["shop", "hour", "kind"],
  StorefrontRateWindow: ["windowStart"],
  Shop: ["domain", "serviceKeyEnc", "pausedAt", "uninstalledAt"],
};

/** Vacuumed once dead rows reach this many, and this share of the live ones (a big table's
 * VACUUM reads all its indexes, so it is not run for a handful of rows). */
export const UPKEEP_POLICY = { minDeadRows: 5_000, deadShareOfLive: 0.02 };

/** Any number of workers may check; one at a time vacuums (others skip, they do not wait). */
export const UPKEEP_LOCK_KEY = 72707370;

export interface UpkeepResult {
  /** Tables vacuumed, with the dead rows they had. */
  vacuumed: { table: string; deadRows: number; ms: number }[];
  /** Tables only analyzed: many rows added or changed, few dead (a backlog growing in an outage). */
  analyzed: string[];
}

/**
 * THE entry: vacuums (and analyzes) each churned table whose dead rows passed the threshold.
 * Returns undefined when another worker is doing it now.
 */
export async function upkeepQueueTables(policy: typeof UPKEEP_POLICY = UPKEEP_POLICY): Promise<UpkeepResult | undefined> {
  const sql = database().sql;
  return sql.tryWithAdvisoryLock(UPKEEP_LOCK_KEY, async () => {
    const stats = await sql.query<{ table: string; live: string; dead: string; modified: string }>(
      `SELECT relname AS "table", n_live_tup::text AS live, n_dead_tup::text AS dead, n_mod_since_analyze::text AS modified
         FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1::text[])`,
      [Object.keys(TABLES)],
    );
    const vacuumed: UpkeepResult["vacuumed"] = [];
    const analyzed: string[] = [];
    for (const { table, live, dead, modified } of stats) {
      const threshold = Math.max(policy.minDeadRows, policy.deadShareOfLive * Number(live));
      const deadRows = Number(dead);
      // On PGlite (one thread) only the listed columns are analyzed: the wide bodies held it
      // 0.4–2 s. A column list does not reset n_mod_since_analyze, so PostgreSQL, where this runs
      // beside the traffic, analyzes whole tables; PGlite's worker refreshes statistics on its own.
      const pglite = database().kind === "pglite";
      const columns = pglite ? ` (${TABLES[table]!.map((c) => `"${c}"`).join(", ")})` : "";
      if (deadRows >= threshold) {
        const started = performance.now();
        await sql.exec(`VACUUM (ANALYZE) "${table}"${columns}`);
        vacuumed.push({ table, deadRows, ms: Math.round(performance.now() - started) });
      } else if (!pglite && Number(modified) >= Math.max(threshold, 0.1 * Number(live))) {
        await sql.exec(`ANALYZE "${table}"`);
        analyzed.push(table);
      }
    }
    if (vacuumed.length || analyzed.length) logger().debug({ vacuumed, analyzed }, "queue tables vacuumed");
    return { vacuumed, analyzed };
  });
}
