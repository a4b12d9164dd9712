import { database } from "../db.server";
import type { SqlRunner } from "../db/migrate.server";
import { logger } from "../logger.server";

/**
 * Queue-table upkeep: VACUUM (with statistics on PostgreSQL) of the tables every claim and result
 * rewrites.
 *
 * Each claim and each result writes a new version of a row and new index entries; the claims
 * then walk the (status, …) indexes past every dead version until VACUUM removes them. PGlite
 * has no autovacuum, and a PostgreSQL server may run without it (the CI server here does) or
 * fall behind a history import. Measured on PostgreSQL without autovacuum, a 100k-customer
 * import: claims took 100–390 ms at 110k rows and the import fell from 850 to 150 objects/s;
 * one VACUUM brought the claims back to milliseconds. So the worker does it itself, per table,
 * once its dead rows pass a threshold (nothing happens where autovacuum keeps up).
 */

/** Tables with churn. */
const TABLES = [
  "WebhookDelivery",
  "OutboundCall",
  "ObjectState",
  "AbandonmentTimer",
  "BackfillRun",
  "SyncCounter",
  "SyncCounterHourly",
  "StorefrontRateWindow",
  "Shop",
];

/**
 * Vacuumed once dead rows reach this many, and this share of the live ones (a big table's VACUUM
 * reads all its indexes, so it is not run for a handful of rows).
 *
 * PGlite runs Postgres in single-user mode, where nothing checkpoints on its own (no checkpointer;
 * max_wal_size and checkpoint_timeout are never acted on): its WAL grew without bound, 139 MB
 * after 30,000 orders with max_wal_size at 64 MB, all of it kept on disk and replayed after a
 * crash. So upkeep checkpoints once this much WAL was written since the last checkpoint: a
 * checkpoint writes at most shared_buffers (16 MB) and took 27 ms; recovery replays at most this.
 *
 * Nor does anything there guard against transaction-id wraparound (autovacuum's job): relations
 * that are only read (the catalogs, shops, sessions) keep their oldest transaction ids, and past
 * 2^31 transactions (every acknowledgement is one) their rows would look as if written in the
 * future, and vanish. So upkeep freezes any relation older than pgliteFreezeAfterXids, half of
 * autovacuum's default trigger (200M); freezing the 135 relations of a fresh database took 131 ms.
 */
export const UPKEEP_POLICY = {
  minDeadRows: 5_000,
  deadShareOfLive: 0.02,
  pgliteCheckpointWalBytes: 64 * 1024 * 1024,
  pgliteFreezeAfterXids: 100_000_000,
};

/** Any number of workers may check; one at a time vacuums (others skip, they do not wait). */
export const UPKEEP_LOCK_KEY = 72707370;

export interface UpkeepResult {
  /** Tables vacuumed, with the dead rows they had. */
  vacuumed: { table: string; deadRows: number; ms: number }[];
  /** Tables only analyzed: many rows added or changed, few dead (a backlog growing in an outage). */
  analyzed: string[];
  /** PGlite: the checkpoint taken, with the WAL written since the one before. */
  checkpoint?: { walBytes: number; ms: number };
  /** PGlite: relations frozen because their oldest transaction id had grown old. */
  frozen?: { relations: number; ms: number };
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
      [TABLES],
    );
    const vacuumed: UpkeepResult["vacuumed"] = [];
    const analyzed: string[] = [];
    const pglite = database().kind === "pglite";
    for (const { table, live, dead, modified } of stats) {
      const threshold = Math.max(policy.minDeadRows, policy.deadShareOfLive * Number(live));
      const deadRows = Number(dead);
      // PGlite (one thread) vacuums only: the worker refreshes the claim tables' statistics on its
      // own from a small sample (refreshQueueStatistics); an ANALYZE here repeated that refresh
      // and held the thread that answers webhooks 13–31 ms longer per vacuum (20k–80k rows).
      // PostgreSQL, where this runs beside the traffic, analyzes too.
      if (deadRows >= threshold) {
        const started = performance.now();
        await sql.exec(pglite ? `VACUUM "${table}"` : `VACUUM (ANALYZE) "${table}"`);
        vacuumed.push({ table, deadRows, ms: Math.round(performance.now() - started) });
      } else if (!pglite && Number(modified) >= Math.max(threshold, 0.1 * Number(live))) {
        await sql.exec(`ANALYZE "${table}"`);
        analyzed.push(table);
      }
    }
    const frozen = pglite ? await freezeOldRelations(sql, policy.pgliteFreezeAfterXids) : undefined;
    const checkpoint = pglite ? await checkpointPglite(sql, policy.pgliteCheckpointWalBytes) : undefined;
    if (vacuumed.length || analyzed.length) logger().debug({ vacuumed, analyzed }, "queue tables vacuumed");
    if (frozen) logger().info(frozen, "embedded database: old relations frozen (transaction-id wraparound)");
    if (checkpoint) logger().info(checkpoint, "embedded database checkpointed");
    return { vacuumed, analyzed, ...(frozen ? { frozen } : {}), ...(checkpoint ? { checkpoint } : {}) };
  });
}

/** A CHECKPOINT once `afterWalBytes` of WAL were written since the last one (see UPKEEP_POLICY). */
async function checkpointPglite(sql: SqlRunner, afterWalBytes: number): Promise<UpkeepResult["checkpoint"]> {
  const [{ since }] = await sql.query<{ since: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::bigint::text AS since FROM pg_control_checkpoint()`,
  );
  if (Number(since) < afterWalBytes) return undefined;
  const started = performance.now();
  await sql.exec("CHECKPOINT");
  return { walBytes: Number(since), ms: Math.round(performance.now() - started) };
}

/** VACUUM (FREEZE) of each relation whose oldest transaction id is older than `afterXids` (see UPKEEP_POLICY). */
async function freezeOldRelations(sql: SqlRunner, afterXids: number): Promise<UpkeepResult["frozen"]> {
  const old = await sql.query<{ relation: string }>(
    `SELECT oid::regclass::text AS relation FROM pg_class
      WHERE relkind IN ('r', 'm', 't') AND relfrozenxid <> '0'::xid AND age(relfrozenxid) > $1::int
      ORDER BY age(relfrozenxid) DESC`,
    [afterXids],
  );
  if (!old.length) return undefined;
  const started = performance.now();
  // One statement per relation: acknowledgements get the thread between them.
  for (const { relation } of old) await sql.exec(`VACUUM (FREEZE) ${relation}`);
  return { relations: old.length, ms: Math.round(performance.now() - started) };
}
