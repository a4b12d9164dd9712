import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, until } from "./helpers";

// Shopify's side of a history import: exports that fail, and its limit of exports running at once.
const SIZE = { customers: 5, products: 2, orders: 3 };

async function ended(shop: string, timeoutMs = 60_000) {
  return until("the import to end", async () => {
    const p = await backfillProgress(shop);
    return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
  }, timeoutMs);
}

describeEachDatabase("a Shopify export that fails", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE);
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(() => h.reset());

  const exportsOf = (shop: string) => store.operations.filter((o) => o.shop === shop);

  it("is started again, and the history import completes", async () => {
    const shop = newShop("export-failed");
    await install(h, shop);
    // INTERNAL_SERVER_ERROR: Shopify's transient failure ("try again"); a failed export stays failed.
    store.failNextExport("customers");
    await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    const p = await ended(shop);
    await h.settle();
    expect({ status: p.status, objects: p.objects, lastError: p.lastError }).toEqual({ status: "done", objects: SIZE.customers, lastError: null });
    expect(exportsOf(shop).map((o) => o.kind)).toEqual(["customers", "customers"]);
  });

  it("failing every time, ends the import after three exports with Shopify's reason", async () => {
    const shop = newShop("export-failed");
    await install(h, shop);
    store.failNextExport("customers", "INTERNAL_SERVER_ERROR", 3);
    await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    const p = await ended(shop);
    expect({ status: p.status, lastError: p.lastError }).toEqual({
      status: "failed",
      lastError: "Shopify's export of customers ended FAILED (INTERNAL_SERVER_ERROR), 3 times; start the import again later",
    });
    expect(exportsOf(shop)).toHaveLength(3);
  });
});

// Shopify runs a limited number of a shop's exports at once (one before API 2026-01, five since),
// refusing another with "already in progress". Exports here take a minute, longer than the ~50 s of
// retries a refused step used to get before the import failed.
describe.each([process.env.TEST_DATABASE_URL ? "postgres" : "pglite"] as const)("Shopify's limit of exports at a time (%s)", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE, { exportMs: 60_000, concurrentExports: 1 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('queued', 'running')`);
  });

  const exportsOf = (shop: string) => store.operations.filter((o) => o.shop === shop);

  it("an import that replaces one (a reconnection) cancels the replaced one's export and starts its own at once", async () => {
    const shop = newShop("replace");
    await install(h, shop);
    const first = await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    const old = await until("the first export", async () => exportsOf(shop)[0]);
    // Replaced once the first run has saved its export's id: before that, Shopify has an export the
    // run cannot name yet, and the new run takes it over instead (the last test of this block).
    await until("the first run to save its export", async () => (await h.app.db.prisma.backfillRun.findUniqueOrThrow({ where: { id: first.id } })).bulkOperationId);
    // The merchant reconnects (connection.server.ts startHistoryBackfill): the running import is replaced.
    const { id } = await requestBackfill(shop, { kinds: ["customers"] }, { replacing: "replaced by the import of the reconnection" });
    const mine = await until("the new import's export", async () => exportsOf(shop)[1], 15_000);
    expect(old.canceled).toBe(true);
    expect(mine.kind).toBe("customers");
    const run = await until("the new import to wait for its export", async () => {
      const r = await h.app.db.prisma.backfillRun.findUniqueOrThrow({ where: { id } });
      return r.bulkOperationId ? r : null;
    });
    expect({ status: run.status === "failed" ? "failed" : "under way", bulkOperationId: run.bulkOperationId, lastError: run.lastError }).toEqual({
      status: "under way",
      bulkOperationId: mine.id,
      lastError: null,
    });
  });

  it("a refusal is recognised by Shopify's BulkOperationUserErrorCode, whatever its words: the import waits for a turn, no error", async () => {
    const shop = newShop("refused");
    await install(h, shop);
    const before = store.answered.bulkOperationRunQuery ?? 0;
    store.refuseNextExports("LIMIT_REACHED", "Please try again later.", 1);
    const { id } = await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, { ...FAST_POLICY, backfillPollMs: 50 });
    // A step that failed would show its error until its retry (5 s later): every state is watched.
    const errors = new Set<string>();
    const run = await until("the run to wait for its export", async () => {
      const r = await h.app.db.prisma.backfillRun.findUniqueOrThrow({ where: { id } });
      if (r.lastError) errors.add(r.lastError);
      return r.bulkOperationId || r.status === "failed" ? r : null;
    }, 45_000);
    expect((store.answered.bulkOperationRunQuery ?? 0) - before).toBeGreaterThanOrEqual(2);
    expect([...errors]).toEqual([]);
    expect({ failed: run.status === "failed", bulkOperationId: run.bulkOperationId }).toEqual({ failed: false, bulkOperationId: exportsOf(shop)[0]?.id });
  });

  it("a worker that stopped after Shopify accepted the export, before the run saved its id: the next worker takes that export over", async () => {
    const shop = newShop("crash-submit");
    await install(h, shop);
    const { id } = await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    const accepted = await until("the export", async () => exportsOf(shop)[0]);
    await until("the run to wait for it", async () => (await h.app.db.prisma.backfillRun.findUniqueOrThrow({ where: { id } })).phase === "wait");
    await h.stopWorkers();
    // What a crash between submitBulkQuery() and saveStep() leaves: Shopify runs the export, the
    // run is still in "submit" under the dead worker's lease.
    await h.app.db.prisma.backfillRun.update({
      where: { id },
      data: { status: "running", phase: "submit", bulkOperationId: null, lockedBy: "crashed-worker", lockedUntil: new Date(Date.now() - 1_000) },
    });
    h.startWorkers(1, FAST_POLICY);
    const run = await until("the run to wait for an export again", async () => {
      const r = await h.app.db.prisma.backfillRun.findUniqueOrThrow({ where: { id } });
      return r.phase === "wait" || r.status === "failed" ? r : null;
    }, 30_000);
    expect({ failed: run.status === "failed", bulkOperationId: run.bulkOperationId, lastError: run.lastError }).toEqual({ failed: false, bulkOperationId: accepted.id, lastError: null });
    expect(exportsOf(shop)).toHaveLength(1);
  }, 60_000);
});
