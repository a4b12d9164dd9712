import { database, prisma } from "../db.server";
import { counterHistory, syncHealth, type HistoryPoint, type SyncHealth } from "../pipeline/counters.server";
import { PIPELINE_POLICY } from "../pipeline/policy";
import { BACKFILL_STATUS, CALL_STATUS, DELIVERY_OUTCOME, DELIVERY_STATUS } from "../pipeline/status";
import { importProblemText } from "./history-words";
import { historyView, type HistoryView } from "./history.server";
import { pauseText } from "./plain-words";
import { countUnprocessed } from "./problems.server";
import { kindOf } from "../sync/topics.server";
import { describeShop, type ShopSummary } from "../shops/shops.server";

export type HealthStatus = "healthy" | "degraded" | "paused" | "not_connected";

export interface HealthBanner {
  status: HealthStatus;
  title: string;
  /** why */
  reason: string;
  /** what the merchant can do */
  fix: string | null;
}

export interface HealthView {
  shop: ShopSummary;
  banner: HealthBanner;
  /** per kind; `openDead`: its changes that could not be delivered and are still on the Problems page */
  kinds: (Omit<SyncHealth, "lastDeliveredAt"> & { stale: number; openDead: number; lastDeliveredAt: string | null })[];
  totals: { received: number; delivered: number; skipped: number; stale: number; unusable: number; failed: number; dead: number; queued: number };
  lagMs: number;
  /**
   * Changes that could not be delivered and are still on the Problems page: the one count every
   * page shows under that name (totals.dead also counts replayed and discarded ones: the chart's history).
   */
  openDead: number;
  /**
   * Store changes that were tried and wait for a retry before anything can be sent (Shopify cannot
   * give an object yet, a consent check waits for Shopify): how many, since when, and the oldest's reason.
   */
  waiting: WaitingChanges;
  /** the latest history import, as the Connection page shows it */
  importRun: HistoryView | null;
  lastDeliveredAt: string | null;
  history: { day: HistoryPoint[]; month: HistoryPoint[] };
}

/** A queue older than this makes the sync "degraded"; so does a store change waiting this long. */
export const LAG_DEGRADED_MS = 15 * 60_000;

export interface WaitingChanges {
  count: number;
  oldestAt: string | null;
  /** the oldest one's reason, as the worker recorded it after "waiting: " */
  reason: string | null;
}

/**
 * The health page: counters per kind, stale deliveries (older versions than what was applied),
 * lag, queue depth, the 24 h / 30 d history and one banner saying whether all is well and why.
 */
export async function healthView(domain: string, now = new Date()): Promise<HealthView> {
  const [shop, rows, staleByKind, deadByKind, day, month, importRun, waiting] = await Promise.all([
    describeShop(domain),
    syncHealth(domain),
    staleCounts(domain),
    openDeadCounts(domain),
    counterHistory(domain, "24h", now),
    counterHistory(domain, "30d", now),
    historyView(domain),
    waitingChanges(domain),
  ]);
  const kinds = rows.map((r) => ({
    ...r,
    stale: staleByKind.get(r.kind) ?? 0,
    openDead: deadByKind.get(r.kind) ?? 0,
    lastDeliveredAt: r.lastDeliveredAt?.toISOString() ?? null,
  }));
  const sum = (f: keyof HealthView["totals"]) => kinds.reduce((n, k) => n + k[f], 0);
  const totals = {
    received: sum("received"),
    delivered: sum("delivered"),
    skipped: sum("skipped"),
    stale: sum("stale"),
    unusable: sum("unusable"),
    failed: sum("failed"),
    dead: sum("dead"),
    queued: sum("queued"),
  };
  const lagMs = Math.max(0, ...kinds.map((k) => k.lagMs));
  const lastDeliveredAt = kinds.map((k) => k.lastDeliveredAt).filter((d): d is string => Boolean(d)).sort().at(-1) ?? null;
  const openDead = [...deadByKind.values()].reduce((n, c) => n + c, 0);
  const unusable = await countUnprocessed(domain, new Date(now.getTime() - UNUSABLE_WINDOW_MS));
  const waitedMs = waiting.oldestAt ? now.getTime() - new Date(waiting.oldestAt).getTime() : 0;
  return {
    shop,
    banner: banner(shop, { openDead, lagMs, unusable, importRun, waiting, waitedMs }),
    kinds,
    totals,
    lagMs,
    openDead,
    waiting,
    importRun,
    lastDeliveredAt,
    history: { day, month },
  };
}

/** Changes that could not be used (Problems page) are mentioned on the health banner for this long. */
export const UNUSABLE_WINDOW_MS = 24 * 60 * 60_000;

function banner(
  shop: ShopSummary,
  s: { openDead: number; lagMs: number; unusable: number; importRun: HistoryView | null; waiting: WaitingChanges; waitedMs: number },
): HealthBanner {
  if (shop.state === "paused") {
    return {
      status: "paused",
      title: "Sync is paused",
      reason: `${pauseText(shop.pauseReason)} Nothing is sent until it is fixed; changes are kept and sent afterwards.`,
      fix: "Paste a valid API key on the Connection page.",
    };
  }
  if (shop.state !== "connected") {
    return {
      status: "not_connected",
      title: "Not connected",
      reason: "No marketing account is connected, so nothing is sent.",
      fix: "Connect your marketing account on the Connection page.",
    };
  }
  if (s.openDead > 0) {
    return {
      status: "degraded",
      title: "Sync is degraded",
      reason: `${s.openDead} ${s.openDead === 1 ? "change" : "changes"} could not be delivered.`,
      fix: "Open Problems to replay or discard them.",
    };
  }
  if (s.importRun?.status === BACKFILL_STATUS.failed) {
    // New changes still flow, but the store's history is missing from the marketing account.
    const p = importProblemText(s.importRun.lastError ?? "", s.importRun.kind);
    return { status: "degraded", title: "The history import failed", reason: `New changes are being sent, but your store's history is not complete. ${p.why}`, fix: p.fix };
  }
  if (s.lagMs > LAG_DEGRADED_MS) {
    return {
      status: "degraded",
      title: "Sync is running behind",
      reason: `The oldest waiting change is ${Math.round(s.lagMs / 60_000)} minutes old; the marketing service may be slow or unavailable.`,
      fix: "No action is needed: waiting changes are retried automatically for 24 hours.",
    };
  }
  if (s.waiting.count > 0 && s.waitedMs > LAG_DEGRADED_MS) {
    const n = s.waiting.count;
    const hours = Math.round(PIPELINE_POLICY.lookupDeadlineMs / 3_600_000);
    return {
      status: "degraded",
      title: "Some changes are waiting",
      reason: `${n} store ${n === 1 ? "change is" : "changes are"} waiting before anything can be sent, the oldest for ${Math.round(s.waitedMs / 60_000)} minutes: ${s.waiting.reason ?? "the reason was not recorded"}.`,
      fix: `No action is needed yet: they are retried automatically. After ${hours} hours a change still waiting is listed on Problems with its reason.`,
    };
  }
  if (s.unusable > 0) {
    // Nothing to replay and nothing the merchant can fix: said, not alarmed about.
    return {
      status: "healthy",
      title: "Sync is healthy",
      reason: `Changes from your store are reaching your marketing account, but ${s.unusable} from the last 24 hours could not be read or turned into anything to send.`,
      fix: "Open Problems to see why; if it keeps happening, send the reason to support.",
    };
  }
  return { status: "healthy", title: "Sync is healthy", reason: "Changes from your store are reaching your marketing account.", fix: null };
}

/** Deliveries tried and back in the queue for a retry (attempts > 0): nothing of them is sent yet. */
async function waitingChanges(shop: string): Promise<WaitingChanges> {
  const [row] = await database().sql.query<{ count: number; oldestAt: Date | string | null; reason: string | null }>(
    `SELECT count(*)::int AS count, min("receivedAt") AT TIME ZONE 'UTC' AS "oldestAt",
            (array_agg("outcomeDetail" ORDER BY "receivedAt", id))[1] AS reason
       FROM "WebhookDelivery" WHERE shop = $1 AND status = '${DELIVERY_STATUS.queued}' AND attempts > 0`,
    [shop],
  );
  return {
    count: row?.count ?? 0,
    oldestAt: row?.oldestAt ? new Date(row.oldestAt).toISOString() : null,
    // The worker records the reason as "waiting: <reason>" (app/backfill/lookup.server.ts, app/compliance/consent-origin.server.ts).
    reason: row?.reason?.replace(/^waiting:\s*/, "").trim() || null,
  };
}

/**
 * Changes that could not be delivered and are still on the Problems page, per object kind. A store
 * change is counted once however many of its calls failed (a customer edit is a contact update and a
 * customer event: two dead calls, one change); a call planned from no delivery (a reminder, a
 * storefront event) is a change of its own.
 */
async function openDeadCounts(shop: string): Promise<Map<string, number>> {
  const rows = await database().sql.query<{ kind: string; count: number }>(
    `SELECT kind, count(DISTINCT coalesce("deliveryId", 'call:' || id::text))::int AS count
       FROM "OutboundCall" WHERE shop = $1 AND status = '${CALL_STATUS.dead}' GROUP BY kind`,
    [shop],
  );
  return new Map(rows.map((r) => [r.kind, r.count]));
}

/** Webhook deliveries skipped as older than the version already applied, per object kind. */
async function staleCounts(shop: string): Promise<Map<string, number>> {
  const rows = await prisma().webhookDelivery.groupBy({
    by: ["topic"],
    where: { shop, outcome: DELIVERY_OUTCOME.stale },
    _count: { _all: true },
  });
  const out = new Map<string, number>();
  for (const r of rows) {
    const kind: string = kindOf(r.topic);
    out.set(kind, (out.get(kind) ?? 0) + r._count._all);
  }
  return out;
}
