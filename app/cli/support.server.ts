import { existsSync } from "node:fs";
import path from "node:path";
import { config } from "../config.server";
import { database, type Database } from "../db.server";
import { pgliteOnDisk } from "../db/pglite.server";
import type { BackfillProgress, BackfillRequest } from "../backfill/backfill.server";
import { exportCustomer, knownEmail, type CustomerExport } from "../compliance/compliance.server";
import { resealStoredSecrets, type ResealReport } from "../shops/key-rotation.server";
import { BACKFILL_STATUS, CALL_STATUS } from "../pipeline/status";

/** A refusal the CLI prints as one line (exit code 2). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * PGlite is single-process: opening the directory a running app holds would corrupt it. PGlite
 * writes postmaster.pid while a directory is open and removes it on close, so its presence means
 * "in use" (or an app that crashed: starting and stopping it once clears that).
 */
export function refuseIfDataDirInUse(): void {
  const target = config().database;
  if (target.kind !== "pglite" || !pgliteOnDisk(target.dataDir)) return;
  if (existsSync(path.join(target.dataDir, "postmaster.pid"))) {
    throw new CliError(
      `The PGlite data directory ${target.dataDir} is in use by a running app: stop it first (npm start holds it), or run this against PostgreSQL (DATABASE_URL).`,
    );
  }
}

let opened: Database | undefined;

/** The process database, opened only after the checks above. */
async function openDatabase(): Promise<Database> {
  // Once open, the directory is held by this process: no second check (it would see our own lock).
  if (opened) return opened;
  refuseIfDataDirInUse();
  opened = database();
  await opened.migrate();
  return opened;
}

export async function closeDatabase(): Promise<void> {
  await opened?.close();
  opened = undefined;
}

/** `reencrypt-keys`: every stored secret re-sealed with the current ENCRYPTION_KEY. */
export async function reencryptKeys(): Promise<ResealReport> {
  await openDatabase();
  return resealStoredSecrets();
}

/** `export-customer`: everything stored about one customer of a shop (a data request), as JSON. */
export async function exportCustomerData(options: { shop: string; customer: string; email?: string; orders?: string[] }): Promise<CustomerExport> {
  // A typo'd shop would otherwise give an empty export that looks like "nothing stored".
  await knownShop(options.shop);
  if (!/^\d{1,30}$/.test(options.customer)) throw new CliError(`--customer must be a Shopify customer id (digits), got ${options.customer}`);
  const db = await openDatabase();
  const email = options.email ?? (await knownEmail(db.sql, options.shop, options.customer));
  return exportCustomer(db.sql, options.shop, { id: options.customer, email, orderIds: options.orders ?? [] });
}

export interface ShopRow {
  domain: string;
  state: "connected" | "paused" | "not connected" | "uninstalled";
  queued: number;
  dead: number;
  lastDeliveredAt: Date | null;
}

/** `shops`: every shop the app knows, with its delivery state and queue. */
export async function listShops(): Promise<ShopRow[]> {
  const db = await openDatabase();
  const rows = await db.sql.query<{
    domain: string;
    serviceKeyEnc: string | null;
    pausedAt: Date | null;
    uninstalledAt: Date | null;
    queued: number;
    dead: number;
    lastDeliveredAt: Date | null;
  }>(
    `SELECT s.domain, s."serviceKeyEnc", s."pausedAt", s."uninstalledAt",
            (SELECT count(*)::int FROM "OutboundCall" c WHERE c.shop = s.domain AND c.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}')) AS queued,
            (SELECT count(*)::int FROM "OutboundCall" c WHERE c.shop = s.domain AND c.status = '${CALL_STATUS.dead}') AS dead,
            (SELECT max(k."lastDeliveredAt") FROM "SyncCounter" k WHERE k.shop = s.domain) AS "lastDeliveredAt"
       FROM "Shop" s ORDER BY s.domain`,
  );
  return rows.map((r) => ({
    domain: r.domain,
    state: shopState(r),
    queued: r.queued,
    dead: r.dead,
    lastDeliveredAt: r.lastDeliveredAt,
  }));
}

const shopState = (r: { serviceKeyEnc: string | null; pausedAt: Date | null; uninstalledAt: Date | null }): ShopRow["state"] =>
  r.uninstalledAt ? "uninstalled" : !r.serviceKeyEnc ? "not connected" : r.pausedAt ? "paused" : "connected";

const shopDomain = (shop: string) => {
  if (!/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/.test(shop)) throw new CliError(`--shop must be a shop's myshopify.com domain, got ${shop}`);
  return shop;
};

async function knownShop(shop: string): Promise<ShopRow["state"]> {
  const db = await openDatabase();
  const [row] = await db.sql.query<{ serviceKeyEnc: string | null; pausedAt: Date | null; uninstalledAt: Date | null }>(
    `SELECT "serviceKeyEnc", "pausedAt", "uninstalledAt" FROM "Shop" WHERE domain = $1`,
    [shopDomain(shop)],
  );
  if (!row) throw new CliError(`The app does not know ${shop}: it was never installed (or its data was redacted).`);
  return shopState(row);
}

/** `status --shop`: the shop's counters per kind, its queue, its latest history import and sweep. */
export async function shopStatus(shop: string) {
  await knownShop(shop);
  const [{ syncHealth }, { backfillProgress }, { reconcileStatus }] = await Promise.all([
    import("../pipeline/counters.server"),
    import("../backfill/backfill.server"),
    import("../backfill/reconcile.server"),
  ]);
  const [shopRow] = (await listShops()).filter((s) => s.domain === shop);
  return { shop: shopRow, kinds: await syncHealth(shop), backfill: await backfillProgress(shop), reconcile: await reconcileStatus(shop) };
}

/**
 * `problems --shop`: the shop's dead letters grouped by cause, as the Problems page shows them
 * (e-mail addresses masked), with the call ids `replay --ids` takes; and what could not be used at
 * all (invalid deliveries, reminders that could not be made).
 */
export async function shopProblems(shop: string, search?: string) {
  await knownShop(shop);
  const { listProblems, listUnprocessed } = await import("../admin/problems.server");
  const { maskEmailsIn } = await import("../admin/privacy");
  const problems = await listProblems(shop, { search, limit: 1_000, groups: 200 });
  const unprocessed = search ? { count: 0, items: [] } : await listUnprocessed(shop, { limit: 200 });
  // The merchant's admin shows their customers whole; support's terminal, like the logs, does not.
  const customer = (c: string | null) => maskEmailsIn(c?.replace(/^.*<([^>]+)>$/, "$1") ?? null);
  return {
    ...problems,
    groups: problems.groups.map((g) => ({
      ...g,
      reason: maskEmailsIn(g.reason) ?? g.reason,
      problems: g.problems.map((p) => ({ ...p, customer: customer(p.customer), message: maskEmailsIn(p.message) })),
    })),
    unprocessed: { ...unprocessed, items: unprocessed.items.map((u) => ({ ...u, reason: maskEmailsIn(u.reason) ?? u.reason })) },
  };
}

/** `reconcile --shop`: the shop's reconciliation sweep now, in this process (refused while a worker runs it). */
export async function reconcileShop(shop: string) {
  await knownShop(shop);
  const [{ reconcileShopNow, ReconcileRefused }, { PIPELINE_POLICY }] = await Promise.all([import("../backfill/reconcile.server"), import("../pipeline/policy")]);
  try {
    return await reconcileShopNow(shop, `cli:${process.pid}`, { ...PIPELINE_POLICY });
  } catch (error) {
    if (error instanceof ReconcileRefused) throw new CliError(error.message);
    throw error;
  }
}

/** Works the queues in this process until nothing is due (when no app or worker is running). */
export async function runUntilIdle(): Promise<void> {
  const { startWorker } = await import("../jobs/index.server");
  const worker = startWorker();
  try {
    await worker.idle({ timeoutMs: 10 * 60_000 });
  } finally {
    await worker.stop();
  }
}

/** `replay --shop [--ids]`: dead letters back in the queue (never going backwards). */
export async function replayShop(shop: string, ids?: string[]) {
  await knownShop(shop);
  if (ids?.some((id) => !/^\d{1,19}$/.test(id))) throw new CliError("--ids must be call ids (digits), comma-separated");
  const { replayDeadLetters } = await import("../pipeline/dead-letters.server");
  return replayDeadLetters(shop, ids);
}

/** `resync --shop`: queues a history import (refused while one is under way). */
export async function resyncShop(shop: string, request: BackfillRequest) {
  // Without a service key every imported object would be ignored ("not connected"), yet counted as imported.
  if ((await knownShop(shop)) === "not connected") {
    throw new CliError(`${shop} is not connected to the marketing service, so a history import would send nothing. Connecting it (the app's Connection page) starts one.`);
  }
  const { BackfillRefused, requestBackfill } = await import("../backfill/backfill.server");
  try {
    return await requestBackfill(shop, request);
  } catch (error) {
    if (error instanceof BackfillRefused) throw new CliError(error.message);
    throw error;
  }
}

/** `resync --run`: works the queue in this process until the shop's import has finished. */
export async function runUntilImported(shop: string, onProgress: (p: BackfillProgress) => void) {
  const [{ startWorker }, { backfillProgress }] = await Promise.all([import("../jobs/index.server"), import("../backfill/backfill.server")]);
  const worker = startWorker();
  try {
    for (;;) {
      const p = await backfillProgress(shop);
      if (p) onProgress(p);
      if (!p || p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) {
        await worker.idle({ timeoutMs: 10 * 60_000 });
        return p;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await worker.stop();
  }
}
