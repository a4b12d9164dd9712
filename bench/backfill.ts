/**
 * History import: a generated store exported through the (fake) Bulk Operations API as JSONL,
 * streamed, planned and delivered to the marketing-service emulator.
 *
 *   npm run bench:backfill -- [--sizes 10000,50000,100000] [--db pglite|pg|both] [--workers 1]
 *                             [--cpu-prof DIR] [--timeline] [--statements]
 *
 * Size N = N customers + N orders (one line item each) + N/10 products (1–3 variants); each export
 * takes 3 s by the clock at the fake Shopify (EXPORT_MS in bench/shopify-child.ts; real ones take minutes for large stores,
 * which is why the next kind's export is started while one kind is imported). For each
 * size and database: a fresh database (PGlite in a temporary directory, or a new ms_bench_*
 * PostgreSQL database), the fake Shopify Admin and store in one child process and the emulator
 * in another (their memory is not the app's), a connected shop with an offline session, then
 * requestBackfill() and the sync worker(s) in this process (production policy), timed from the
 * request until everything planned was delivered. RSS is sampled every 100 ms; "above idle" is
 * the peak minus the RSS measured just before the import started.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { applyTestEnv } from "../test/support/env";
import { createBenchDatabase, fmt, mib, postgresAdminUrl, printTable, sampleRss, sleep, startEmulatorProcess, startProfiler, timeStatements } from "./support";
import { startShopifyChild, type ShopifyChild } from "./shopify-child";

const GOAL = { seconds: 300, rssAboveIdle: 300 * 1024 * 1024 };


// ---------------------------------------------------------------------------------------------
// Parent: the app side, measured.

interface Row {
  db: string;
  size: number;
  objects: number;
  seconds: number;
  exportWaitSeconds: number;
  calls: number;
  notDelivered: string;
  invalid: number;
  idle: number;
  peak: number;
  load: string;
}

interface Options {
  workers: number;
  adminUrl: string | undefined;
  /** Directory for V8 CPU profiles of this process (import window) and of the emulator child. */
  cpuProf: string | undefined;
  /** Print objects imported and calls delivered every 10 s (shows where a run slows down). */
  timeline: boolean;
  /** Print the count and time of each kind of SQL statement run through the raw runner. */
  statements: boolean;
}

async function runOne(shopify: ShopifyChild, dbKind: "pglite" | "postgres", size: number, { workers, adminUrl, cpuProf, timeline, statements }: Options): Promise<Row> {
  await shopify.store({ customers: size, orders: size, products: Math.max(1, Math.floor(size / 10)) });
  const label = `${dbKind}-${size}`;
  const emulator = await startEmulatorProcess(cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${cpuProf}`, `--cpu-prof-name=backfill-emulator-${label}.cpuprofile`] : []);
  const { openDatabase, installDatabase } = await import("../app/db.server");
  const { connectShop } = await import("../app/backfill/connect.server");
  const { requestBackfill, backfillProgress } = await import("../app/backfill/backfill.server");
  const { startWorker } = await import("../app/jobs/index.server");
  const { storeOfflineSession } = await import("../dev/shopify/offline-session");

  const pgDb = dbKind === "postgres" ? await createBenchDatabase(adminUrl!) : undefined;
  const dir = dbKind === "pglite" ? mkdtempSync(path.join(tmpdir(), "ms-bench-backfill-")) : undefined;
  const db = openDatabase(pgDb ? { kind: "postgres", url: pgDb.url } : { kind: "pglite", dataDir: dir! });
  try {
    await db.migrate();
    installDatabase(db);
    const shop = `bench-backfill-${randomUUID().slice(0, 8)}.myshopify.com`;
    await connectShop(shop, { apiKey: emulator.apiKey, baseUrl: emulator.url, importHistory: false });
    // Expiring, with a refresh token, as the app gets them now (a bench run longer than an hour refreshes it).
    await storeOfflineSession(shop, await shopify.token(shop), "bench");
    await emulator.clear();

    // Idle includes the code a first import loads (the Shopify library, undici): a first run in a
    // process would otherwise count it as import memory.
    await import("../app/shopify.server");
    await import("../app/shopify/admin-api.server");
    global.gc?.();
    await sleep(500);
    const idle = process.memoryUsage().rss;
    const rss = sampleRss(100);
    const profiler = cpuProf ? await startProfiler() : undefined;
    const timed = statements ? timeStatements(db) : undefined;
    const t0 = performance.now();
    await requestBackfill(shop, { orderDays: null });
    const started = Array.from({ length: workers }, (_, k) => startWorker({ id: `bench-backfill-${k + 1}` }));
    let exportWaitMs = 0;
    let nextTimeline = t0 + 10_000;
    try {
      let last = performance.now();
      for (;;) {
        const p = await backfillProgress(shop);
        const now = performance.now();
        if (timeline && now >= nextTimeline) {
          nextTimeline += 10_000;
          const [{ delivered }] = await db.sql.query<{ delivered: number }>(`SELECT count(*)::int AS delivered FROM "OutboundCall" WHERE status = 'delivered'`);
          console.log(`\n    ${fmt((now - t0) / 1000, 0)} s: ${p?.phase ?? "-"} ${p?.kind ?? "-"}, objects ${p?.objects ?? 0}, calls delivered ${delivered}, RSS ${mib(process.memoryUsage().rss)}`);
        }
        if (p && p.phase !== "import" && p.status !== "done") exportWaitMs += now - last;
        last = now;
        if (!p || p.status === "done" || p.status === "failed") {
          if (p?.status === "failed") throw new Error(`import failed: ${p.lastError}`);
          break;
        }
        await sleep(200);
      }
      await Promise.all(started.map((w) => w.idle({ timeoutMs: 1_800_000 })));
    } finally {
      await Promise.all(started.map((w) => w.stop()));
    }
    const seconds = (performance.now() - t0) / 1000;
    await profiler?.stop(path.join(cpuProf!, `backfill-app-${label}.cpuprofile`));
    const peak = rss.stop();
    if (timed) console.log(`\n${timed.report()}`);
    const progress = await backfillProgress(shop);
    const calls = await db.sql.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM "OutboundCall" GROUP BY status`);
    const [{ invalid }] = await db.sql.query<{ invalid: number }>(`SELECT count(*)::int AS invalid FROM "WebhookDelivery" WHERE outcome = 'invalid'`);
    return {
      db: dbKind === "pglite" ? "PGlite" : "PostgreSQL",
      size,
      objects: progress?.objects ?? 0,
      seconds,
      exportWaitSeconds: exportWaitMs / 1000,
      calls: calls.find((c) => c.status === "delivered")?.n ?? 0,
      notDelivered: calls.filter((c) => c.status !== "delivered").map((c) => `${c.status} ${c.n}`).join(", ") || "0",
      invalid,
      idle,
      peak,
      load: loadavg().map((l) => l.toFixed(1)).join(" "),
    };
  } finally {
    installDatabase(undefined);
    await db.close();
    await pgDb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await emulator.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "10000,50000,100000" },
      db: { type: "string", default: "both" },
      workers: { type: "string", default: "1" },
      "cpu-prof": { type: "string" },
      timeline: { type: "boolean", default: false },
      statements: { type: "boolean", default: false },
    },
  });
  const sizes = values.sizes.split(",").map(Number);
  const workers = Number(values.workers);
  if (!sizes.every((n) => Number.isInteger(n) && n >= 10 && n <= 200_000) || !(workers >= 1 && workers <= 16)) throw new Error("--sizes a list of 10..200000, --workers 1..16");
  if (!["pglite", "pg", "both"].includes(values.db)) throw new Error("--db pglite, pg or both");
  const adminUrl = values.db === "pglite" ? undefined : await postgresAdminUrl({ postgres: values.db === "pg" });
  const targets: ("pglite" | "postgres")[] = values.db === "pg" ? ["postgres"] : values.db === "pglite" || !adminUrl ? ["pglite"] : ["pglite", "postgres"];
  console.log(`backfill: size N = N customers + N orders + N/10 products; ${workers} worker(s) in this process, production policy; ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}; node ${process.version}`);
  if (values.db === "both" && !adminUrl) console.log("PostgreSQL: not measured (no server answered)");

  applyTestEnv({ LOG_LEVEL: "silent" });
  // One fake Admin for the whole run: the app reads its address once.
  const shopify = await startShopifyChild();
  const rows: Row[] = [];
  try {
    for (const db of targets) {
      for (const size of sizes) {
        process.stdout.write(`  ${db}, ${size} … `);
        const row = await runOne(shopify, db, size, { workers, adminUrl, cpuProf: values["cpu-prof"] && path.resolve(values["cpu-prof"]), timeline: values.timeline, statements: values.statements });
        rows.push(row);
        console.log(`${fmt(row.seconds, 1)} s, peak ${mib(row.peak - row.idle)} above idle`);
      }
    }
  } finally {
    await shopify.close();
  }
  console.log();
  printTable(
    ["db", "size", "objects", "seconds", "objects/s", "export wait s", "calls delivered", "not delivered", "invalid", "idle RSS", "peak above idle", "within 300 s / 300 MiB", "load (1/5/15)"],
    rows.map((r) => [
      r.db,
      r.size,
      r.objects,
      fmt(r.seconds, 1),
      fmt(r.objects / r.seconds, 0),
      fmt(r.exportWaitSeconds, 1),
      r.calls,
      r.notDelivered,
      r.invalid,
      mib(r.idle),
      mib(r.peak - r.idle),
      r.seconds <= GOAL.seconds && r.peak - r.idle <= GOAL.rssAboveIdle ? "yes" : "no",
      r.load,
    ]),
  );
  console.log(`goal: ≤ ${GOAL.seconds} s and ≤ ${mib(GOAL.rssAboveIdle)} above idle at 100k (time linear in size, memory flat)`);
}

await main();
process.exit(0);
