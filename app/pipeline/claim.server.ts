import { createHash } from "node:crypto";
import { database } from "../db.server";
import type { PreparedStatement, SqlValue } from "../db/migrate.server";
import { CALL_STATUS } from "./status";

export { nextCursor } from "./fair-cursor";

// Every queue table leases its rows under the same status name.
const RUNNING = CALL_STATUS.running;

/**
 * Leases up to `limit` rows of a queue table to one worker. `FOR UPDATE SKIP LOCKED` lets many
 * workers in many processes claim from one PostgreSQL without taking the same row; a row whose
 * lease ran out (its worker died) is claimable again.
 */
export async function claimRows<T>(options: {
  table: "WebhookDelivery" | "OutboundCall" | "AbandonmentTimer" | "BackfillRun";
  workerId: string;
  limit: number;
  leaseMs: number;
  /** Condition on the candidate row `q` for it to be due. */
  due: string;
  /**
   * The query choosing due rows (one column, the key), instead of the one built from `due`,
   * `where` and `orderBy` (the fair-share claims: fairShareCandidates). `$3` is the limit.
   */
  dueCandidates?: string;
  /** Extra joins/conditions (e.g. shop not paused). */
  from?: string;
  where?: string;
  orderBy: string;
  key: string;
  returning: string;
  countAttempt?: boolean;
  /** Bound as $4 and on, for `where`. */
  params?: SqlValue[];
  /**
   * SQL types of `params`: the claim then runs as a prepared statement, planned once per
   * connection instead of on every claim (app/db/prepared.ts).
   */
  paramTypes?: string[];
}): Promise<T[]> {
  const t = `"${options.table}"`;
  const attempts = options.countAttempt === false ? "" : `, attempts = ${t}.attempts + 1`;
  const keys = options.key
    .split(",")
    .map((k) => `q.${k.trim()}`)
    .join(", ");
  // Due rows and rows whose lease ran out are found by two scans, not one `due OR expired`: the OR
  // keeps the planner from walking the (status, runAt) index in order, so every claim read and
  // sorted the whole queue (20 ms at 4,500 queued calls on PGlite, against 1.4 ms).
  const candidates = (condition: string) =>
    `SELECT ${keys} FROM ${t} q ${options.from ?? ""}
       WHERE (${condition}) ${options.where ? `AND (${options.where})` : ""}
       ORDER BY ${options.orderBy}
       LIMIT $3
       FOR UPDATE OF q SKIP LOCKED`;
  // Leases run out only when a worker dies, so rows whose lease expired are looked for now and then
  // (per worker and table), not in every claim: that scan walks the index entries of every row
  // claimed since the last VACUUM, and with it the claim cost 11 ms on PGlite, 5 ms without.
  // Per worker, not per process: a worker's scan leaves out the calls it has in flight, so it must
  // not stand in for the scans of the other workers of its process.
  const dueCandidates = options.dueCandidates ?? candidates(options.due);
  const now = Date.now();
  const scanKey = `${options.table}|${options.workerId}`;
  const scanExpired = now - (lastExpiredScan.get(scanKey) ?? 0) >= Math.min(EXPIRED_SCAN_EVERY_MS, options.leaseMs / 4);
  if (scanExpired) lastExpiredScan.set(scanKey, now);
  const claimable = scanExpired
    ? `WITH expired AS (${candidates(`q.status = '${RUNNING}' AND q."lockedUntil" < now()`)}),
          due AS (${dueCandidates})
       SELECT * FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) c LIMIT $3`
    : dueCandidates;
  // A single key is matched as `= ANY(ARRAY(…))`, so the chosen rows are fetched by primary key
  // whatever the table's size. With `IN (…)` the planner hash-joined them against a scan of the
  // whole table while it was small: 5.6 against 3.9 ms a claim of 64 at 6,000 queued calls.
  const single = !options.key.includes(",");
  const match = single ? `${options.key} = ANY(ARRAY(${claimable}))` : `(${options.key}) IN (${claimable})`;
  const text = `UPDATE ${t} SET status = '${RUNNING}', "lockedBy" = $1,
       "lockedUntil" = now() + ($2::int * interval '1 millisecond')${attempts}
     WHERE ${match}
     RETURNING ${options.returning}`;
  const params: SqlValue[] = [options.workerId, options.leaseMs, options.limit, ...(options.params ?? [])];
  if (!options.paramTypes) return database().sql.query<T>(text, params);
  return database().sql.prepared<T>(preparedClaim(options.table, text, options.paramTypes), params);
}

/**
 * A claim's statement, named after its text (a table's claims take a few texts: fair or first come,
 * with or without the expired-lease scan). PGlite planned the fair claim of OutboundCall on every
 * claim; prepared, it is planned once.
 */
function preparedClaim(table: string, text: string, types: string[]): PreparedStatement {
  let statement = preparedClaims.get(text);
  if (!statement) {
    const name = `claim_${table.toLowerCase()}_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
    statement = { name, text, types: ["text", "int", "int", ...types] };
    preparedClaims.set(text, statement);
  }
  return statement;
}
const preparedClaims = new Map<string, PreparedStatement>();

/**
 * SET clause that hands a claimed row back untouched: no owner, no lease, and the attempt its claim
 * counted given back (the row was never tried: a crash, or a worker shutting down).
 */
export const GIVE_BACK_CLAIM = `"lockedBy" = NULL, "lockedUntil" = NULL, attempts = GREATEST(attempts - 1, 0)`;

const EXPIRED_SCAN_EVERY_MS = 5_000;
const lastExpiredScan = new Map<string, number>();

/** Where a worker's next fair-share claim of a table starts (see fairShareCandidates). */
const cursors = new Map<string, string>();
export function claimCursor(table: string, workerId: string): string {
  return cursors.get(`${table}|${workerId}`) ?? "";
}
export function setClaimCursor(table: string, workerId: string, cursor: string): void {
  cursors.set(`${table}|${workerId}`, cursor);
}

/** A stopped worker's scan times and cursors go with it. */
export function forgetClaimer(workerId: string): void {
  for (const map of [lastExpiredScan, cursors]) for (const key of map.keys()) if (key.endsWith(`|${workerId}`)) map.delete(key);
}

/**
 * Due rows of a queue table shared fairly between shops: round-robin, a quantum per shop per claim.
 * It walks the shops that have queued rows in name order, starting after `cursor` (the last shop
 * the worker served) and wrapping around, at most `maxShops` of them, one index probe per shop
 * (a skip scan over the table's queued-by-shop partial index); each shop then gets an even share
 * of the claim (ceil(limit / shops)) from its own slice of that index, and what shops could not use
 * goes to the next calls of the shops walked first. The cost grows with the rows claimed and the
 * shops walked, never with the backlog; any number of workers walk with their own cursors, and
 * `SKIP LOCKED` keeps them off each other's rows.
 *
 * Placeholders: `$3` the limit; `cursor` and `maxShops` name the caller's own.
 */
export function fairShareCandidates(options: {
  table: "OutboundCall" | "WebhookDelivery";
  /** Condition on `q` beside `q.status = 'queued' AND q.shop = <the shop>`. */
  due: string;
  /** Order within one shop: must follow the partial index after its `shop` column. */
  orderBy: string;
  /** Condition on a walked shop named `w.shop` (e.g. it may receive deliveries now). */
  shopReady?: string;
  /** The most rows a shop `r.shop` may get in one claim, or NULL for no bound of its own. */
  shopLimit?: string;
  cursor: string;
  maxShops: string;
}): string {
  const t = `"${options.table}"`;
  const queued = `c.status = 'queued'`;
  const next = (after: string | null) =>
    `(SELECT c.shop FROM ${t} c WHERE ${queued}${after ? ` AND c.shop > ${after}` : ""} ORDER BY c.shop LIMIT 1)`;
  const shopLimit = options.shopLimit ?? "NULL::int";
  const perShop = (limit: string, offset = "") => `SELECT p.id FROM ready r CROSS JOIN LATERAL (
        SELECT q.id FROM ${t} q
         WHERE q.status = 'queued' AND q.shop = r.shop AND (${options.due})
         ORDER BY ${options.orderBy} ${offset} LIMIT ${limit}
         FOR UPDATE OF q SKIP LOCKED) p`;
  return `WITH RECURSIVE
      after_cursor(shop, n) AS (
        SELECT s, 1 FROM (SELECT ${next(`${options.cursor}::text`)} AS s) f WHERE s IS NOT NULL
        UNION ALL
        SELECT ${next("w.shop")}, w.n + 1 FROM after_cursor w WHERE w.shop IS NOT NULL AND w.n < ${options.maxShops}),
      from_start(shop, n) AS (
        SELECT s, 1 FROM (SELECT ${next(null)} AS s) f WHERE s IS NOT NULL AND s <= ${options.cursor}::text
        UNION ALL
        SELECT ${next("w.shop")}, w.n + 1 FROM from_start w
         WHERE w.shop IS NOT NULL AND w.shop < ${options.cursor}::text AND w.n < ${options.maxShops}),
      walk AS (
        SELECT shop, n FROM after_cursor WHERE shop IS NOT NULL
        UNION ALL
        SELECT shop, ${options.maxShops} + n FROM from_start WHERE shop IS NOT NULL AND shop <= ${options.cursor}::text),
      ready AS MATERIALIZED (
        -- In walk order as appended (no sort: the walk is at most two short index walks).
        SELECT w.shop, w.n FROM walk w ${options.shopReady ? `WHERE ${options.shopReady}` : ""} LIMIT ${options.maxShops}),
      quantum AS (SELECT GREATEST(1, ceil($3::numeric / GREATEST(count(*), 1)))::int AS q FROM ready)
    SELECT id FROM (
      ${perShop(`LEAST((SELECT q FROM quantum), ${shopLimit})`)}
      UNION ALL
      ${perShop(`CASE WHEN ${shopLimit} IS NULL THEN $3 ELSE GREATEST(0, ${shopLimit} - (SELECT q FROM quantum)) END`, "OFFSET (SELECT q FROM quantum)")}
    ) fair LIMIT $3`;
}
