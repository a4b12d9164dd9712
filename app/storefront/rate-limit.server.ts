import ipaddr from "ipaddr.js";
import { database } from "../db.server";
import { STOREFRONT_POLICY } from "./storefront-policy";

/** The shop-wide counter's key: visitor keys all have a `kind:` prefix, so none can equal it. */
export const SHOP_WIDE_KEY = "shop";

export type LimitedBy = "client" | "shop" | "visitor";

/**
 * THE storefront rate limits: fixed windows counted in the database, so every app process on one
 * PostgreSQL shares them (a per-process counter would multiply the limit by the number of
 * processes). Hand-written: the limiter libraries keep their counters in memory or Redis, neither
 * of which this app has.
 *
 * Checked in turn, each counted only once the one before allowed the event: the client address
 * (chosen by the network, not the sender), then the shop, then the visitor (chosen by the
 * sender). So a sender rotating visitor ids is held by its address, many addresses by the shop
 * cap, one address cannot use up its shop's cap, and visitor rows are at most the shop cap per
 * window. The first event of a shop's window drops the shop's ended windows, so the table stays
 * at about one window per active shop between the worker's hourly prunes.
 */
export async function hitRateLimits(
  shop: string,
  clientIp: string | null,
  visitor: string,
): Promise<{ allowed: true } | { allowed: false; limitedBy: LimitedBy; retryAfterSeconds: number }> {
  const { rateWindowMs } = STOREFRONT_POLICY;
  const now = Date.now();
  const windowStart = now - (now % rateWindowMs);
  const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + rateWindowMs - now) / 1000));
  const checks: [LimitedBy, string, number][] = [
    ["client", `client:${clientIp ? addressKey(clientIp) : "unknown"}`, STOREFRONT_POLICY.eventsPerClientPerWindow],
    ["shop", SHOP_WIDE_KEY, STOREFRONT_POLICY.eventsPerShopPerWindow],
    ["visitor", visitor, STOREFRONT_POLICY.eventsPerVisitorPerWindow],
  ];
  for (const [limitedBy, key, limit] of checks) {
    const hits = await hit(shop, key, windowStart);
    if (limitedBy === "shop" && hits === 1) await dropEndedWindows(shop, windowStart);
    if (hits > limit) return { allowed: false, limitedBy, retryAfterSeconds };
  }
  return { allowed: true };
}

async function hit(shop: string, key: string, windowStart: number): Promise<number> {
  const [row] = await database().sql.query<{ hits: number }>(
    `INSERT INTO "StorefrontRateWindow" (shop, visitor, "windowStart", hits) VALUES ($1, $2, $3, 1)
     ON CONFLICT (shop, visitor, "windowStart") DO UPDATE SET hits = "StorefrontRateWindow".hits + 1
     RETURNING hits`,
    [shop, key.slice(0, 300), new Date(windowStart).toISOString()],
  );
  return Number(row.hits);
}

async function dropEndedWindows(shop: string, windowStart: number): Promise<void> {
  await database().sql.query(`DELETE FROM "StorefrontRateWindow" WHERE shop = $1 AND "windowStart" < $2`, [
    shop,
    new Date(windowStart).toISOString(),
  ]);
}

/**
 * One sender, one key: an IPv4 address, or an IPv6 address's /64 (one host usually holds a whole
 * /64 and can send from any address in it). clientIp is a valid address (proxy.server.ts).
 */
function addressKey(ip: string): string {
  const address = ipaddr.process(ip); // an IPv4-mapped IPv6 address counts as its IPv4 address
  if (address.kind() === "ipv4") return address.toString();
  const groups = (address as ipaddr.IPv6).parts.slice(0, 4).map((g) => g.toString(16));
  return `${groups.join(":")}::/64`;
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
