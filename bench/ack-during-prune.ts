/**
 * Webhook acknowledgement latency while retention prunes a large backlog.
 *
 *   npx tsx bench/ack-during-prune.ts [--rows 50000] [--rate 200] [--baseline 5]
 *                                     [--postgres | --no-postgres] [--unbatched]
 *
 * The app (production build behind Express, worker off) runs in a child process on a fresh PGlite
 * directory (and on a fresh PostgreSQL database when a server answers). The child seeds `--rows`
 * delivered service calls and as many finished deliveries, all older than the retention period.
 * The parent sends signed `customers/create` webhooks on an open loop (`--rate` per second;
 * latency from the scheduled send time, so a stall is charged to every request it delays):
 *   baseline      `--baseline` seconds with nothing else running (after 3 s of uncounted warm-up)
 *   during prune  from the moment pruneOldRows starts until it returns
 * `--unbatched` adds the pre-batching prune (one DELETE per table) on a re-seeded backlog, for
 * comparison. Prints p50/p90/p99/max, errors, the prune's duration and rows; never asserts.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type * as Runtime from "../app/server/runtime.server";
import {
  createBenchDatabase,
  endChild,
  fmt,
  nextMessage,
  percentile,
  postgresAdminUrl,
  printTable,
  sleep,
  tsxExecArgv,
} from "./support";

const SELF = fileURLToPath(import.meta.url);
const SHOP = "bench-prune.myshopify.com";
/** The goal of bench/ack-latency.ts. */
const TARGET_P99_MS = 25;
const RETENTION_DAYS = 14;

interface ChildOptions {
  db: "pglite" | "postgres";
  dbUrl?: string;
  pgliteDir?: string;
  rows: number;
}

// ---------------------------------------------------------------------------------------------
// The server child

async function serveChild(o: ChildOptions): Promise<void> {
  const { applyTestEnv } = await import("../test/support/env");
  applyTestEnv({ LOG_LEVEL: "silent", RUN_WORKER_IN_PROCESS: "false" });
  // The built app (one copy of every module, as in production): see app/server/runtime.server.ts.
  const app = (await import(pathToFileURL(path.resolve(import.meta.dirname, "../build/server/runtime.js")).href)) as typeof Runtime;
  // pruneOldRows from the build too: the source copy would see another database() and another
  // webhook-priority state than the route it must give way to.
  const { openDatabase, installDatabase, startHttpServer, pruneOldRows } = app;
  const db = openDatabase(o.db === "postgres" ? { kind: "postgres", url: o.dbUrl! } : { kind: "pglite", dataDir: o.pgliteDir! });
  await db.migrate();
  installDatabase(db);
  // Deliveries are recorded only for an installed shop (otherwise every webhook is a cheap 404).
  await db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt") VALUES ($1, now()) ON CONFLICT DO NOTHING`, [SHOP]);
  const http = await startHttpServer({ build: app.serverBuild, clientDir: app.CLIENT_DIR, port: 0, host: "127.0.0.1" });

  const old = new Date(Date.now() - (RETENTION_DAYS + 10) * 86_400_000).toISOString();
  const seed = async () => {
    const t = performance.now();
    await db.sql.exec(`
      INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", status, outcome, "receivedAt", "runAt", "finishedAt")
        SELECT 'old-' || g || '-' || md5(random()::text), 'old.myshopify.com', 'customers/update', 'old-' || g, 'old-' || g || '-' || md5(random()::text),
               repeat('x', 600), 'done', 'planned', '${old}'::timestamp + g * interval '1 ms', '${old}'::timestamp, '${old}'::timestamp
          FROM generate_series(1, ${o.rows}) g;
      INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, "createdAt", "retryFrom", "runAt", "deliveredAt", attempts)
        SELECT 'old.myshopify.com', 'customer:' || g, 'customer', jsonb_build_object('op', 'person.upsert', 'email', 'p' || g || '@example.com'),
               'delivered', '${old}'::timestamp, '${old}'::timestamp, '${old}'::timestamp, '${old}'::timestamp, 1
          FROM generate_series(1, ${o.rows}) g;
    `);
    if (db.kind === "pglite") await db.sql.exec(`ANALYZE "WebhookDelivery", "OutboundCall"`);
    return (performance.now() - t) / 1000;
  };
  // The prune before batching (kept here for comparison only): one statement per table.
  const unbatched = async () => {
    const before = new Date(Date.now() - RETENTION_DAYS * 86_400_000).toISOString();
    const [calls] = await db.sql.query<{ n: number }>(
      `WITH gone AS (DELETE FROM "OutboundCall" WHERE status IN ('delivered', 'refused') AND "createdAt" < $1::timestamp RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before],
    );
    const [deliveries] = await db.sql.query<{ n: number }>(
      `WITH gone AS (DELETE FROM "WebhookDelivery" d WHERE d.status = 'done' AND d."receivedAt" < $1::timestamp
         AND NOT EXISTS (SELECT 1 FROM "OutboundCall" c WHERE c."deliveryId" = d.id) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before],
    );
    return { calls: calls.n, deliveries: deliveries.n, batches: 2 };
  };

  process.on("message", (m: { type: string; mode?: string }) => {
    if (m.type === "seed") void seed().then((seconds) => process.send!({ type: "seeded", seconds }));
    if (m.type === "prune") {
      const t = performance.now();
      // How long the prune held the one thread at a time (PGlite runs its statements on it).
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const work = m.mode === "unbatched" ? unbatched() : pruneOldRows(RETENTION_DAYS);
      void work.then((result) => {
        loop.disable();
        const loopMs = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
        process.send!({ type: "pruned", seconds: (performance.now() - t) / 1000, result, loopMs });
      });
    }
    if (m.type === "stop") {
      void http
        .close()
        .then(() => db.close())
        .then(() => process.send!({ type: "stopped" }, () => process.disconnect()));
    }
  });
  process.send!({ type: "ready", url: http.url });
}

// ---------------------------------------------------------------------------------------------
// The load generator

interface LoadResult {
  measured: number;
  latencies: number[];
  errors: number;
  seconds: number;
}

/** Open loop at `rate` until `until()` says stop (checked at every send); latencies from the scheduled time. */
async function openLoop(url: string, rate: number, until: () => boolean, tag: string): Promise<LoadResult> {
  const { webhookHeaders } = await import("../test/support/webhooks");
  const { customerBody } = await import("../test/support/pipeline");
  const target = new URL("/webhooks", url).href;
  const interval = 1000 / rate;
  const latencies: number[] = [];
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const start = performance.now() + 5;
  let i = 0;
  while (!until()) {
    const now = performance.now();
    while (start + i * interval <= now) {
      const due = start + i * interval;
      const body = JSON.stringify(customerBody({ id: String(5_000_000_000 + Math.floor(Math.random() * 1e9)) }));
      const headers = webhookHeaders({ topic: "customers/create", shop: SHOP, body, eventId: `prune-${tag}-${i}` });
      const p = fetch(target, { method: "POST", headers, body, signal: AbortSignal.timeout(30_000) })
        .then(async (res) => {
          await res.arrayBuffer();
          latencies.push(performance.now() - due);
          if (res.status !== 200) errors++;
        })
        .catch(() => {
          latencies.push(performance.now() - due);
          errors++;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      i++;
    }
    await sleep(Math.max(0, Math.min(5, start + i * interval - performance.now())));
  }
  await Promise.all([...inFlight]);
  return { measured: i, latencies: latencies.sort((a, b) => a - b), errors, seconds: (performance.now() - start) / 1000 };
}

async function phase(child: ChildProcess, url: string, rate: number, mode: "baseline" | "batched" | "unbatched", baselineS: number) {
  if (mode === "baseline") {
    const end = performance.now() + baselineS * 1000;
    return { load: await openLoop(url, rate, () => performance.now() > end, "baseline") };
  }
  const seeded = await (async () => {
    const answer = nextMessage<{ type: string; seconds: number }>(child, "seeded", 600_000);
    child.send({ type: "seed" });
    return (await answer).seconds;
  })();
  let done = false;
  const pruned = nextMessage<{ type: string; seconds: number; result: Record<string, number>; loopMs: { p99: number; max: number } }>(child, "pruned", 1_800_000).finally(() => (done = true));
  child.send({ type: "prune", mode });
  const load = await openLoop(url, rate, () => done, mode);
  return { load, seeded, prune: await pruned };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: "string", default: "50000" },
      rate: { type: "string", default: "200" },
      baseline: { type: "string", default: "5" },
      postgres: { type: "boolean", default: false },
      "no-postgres": { type: "boolean", default: false },
      unbatched: { type: "boolean", default: false },
    },
  });
  const rows = Number(values.rows);
  const rate = Number(values.rate);
  const baselineS = Number(values.baseline);
  if (!(rows > 0 && rows <= 5_000_000 && rate > 0 && rate <= 2_000 && baselineS > 0 && baselineS <= 120)) {
    throw new Error("--rows must be 1..5000000, --rate 1..2000, --baseline 1..120 s");
  }
  if (!existsSync(path.resolve(import.meta.dirname, "../build/server/index.js"))) throw new Error("build/server/index.js is missing: run `npm run build` first");
  const adminUrl = await postgresAdminUrl({ postgres: values.postgres, noPostgres: values["no-postgres"] });
  console.log(`ack-during-prune: ${rate} webhooks/s open loop; ${rows} old calls + ${rows} old deliveries to prune; node ${process.version}`);

  const table: (string | number)[][] = [];
  for (const db of adminUrl ? (["pglite", "postgres"] as const) : (["pglite"] as const)) {
    const o: ChildOptions = { db, rows };
    const pgDb = db === "postgres" ? await createBenchDatabase(adminUrl!) : undefined;
    if (pgDb) o.dbUrl = pgDb.url;
    else o.pgliteDir = mkdtempSync(path.join(tmpdir(), "ms-bench-prune-"));
    const child = fork(SELF, ["--child", JSON.stringify(o)], { execArgv: tsxExecArgv(), stdio: ["ignore", "inherit", "inherit", "ipc"] });
    try {
      const { url } = await nextMessage<{ type: "ready"; url: string }>(child, "ready", 300_000);
      // Warm-up (not counted): the first requests compile routes and plans.
      await openLoop(url, rate, ((end) => () => performance.now() > end)(performance.now() + 3_000), `warmup-${db}`);
      const modes = ["baseline", "batched", ...(values.unbatched ? ["unbatched" as const] : [])] as const;
      for (const mode of modes) {
        process.stdout.write(`  ${db} ${mode} … `);
        const r = await phase(child, url, rate, mode, baselineS);
        console.log(`done${r.seeded !== undefined ? ` (seeded in ${fmt(r.seeded)} s)` : ""}`);
        const { load } = r;
        const p99 = percentile(load.latencies, 99);
        table.push([
          db === "pglite" ? "PGlite" : "PostgreSQL",
          mode === "baseline" ? "no prune" : mode === "batched" ? "during prune (batched)" : "during prune (unbatched, old)",
          load.measured,
          fmt(percentile(load.latencies, 50)),
          fmt(percentile(load.latencies, 90)),
          fmt(p99),
          fmt(load.latencies.at(-1) ?? Number.NaN),
          load.errors,
          r.prune ? fmt(r.prune.seconds) : "-",
          r.prune ? `${r.prune.result.calls}+${r.prune.result.deliveries}` : "-",
          r.prune ? String(r.prune.result.batches) : "-",
          r.prune ? `${fmt(r.prune.loopMs.p99)} / ${fmt(r.prune.loopMs.max)}` : "-",
          p99 <= TARGET_P99_MS ? "ok" : "MISS",
        ]);
      }
      const stopped = nextMessage(child, "stopped", 60_000);
      child.send({ type: "stop" });
      await stopped;
    } finally {
      await endChild(child);
      await pgDb?.drop();
      if (o.pgliteDir) rmSync(o.pgliteDir, { recursive: true, force: true });
    }
  }
  console.log();
  printTable(
    ["database", "phase", "webhooks", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors", "prune s", "rows pruned", "statements", "loop delay p99 / max ms", `p99≤${TARGET_P99_MS}ms`],
    table,
  );
  console.log(`\nmachine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")} (other processes share these cores).`);
}

const childIndex = process.argv.indexOf("--child");
if (childIndex > 0) {
  process.on("disconnect", () => setTimeout(() => process.exit(0), 5_000).unref());
  await serveChild(JSON.parse(process.argv[childIndex + 1]) as ChildOptions);
} else {
  await main();
}
