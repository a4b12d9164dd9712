import { database } from "../db.server";
import { STOREFRONT_POLICY } from "./policy";

/**
 * THE storefront rate limit: a fixed window per (shop, visitor) counted in the database, so every
 * app process on one PostgreSQL shares it (a per-process counter would multiply the limit by the
 * number of processes). One upsert per event. Hand-written: the limiter libraries keep their
 * counters in memory or Redis, neither of which this app has.
 */
export async function hitRateLimit(shop: string, visitor: string): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
  const { rateWindowMs, eventsPerVisitorPerWindow } = STOREFRONT_POLICY;
  const now = Date.now();
  const windowStart = now - (now % rateWindowMs);
  const [row] = await database().sql.query<{ hits: number }>(
    `INSERT INTO "StorefrontRateWindow" (shop, visitor, "windowStart", hits) VALUES ($1, $2, $3, 1)
     ON CONFLICT (shop, visitor, "windowStart") DO UPDATE SET hits = "StorefrontRateWindow".hits + 1
     RETURNING hits`,
    [shop, visitor.slice(0, 300), new Date(windowStart).toISOString()],
  );
  return {
    allowed: Number(row.hits) <= eventsPerVisitorPerWindow,
    retryAfterSeconds: Math.max(1, Math.ceil((windowStart + rateWindowMs - now) / 1000)),
  };
}

/** Windows that ended are of no use: dropped by the worker's storefront step. */
export async function pruneRateWindows(): Promise<number> {
  const cutoff = new Date(Date.now() - 2 * STOREFRONT_POLICY.rateWindowMs).toISOString();
  const rows = await database().sql.query(`DELETE FROM "StorefrontRateWindow" WHERE "windowStart" < $1 RETURNING 1`, [cutoff]);
  return rows.length;
}

/** Storefront carts (created/updated memory) with no event for 30 days: dropped with the windows. */
export async function pruneStorefrontCarts(): Promise<number> {
  const rows = await database().sql.query(
    `DELETE FROM "ObjectState" WHERE "objectKey" LIKE 'storefront-cart:%' AND "updatedAt" < now() - interval '30 days' RETURNING 1`,
  );
  return rows.length;
}
