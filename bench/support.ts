/**
 * Shared helpers of the benchmarks: argument parsing, percentiles, aligned tables, PostgreSQL
 * bench databases, a fresh database per run, connected shops, recorded webhooks, workers, RSS
 * sampling, and the marketing-service emulator in a child process.
 *
 * Run as a program (`--emulator-child`) it IS that child: it starts the emulator and answers
 * the parent over IPC. Benchmarks print figures; they never assert.
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Database } from "../app/db.server";
import type { SqlQueryable } from "../app/db/migrate.server";
import type { PipelinePolicy } from "../app/pipeline/policy";
import type { ExpiringTokenPair } from "../dev/shopify/fake-admin";

// ---------------------------------------------------------------------------------------------
// Numbers and tables

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The same of values in any order. */
export function percentileOf(values: number[], p: number): number {
  return percentile([...values].sort((a, b) => a - b), p);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "-";
  return value.toFixed(digits);
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

/** Prints rows as an aligned text table (numbers right-aligned). */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const numeric = headers.map((_, i) => rows.every((r) => /^[-+]?[\d.,]+( ?[a-zA-Z×%/]+)?$|^-$/.test(String(r[i] ?? ""))));
  const line = (r: string[]) => r.map((c, i) => (numeric[i] ? (c ?? "").padStart(widths[i]) : (c ?? "").padEnd(widths[i]))).join("  ");
  console.log(line(headers));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of cells.slice(1)) console.log(line(r));
}

/** The machine line every benchmark ends with: its figures mean little without the load beside them. */
export function printMachine(): void {
  console.log(`\nmachine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")} (other processes share these cores: compare runs made alike).`);
}

// ---------------------------------------------------------------------------------------------
// Webhook bodies

/**
 * The documented orders/create body (`fixture("orders/create")`) as the order numbered `offset`
 * after it: its id and its GraphQL id replaced, written as Shopify writes them (beyond 2^53).
 */
export function documentedOrderAs(order: string, offset: number): string {
  const id = String(820982911946154508n + BigInt(offset));
  return order.replace('"id": 820982911946154500', `"id": ${id}`).replace("gid://shopify/Order/820982911946154508", `gid://shopify/Order/${id}`);
}

// ---------------------------------------------------------------------------------------------
// Process helpers

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Samples process.memoryUsage().rss every `everyMs` until stopped; returns the peak. */
export function sampleRss(everyMs = 100): { peak(): number; stop(): number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, everyMs);
  timer.unref();
  return {
    peak: () => Math.max(peak, process.memoryUsage().rss),
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/**
 * CPU milliseconds used so far by every process of a command name (Linux /proc; undefined
 * elsewhere). The PostgreSQL server is a process per connection, beside the benchmark: this is
 * how its share of a run's CPU on a shared machine is seen.
 */
function cpuMsOfCommand(command: string): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const ticksPerSecond = 100; // USER_HZ: 100 on every Linux architecture Node runs on
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const open = stat.indexOf("(");
      const close = stat.lastIndexOf(")");
      if (stat.slice(open + 1, close) !== command) continue;
      // Fields after the command, from the 3rd (state): utime and stime are the 14th and 15th;
      // cutime and cstime (16th, 17th) keep the CPU of children that ended, such as the server's
      // autovacuum workers, on the PostgreSQL postmaster.
      const fields = stat.slice(close + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** execArgv for a child that runs TypeScript like this process does (tsx). */
export function tsxExecArgv(): string[] {
  const inherited = process.execArgv.filter((a) => !a.startsWith("--cpu-prof") && !a.startsWith("--inspect"));
  return inherited.some((a) => a.includes("tsx")) ? inherited : ["--import", "tsx", ...inherited];
}

/** Waits for one IPC message of a type from a child (bounded). */
export async function nextMessage<T extends { type: string }>(child: ChildProcess, type: string, timeoutMs = 60_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`child did not send "${type}" within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: unknown) => {
      if (m && typeof m === "object" && (m as { type?: string }).type === type) {
        cleanup();
        resolve(m as T);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`child exited (${code}) before sending "${type}"`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

/** Ends a child: asks politely over IPC, then SIGKILLs it after `graceMs`. */
export async function endChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  if (child.connected) child.send({ type: "stop" }, () => undefined); // it may be leaving already
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export const DEFAULT_PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";

/** The server to use for PostgreSQL runs, or undefined when there is none (or --no-postgres). */
export async function postgresAdminUrl(flags: { postgres?: boolean; noPostgres?: boolean }): Promise<string | undefined> {
  if (flags.noPostgres) return undefined;
  const url = process.env.DATABASE_URL_BENCH ?? DEFAULT_PG_ADMIN_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_500 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return url;
  } catch (error) {
    if (flags.postgres || process.env.DATABASE_URL_BENCH) throw new Error(`PostgreSQL at ${url} does not answer: ${(error as Error).message}`, { cause: error });
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates an empty database `ms_bench_*` on the admin URL's server; returns its URL and a drop(). */
export async function createBenchDatabase(adminUrl: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `ms_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return { url: u.href, name, drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

// ---------------------------------------------------------------------------------------------
// A run's database, shops, webhooks and workers. The app's modules are imported when first used:
// a benchmark sets the environment (applyTestEnv) before any of them reads its configuration.

export type BenchDb = "pglite" | "postgres";

/**
 * A fresh, migrated database made the process database: PGlite in a temporary directory (or in
 * memory), or a new ms_bench_* PostgreSQL database on `adminUrl`. close() removes it again.
 */
export async function openBenchDatabase(
  kind: BenchDb,
  options: { adminUrl?: string; pgliteMemory?: boolean; tmpPrefix?: string } = {},
): Promise<{ db: Database; close(): Promise<void> }> {
  const { openDatabase, installDatabase } = await import("../app/db.server");
  if (kind === "postgres" && !options.adminUrl) throw new Error("a PostgreSQL run needs the admin URL (postgresAdminUrl)");
  const pgDb = kind === "postgres" ? await createBenchDatabase(options.adminUrl!) : undefined;
  const dir = kind === "pglite" ? (options.pgliteMemory ? "memory://" : mkdtempSync(path.join(tmpdir(), options.tmpPrefix ?? "ms-bench-pglite-"))) : undefined;
  const db = openDatabase(pgDb ? { kind: "postgres", url: pgDb.url } : { kind: "pglite", dataDir: dir! });
  const close = async () => {
    installDatabase(undefined);
    await db.close();
    await pgDb?.drop();
    if (dir && dir !== "memory://") rmSync(dir, { recursive: true, force: true });
  };
  try {
    await db.migrate();
    installDatabase(db);
  } catch (error) {
    await close();
    throw error;
  }
  return { db, close };
}

/**
 * Installs and connects `shop` to a service account (deliveries are recorded only for an installed
 * shop). With `shopify` (bench/shopify-child.ts), the shop also gets its offline session, as every
 * installed shop has: the app then asks that Admin what production asks Shopify while planning
 * (the consent of new subscribers).
 */
export async function connectBenchShop(shop: string, service: { url: string; apiKey: string }, shopify?: { token(shop: string): Promise<ExpiringTokenPair> }): Promise<void> {
  const { connectShop } = await import("../app/backfill/connect.server");
  await connectShop(shop, { apiKey: service.apiKey, baseUrl: service.url, importHistory: false });
  if (!shopify) return;
  const { storeOfflineSession } = await import("../dev/shopify/offline-session");
  await storeOfflineSession(shop, await shopify.token(shop), "bench");
}

/** Records a customers/create as the webhook route does (on PGlite: journaled until moveJournaledDeliveries). */
export async function recordCustomerCreate(shop: string, customer: { id: string; email?: string; updatedAt?: string }): Promise<void> {
  const { recordDelivery } = await import("../app/pipeline/record.server");
  const { customerBody } = await import("../test/support/pipeline");
  await recordDelivery({
    shop,
    topic: "customers/create",
    webhookId: randomUUID(),
    eventId: randomUUID(),
    triggeredAt: new Date().toISOString(),
    apiVersion: "2026-10",
    rawBody: JSON.stringify(customerBody(customer)),
  });
}

/** `count` workers in this process, ids `${prefix}-1`, `${prefix}-2`, …: each claims with its own cursors. */
export async function startBenchWorkers(
  count: number,
  prefix: string,
  policy?: Partial<PipelinePolicy>,
): Promise<{ idle(timeoutMs: number): Promise<void>; stop(): Promise<void> }> {
  const { startWorker } = await import("../app/jobs/index.server");
  const workers = Array.from({ length: count }, (_, k) => startWorker({ id: `${prefix}-${k + 1}`, policy }));
  return {
    idle: async (timeoutMs) => {
      await Promise.all(workers.map((w) => w.idle({ timeoutMs })));
    },
    stop: async () => {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The marketing service emulator, in its own process (the service is remote in production; here
// it must not share an event loop with the app or the load generator).

export interface EmulatorProcess {
  url: string;
  apiKey: string;
  /** Number of /api requests recorded so far (by status class). */
  /** `byPath`: requests by method and path (no query): the calls, and any other request the app made. */
  stats(): Promise<{ requests: number; byStatus: Record<string, number>; byPath: Record<string, number>; rss: number; cpuMs: number }>;
  /** The recorded /api requests (method, path, body), then clears the recording. */
  takeRequests(): Promise<{ method: string; path: string; body: unknown; status: number | null }[]>;
  clear(): Promise<void>;
  /** The emulator's faults (dev/emulator/server.ts), e.g. the latency of a service far away. */
  setFaults(faults: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** CPU spent in ms: this process, the emulator's, and the PostgreSQL server's (undefined off Linux). */
export interface CpuSpent {
  cpuMs: number;
  emulatorCpuMs: number;
  serverCpuMs: number | undefined;
  /** The emulator's stats when the meter stopped. */
  emulatorStats: Awaited<ReturnType<EmulatorProcess["stats"]>>;
}

/** Starts counting the CPU every process of a run spends (the cores are shared); stop() says how much. */
export async function meterCpu(emulator: EmulatorProcess): Promise<{ stop(): Promise<CpuSpent> }> {
  const emulatorAtStart = (await emulator.stats()).cpuMs;
  const serverAtStart = cpuMsOfCommand("postgres");
  const ownAtStart = process.cpuUsage();
  return {
    async stop() {
      const own = process.cpuUsage(ownAtStart);
      const serverNow = cpuMsOfCommand("postgres");
      const emulatorStats = await emulator.stats();
      return {
        cpuMs: (own.user + own.system) / 1000,
        emulatorCpuMs: emulatorStats.cpuMs - emulatorAtStart,
        serverCpuMs: serverAtStart === undefined || serverNow === undefined ? undefined : serverNow - serverAtStart,
        emulatorStats,
      };
    },
  };
}

const SELF = fileURLToPath(import.meta.url);

export async function startEmulatorProcess(extraExecArgv: string[] = []): Promise<EmulatorProcess> {
  const child = fork(SELF, ["--emulator-child"], { execArgv: [...tsxExecArgv(), ...extraExecArgv], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ready = await nextMessage<{ type: "ready"; url: string; apiKey: string }>(child, "ready");
  let seq = 0;
  const ask = async <T,>(type: string, value?: unknown): Promise<T> => {
    const id = ++seq;
    const answer = nextMessage<{ type: string; value: T }>(child, `${type}:${id}`);
    child.send({ type, id, value });
    return (await answer).value;
  };
  return {
    url: ready.url,
    apiKey: ready.apiKey,
    stats: () => ask("stats"),
    takeRequests: () => ask("take"),
    clear: () => ask("clear"),
    setFaults: (faults) => ask("faults", faults),
    close: () => endChild(child),
  };
}

async function emulatorChild(): Promise<void> {
  const { startEmulator } = await import("../dev/emulator/server");
  const emulator = await startEmulator({ port: 0 });
  let byStatus: Record<string, number> = {};
  let byPath: Record<string, number> = {};
  let total = 0;
  const count = (status: Record<string, number>, paths: Record<string, number>, r: (typeof emulator.requests)[number]) => {
    const k = r.status === null ? "none" : `${String(r.status)[0]}xx`;
    status[k] = (status[k] ?? 0) + 1;
    const p = `${r.method} ${r.path.split("?")[0]}`;
    paths[p] = (paths[p] ?? 0) + 1;
  };
  // Recording stays on; counts survive clearing, so memory stays bounded on long runs.
  const fold = () => {
    for (const r of emulator.requests) count(byStatus, byPath, r);
    total += emulator.requests.length;
    emulator.requests.length = 0;
  };
  const foldTimer = setInterval(() => {
    if (emulator.requests.length > 50_000) fold();
  }, 1_000);
  process.on("message", (m: { type: string; id: number; value?: unknown }) => {
    const reply = (value: unknown) => process.send!({ type: `${m.type}:${m.id}`, value });
    switch (m.type) {
      case "stats": {
        const live: Record<string, number> = { ...byStatus };
        const livePaths: Record<string, number> = { ...byPath };
        for (const r of emulator.requests) count(live, livePaths, r);
        const cpu = process.cpuUsage();
        return reply({ requests: total + emulator.requests.length, byStatus: live, byPath: livePaths, rss: process.memoryUsage().rss, cpuMs: (cpu.user + cpu.system) / 1000 });
      }
      case "take": {
        const taken = emulator.requests.map((r) => ({ method: r.method, path: r.path, body: r.body, status: r.status }));
        fold();
        return reply(taken);
      }
      case "faults":
        emulator.setFaults(m.value as Parameters<typeof emulator.setFaults>[0]);
        return reply(null);
      case "clear":
        fold();
        total = 0;
        byStatus = {};
        byPath = {};
        return reply(null);
      case "stop":
        clearInterval(foldTimer);
        void emulator.close().then(() => process.disconnect());
        return;
    }
  });
  process.send!({ type: "ready", url: emulator.url, apiKey: emulator.apiKey });
}

if (process.argv[1] === SELF && process.argv.includes("--emulator-child")) {
  // A lost parent must not leave an emulator behind.
  process.on("disconnect", () => setTimeout(() => process.exit(0), 2_000).unref());
  await emulatorChild();
}

/**
 * Counts and times the statements run through a Database's `sql` runner (transactions included),
 * by their first 90 characters. On PGlite, whose statements run one at a time, a statement's time
 * includes waiting for the one connection.
 */
export function timeStatements(db: Database): { reset(): void; report(): string } {
  const stats = new Map<string, { n: number; ms: number }>();
  const timed =
    (query: SqlQueryable["query"]): SqlQueryable["query"] =>
    async <T>(text: string, params?: unknown[]) => {
      const t = performance.now();
      try {
        return await query<T>(text, params);
      } finally {
        const key = text.replace(/\s+/g, " ").trim().slice(0, 90);
        const s = stats.get(key) ?? { n: 0, ms: 0 };
        s.n++;
        s.ms += performance.now() - t;
        stats.set(key, s);
      }
    };
  const sql = db.sql;
  const query = sql.query.bind(sql);
  const prepared = sql.prepared.bind(sql);
  const transaction = sql.transaction.bind(sql);
  sql.query = timed(query);
  // Prepared statements (the queue claims among them) are timed under their text.
  sql.prepared = async <T>(statement: Parameters<typeof prepared>[0], params: Parameters<typeof prepared>[1]) =>
    timed(async <U>() => prepared<U>(statement, params))<T>(statement.text);
  sql.transaction = (fn) => transaction((tx) => fn({ ...tx, query: timed(tx.query.bind(tx)) }));
  return {
    reset: () => stats.clear(),
    report: () => {
      const text = [...stats]
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 20)
        .map(([key, s]) => `${fmt(s.ms, 0).padStart(7)} ms ${String(s.n).padStart(6)} × ${fmt(s.ms / s.n, 2).padStart(6)} ms  ${key}`)
        .join("\n");
      stats.clear();
      return text;
    },
  };
}

/** `--cpu-prof DIR`: a V8 CPU profile of this process over a measured window (started now, written on stop). */
export async function startProfiler(): Promise<{ stop(file: string): Promise<void> }> {
  const { Session } = await import("node:inspector/promises");
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return {
    stop: async (file) => {
      const { profile } = await session.post("Profiler.stop");
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
