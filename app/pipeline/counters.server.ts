import { database, prisma } from "../db.server";
import type { PreparedStatement, SqlQueryable } from "../db/migrate.server";
import { CALL_STATUS } from "./status";

export interface CounterDelta {
  shop: string;
  kind: string;
  received?: number;
  duplicates?: number;
  delivered?: number;
  skipped?: number;
  /** Could not be used at all (invalid delivery, unreadable import line, reminder that could not be made). */
  unusable?: number;
  failed?: number;
  dead?: number;
  lastDeliveredAt?: Date;
  lastLagMs?: number;
}

const FIELDS = ["received", "duplicates", "delivered", "skipped", "unusable", "failed", "dead"] as const;

/** Adds deltas to the per-shop, per-kind counters: merged first, then one statement. */
export async function bumpCounters(deltas: CounterDelta[], tx: SqlQueryable = database().sql): Promise<void> {
  const rows = counterRows(deltas);
  if (rows) await tx.prepared(BUMP_COUNTERS, [rows]);
}

/** The deltas merged per shop and kind, as the JSON array `counterCtes` reads; null when they add nothing. */
export function counterRows(deltas: CounterDelta[]): string | null {
  const merged = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const key = `${d.shop}\u0000${d.kind}`;
    const m = merged.get(key) ?? { shop: d.shop, kind: d.kind };
    for (const f of FIELDS) if (d[f]) m[f] = (m[f] ?? 0) + d[f]!;
    if (d.lastDeliveredAt && (!m.lastDeliveredAt || d.lastDeliveredAt > m.lastDeliveredAt)) {
      m.lastDeliveredAt = d.lastDeliveredAt;
      m.lastLagMs = d.lastLagMs;
    }
    merged.set(key, m);
  }
  if (!merged.size) return null;
  // Sorted so that concurrent workers take row locks in the same order (no deadlocks).
  const rows = [...merged.values()]
    .sort((a, b) => (a.shop + a.kind < b.shop + b.kind ? -1 : 1))
    .map((m) => ({
      ...Object.fromEntries(FIELDS.map((f) => [f, m[f] ?? 0])),
      shop: m.shop,
      kind: m.kind,
      lastDeliveredAt: m.lastDeliveredAt?.toISOString() ?? null,
      lastLagMs: m.lastLagMs ?? null,
    }));
  return JSON.stringify(rows);
}

/**
 * The counter writes as common table expressions reading `counterRows` bound as `$<param>`, for a
 * statement of the caller's (a delivered group's UPDATE writes its counters in the same statement:
 * one statement instead of two per group, the worker's dearest on PGlite). PostgreSQL runs a
 * data-modifying WITH to completion whether or not the statement reads it. The totals and this
 * hour's bucket (the health chart) are written together, so they never disagree.
 */
export function counterCtes(param: number): string {
  return `counter_rows AS (
       SELECT * FROM jsonb_to_recordset($${param}::jsonb) AS r(shop text, kind text, received int, duplicates int, delivered int,
            skipped int, unusable int, failed int, dead int, "lastDeliveredAt" timestamptz, "lastLagMs" int)
     ), counter_totals AS (
       INSERT INTO "SyncCounter" AS c (shop, kind, received, duplicates, delivered, skipped, unusable, failed, dead, "lastDeliveredAt", "lastLagMs")
       SELECT shop, kind, received, duplicates, delivered, skipped, unusable, failed, dead, "lastDeliveredAt", "lastLagMs" FROM counter_rows
       ON CONFLICT (shop, kind) DO UPDATE SET
         received = c.received + EXCLUDED.received, duplicates = c.duplicates + EXCLUDED.duplicates,
         delivered = c.delivered + EXCLUDED.delivered, skipped = c.skipped + EXCLUDED.skipped, unusable = c.unusable + EXCLUDED.unusable,
         failed = c.failed + EXCLUDED.failed, dead = c.dead + EXCLUDED.dead,
         "lastDeliveredAt" = COALESCE(EXCLUDED."lastDeliveredAt", c."lastDeliveredAt"),
         "lastLagMs" = COALESCE(EXCLUDED."lastLagMs", c."lastLagMs")
     ), counter_hourly AS (
       INSERT INTO "SyncCounterHourly" AS h (shop, kind, hour, received, delivered, skipped, unusable, failed, dead)
       SELECT shop, kind, date_trunc('hour', timezone('UTC', now())), received, delivered, skipped, unusable, failed, dead FROM counter_rows
       WHERE received + delivered + skipped + unusable + failed + dead > 0
       ON CONFLICT (shop, hour, kind) DO UPDATE SET
         received = h.received + EXCLUDED.received, delivered = h.delivered + EXCLUDED.delivered,
         skipped = h.skipped + EXCLUDED.skipped, unusable = h.unusable + EXCLUDED.unusable, failed = h.failed + EXCLUDED.failed,
         dead = h.dead + EXCLUDED.dead
     )`;
}

// Planned once per connection, not on every batch (app/db/prepared.ts).
const BUMP_COUNTERS: PreparedStatement = { name: "bump_counters", text: `WITH ${counterCtes(1)} SELECT 1`, types: ["jsonb"] };

/** The chart shows 30 days; older hourly buckets can go (for the retention job to call). */
export async function pruneCounterHistory(olderThan: Date): Promise<number> {
  const { count } = await prisma().syncCounterHourly.deleteMany({ where: { hour: { lt: olderThan } } });
  return count;
}

export interface HistoryPoint {
  /** bucket start, ISO */
  at: string;
  delivered: number;
  failed: number;
  dead: number;
  unusable: number;
}

/**
 * Deliveries and failures per hour (last 24 h) or per day (last 30 d), every bucket present
 * (zeros included) so that the chart's axis is even.
 */
export async function counterHistory(shop: string, range: "24h" | "30d", now = new Date()): Promise<HistoryPoint[]> {
  const hourly = range === "24h";
  const step = hourly ? 3_600_000 : 86_400_000;
  const buckets = hourly ? 24 : 30;
  const end = Math.floor(now.getTime() / step) * step;
  const start = end - (buckets - 1) * step;
  const rows = await prisma().syncCounterHourly.findMany({
    where: { shop, hour: { gte: new Date(start) } },
    select: { hour: true, delivered: true, failed: true, dead: true, unusable: true },
  });
  const points: HistoryPoint[] = Array.from({ length: buckets }, (_, i) => ({
    at: new Date(start + i * step).toISOString(),
    delivered: 0,
    failed: 0,
    dead: 0,
    unusable: 0,
  }));
  for (const r of rows) {
    const i = Math.floor((r.hour.getTime() - start) / step);
    if (i < 0 || i >= buckets) continue;
    points[i].delivered += r.delivered;
    points[i].failed += r.failed;
    points[i].dead += r.dead;
    points[i].unusable += r.unusable;
  }
  return points;
}

export interface SyncHealth {
  kind: string;
  received: number;
  duplicates: number;
  delivered: number;
  skipped: number;
  unusable: number;
  failed: number;
  dead: number;
  queued: number;
  lastDeliveredAt: Date | null;
  /** Age of the oldest call still waiting, in ms (0 when none). */
  lagMs: number;
}

/** The counters the admin health page shows, with the live queue depth and lag. */
export async function syncHealth(shop: string): Promise<SyncHealth[]> {
  const [counters, waiting] = await Promise.all([
    prisma().syncCounter.findMany({
      where: { shop },
      orderBy: { kind: "asc" },
    }),
    prisma().outboundCall.groupBy({
      by: ["kind"],
      where: { shop, status: { in: [CALL_STATUS.queued, CALL_STATUS.running] } },
      _count: { _all: true },
      _min: { createdAt: true },
    }),
  ]);
  const now = Date.now();
  return counters.map((c) => {
    const w = waiting.find((x) => x.kind === c.kind);
    return {
      kind: c.kind,
      received: c.received,
      duplicates: c.duplicates,
      delivered: c.delivered,
      skipped: c.skipped,
      unusable: c.unusable,
      failed: c.failed,
      dead: c.dead,
      queued: w?._count._all ?? 0,
      lastDeliveredAt: c.lastDeliveredAt,
      lagMs: w?._min.createdAt ? now - w._min.createdAt.getTime() : 0,
    };
  });
}
