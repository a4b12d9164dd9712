import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startWorker } from "~/jobs/index.server";
import { UPKEEP_LOCK_KEY, UPKEEP_POLICY, upkeepQueueTables } from "~/pipeline/upkeep.server";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";

// PGlite has no autovacuum and the CI's PostgreSQL runs without it: without the worker's own
// VACUUM, every claim walks the dead versions of every row ever claimed (a 100k-customer import
// fell from 850 to 150 objects/s).
describeEachDatabase("queue-table upkeep", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  const stats = async () => {
    const [row] = await app.db.sql.query<{ dead: number; vacuums: number; analyzes: number }>(
      `SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums, analyze_count::int AS analyzes
         FROM pg_stat_user_tables WHERE relname = 'WebhookDelivery'`,
    );
    return row!;
  };

  /** Rows claimed and finished, as the pipeline does: two dead versions each. */
  const churn = async (rows: number) => {
    await app.db.sql.exec(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody")
         SELECT 'upkeep-' || g, 'upkeep.myshopify.com', 'customers/update', 'w' || g, 'e' || g, '{}'
           FROM generate_series(1, ${rows}) g`,
    );
    await app.db.sql.exec(`UPDATE "WebhookDelivery" SET status = 'running' WHERE id LIKE 'upkeep-%'`);
    await app.db.sql.exec(`UPDATE "WebhookDelivery" SET status = 'done' WHERE id LIKE 'upkeep-%'`);
    await app.db.sql.exec(`DELETE FROM "WebhookDelivery" WHERE id LIKE 'upkeep-%'`);
    // The statistics reach pg_stat_user_tables within a second or so.
    for (let i = 0; i < 100 && (await stats()).dead < UPKEEP_POLICY.minDeadRows; i++) await sleep(100);
    expect((await stats()).dead).toBeGreaterThanOrEqual(UPKEEP_POLICY.minDeadRows);
  };

  it("a worker vacuums a queue table once its dead rows pass the threshold", async () => {
    await churn(3_000);
    const before = await stats();
    const worker = startWorker({ id: "upkeep-worker", policy: { upkeepCheckMs: 50, pollMs: 20 } });
    try {
      for (let i = 0; i < 200 && (await stats()).vacuums === before.vacuums; i++) await sleep(50);
    } finally {
      await worker.stop();
    }
    const after = await stats();
    expect(after.vacuums).toBeGreaterThan(before.vacuums);
    expect(after.dead).toBeLessThan(UPKEEP_POLICY.minDeadRows);
  });

  // On PGlite the worker's own sampled ANALYZE keeps the statistics; a second one here would hold
  // the thread that answers webhooks for nothing. PostgreSQL vacuums beside the traffic, with them.
  it(`vacuums ${database === "pglite" ? "without" : "with"} statistics`, async () => {
    await churn(3_000);
    const before = await stats();
    const result = await upkeepQueueTables();
    expect(result?.vacuumed.map((v) => v.table)).toContain("WebhookDelivery");
    for (let i = 0; i < 50 && (await stats()).vacuums === before.vacuums; i++) await sleep(100);
    const after = await stats();
    expect(after.vacuums).toBeGreaterThan(before.vacuums);
    if (database === "pglite") expect(after.analyzes).toBe(before.analyzes);
    else expect(after.analyzes).toBeGreaterThan(before.analyzes);
  });

  it("leaves tables with few dead rows alone", async () => {
    const result = await upkeepQueueTables();
    expect(result?.vacuumed).toEqual([]);
    expect(result?.analyzed).toEqual([]);
  });

  // PGlite's Postgres runs in single-user mode, where nothing checkpoints: without upkeep's own
  // CHECKPOINT every byte of WAL since the app started stays on disk and is replayed after a crash.
  it.runIf(database === "pglite")("checkpoints PGlite once enough WAL was written, so the old WAL is dropped, not kept and replayed", async () => {
    const walSince = async () => {
      const [row] = await app.db.sql.query<{ since: string; redo: string }>(
        `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::bigint::text AS since, pg_walfile_name(redo_lsn) AS redo
           FROM pg_control_checkpoint()`,
      );
      return { since: Number(row.since), redoSegment: row.redo };
    };
    const policy = { ...UPKEEP_POLICY, pgliteCheckpointWalBytes: 8 * 1024 * 1024 };
    // Well past the threshold, across several WAL segments (as weeks of webhooks would be).
    for (let i = 0; i < 3; i++) {
      await app.db.sql.exec(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", status)
           SELECT 'wal-${i}-' || g, 'wal.myshopify.com', 'orders/create', 'w${i}-' || g, 'e${i}-' || g,
                  (SELECT string_agg(md5(g::text || x), '') FROM generate_series(1, 100) x), 'done'
             FROM generate_series(1, 1000) g`,
      );
      await app.db.sql.exec(`SELECT pg_switch_wal()`);
    }
    const before = await walSince();
    expect(before.since).toBeGreaterThan(2 * 16 * 1024 * 1024);

    const result = await upkeepQueueTables(policy);
    expect(result?.checkpoint?.walBytes).toBeGreaterThanOrEqual(before.since);
    const after = await walSince();
    expect(after.since).toBeLessThan(policy.pgliteCheckpointWalBytes);
    // Every segment before the checkpoint's redo point is gone (removed or recycled under a later name).
    const segments = await app.db.sql.query<{ name: string }>(`SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'`);
    expect(segments.filter((s) => s.name < after.redoSegment)).toEqual([]);

    // Under the threshold, no checkpoint: each one writes out every dirty buffer on the app's thread.
    expect((await upkeepQueueTables(policy))?.checkpoint).toBeUndefined();
    await app.db.sql.exec(`DELETE FROM "WebhookDelivery" WHERE shop = 'wal.myshopify.com'`);
  });

  // Nor is there autovacuum to prevent transaction-id wraparound: rows of relations nobody writes
  // (the catalogs, the shops) would one day look as if written in the future, and vanish.
  it.runIf(database === "pglite")("freezes PGlite's relations once their oldest transaction ids grow old", async () => {
    const databaseAge = async () =>
      (await app.db.sql.query<{ age: number }>(`SELECT age(datfrozenxid)::int AS age FROM pg_database WHERE datname = current_database()`))[0]
        .age;
    for (let i = 0; i < 3_000; i++) await app.db.sql.query("SELECT txid_current()"); // 3,000 transactions, as acknowledgements are
    expect(await databaseAge()).toBeGreaterThan(3_000);

    expect((await upkeepQueueTables())?.frozen).toBeUndefined(); // far below the real threshold
    const result = await upkeepQueueTables({ ...UPKEEP_POLICY, pgliteFreezeAfterXids: 1_000 });
    expect(result?.frozen?.relations).toBeGreaterThan(50); // the catalogs among them
    expect(await databaseAge()).toBeLessThan(1_000);
  });

  it.runIf(database === "postgres")("one worker vacuums at a time: the others skip instead of waiting", async () => {
    await churn(3_000);
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [UPKEEP_LOCK_KEY]);
      expect(await upkeepQueueTables()).toBeUndefined();
      await holder.query("SELECT pg_advisory_unlock($1)", [UPKEEP_LOCK_KEY]);
      const result = await upkeepQueueTables();
      expect(result?.vacuumed.map((v) => v.table)).toContain("WebhookDelivery");
    } finally {
      await holder.end();
    }
  });
});
