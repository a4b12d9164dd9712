/**
 * Memory of the production server (`npm run serve`, what `npm start` runs after building) on
 * embedded PGlite: first start on a fresh data directory, then a restart on the same directory.
 *
 *   npx tsx bench/memory.ts [--webhooks 300] [--settle 10] [--dir path] [--keep] [--env NAME=value …]
 *                           [--script serve|start]
 *
 * For each start it prints the server process's RSS when it reports listening, its steady RSS
 * after a burst of webhooks and `--settle` seconds of idling (the worker polling), its peak RSS
 * (VmHWM), the peak of the whole process tree during start-up (npm, the server, and the
 * short-lived initdb child on a fresh directory), and the time to listening. Linux only (/proc).
 * Needs the production build (`npm run build`). `--env` passes extra variables to the server, to
 * compare process settings (e.g. `--env MALLOC_ARENA_MAX=2`). `--script start` measures `npm start`
 * instead (it builds first, and runs without NODE_ENV=production, as a local trial does).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { applyTestEnv, TEST_API_KEY, TEST_API_SECRET, TEST_ENCRYPTION_KEY } from "../test/support/env";
import { customerBody } from "../test/support/pipeline";
import { sendWebhook } from "../test/support/webhooks";
import { fmt, mib, printTable, sleep } from "./support";

const ROOT = path.resolve(import.meta.dirname, "..");
const GOAL_BYTES = 350 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// /proc

function statusOf(pid: number): { rss: number; hwm: number; name: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) * 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM"), name: /^Name:\s+(.*)$/m.exec(text)?.[1] ?? "?" };
  } catch {
    return undefined; // gone
  }
}

/** pid and every descendant of it. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** The server: the largest node process under npm. */
function serverPid(root: number): number | undefined {
  return tree(root)
    .map((pid) => ({ pid, s: statusOf(pid) }))
    .filter((x) => x.s && x.s.name.startsWith("node") && x.pid !== root)
    .sort((a, b) => b.s!.rss - a.s!.rss)[0]?.pid;
}

// ---------------------------------------------------------------------------------------------

interface StartFigures {
  label: string;
  listeningS: number;
  rssAtListening: number;
  steadyRss: number;
  serverPeak: number;
  treePeak: number;
  webhooksOk: number;
}

async function measureStart(
  label: string,
  dataDir: string,
  webhooks: number,
  settleS: number,
  extraEnv: Record<string, string>,
  script: "serve" | "start" = "serve",
): Promise<StartFigures> {
  const started = performance.now();
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SHOPIFY_API_KEY: TEST_API_KEY,
    SHOPIFY_API_SECRET: TEST_API_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SHOPIFY_APP_URL: "http://localhost:3000",
    PGLITE_DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    NODE_ENV: "production",
    ...extraEnv,
  };
  // npm start runs as a local trial does: without NODE_ENV=production.
  if (script === "start") delete env.NODE_ENV;
  const child: ChildProcess = spawn("npm", ["run", "--silent", script], {
    cwd: ROOT,
    detached: true, // its own process group: stopped as a whole
    stdio: ["ignore", "pipe", "pipe"],
    env: env as NodeJS.ProcessEnv,
  });
  const output: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (l) => output.push(l));
  let treePeak = 0;
  const sampler = setInterval(() => {
    const total = tree(child.pid!).reduce((sum, pid) => sum + (statusOf(pid)?.rss ?? 0), 0);
    treePeak = Math.max(treePeak, total);
  }, 100);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening" within 300 s:\n${output.slice(-20).join("\n")}`)), 300_000);
      child.once("exit", (code) => reject(new Error(`server exited (${code}) before listening:\n${output.slice(-20).join("\n")}`)));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        output.push(line);
        try {
          const msg = JSON.parse(line) as { msg?: string; url?: string };
          if (msg.msg === "Marketing Sync is listening" && msg.url) {
            clearTimeout(timer);
            resolve(msg.url);
          }
        } catch {
          // not a log line
        }
      });
    });
    const listeningS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const pid = serverPid(child.pid!);
    if (!pid) throw new Error("server process not found under npm");
    const rssAtListening = statusOf(pid)!.rss;

    // Some work, as a running app has: customers from a shop (recorded and planned).
    let webhooksOk = 0;
    for (let i = 0; i < webhooks; i++) {
      const res = await sendWebhook(url, {
        topic: "customers/create",
        shop: "bench-memory.myshopify.com",
        body: customerBody({ id: String(9_100_000 + i) }),
        eventId: `bench-memory-${label}-${i}`,
      });
      await res.arrayBuffer();
      if (res.status === 200) webhooksOk++;
    }
    // Steady state: the highest RSS over the last seconds of idling.
    let steadyRss = 0;
    const settleUntil = performance.now() + settleS * 1000;
    while (performance.now() < settleUntil) {
      await sleep(250);
      if (performance.now() > settleUntil - Math.min(3_000, settleS * 500)) steadyRss = Math.max(steadyRss, statusOf(pid)?.rss ?? 0);
    }
    const serverPeak = statusOf(pid)?.hwm ?? 0;
    return { label, listeningS, rssAtListening, steadyRss, serverPeak, treePeak, webhooksOk };
  } finally {
    clearInterval(sampler);
    await stop(child);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid!, "SIGTERM");
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 20_000);
  await exited;
  // npm may exit first: wait for the server itself (it releases the directory's lock on exit).
  for (let i = 0; i < 200 && tree(child.pid!).length > 1; i++) await sleep(100);
  clearTimeout(timer);
}

async function installShop(dataDir: string): Promise<void> {
  applyTestEnv({ PGLITE_DATA_DIR: dataDir });
  const { openDatabase } = await import("../app/db.server");
  // The stopped server may take a moment to exit and release the directory.
  let db;
  for (let tries = 0; ; tries++) {
    try {
      db = openDatabase({ kind: "pglite", dataDir });
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await sleep(100);
    }
  }
  try {
    await db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt") VALUES ($1, now()) ON CONFLICT DO NOTHING`, ["bench-memory.myshopify.com"]);
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      webhooks: { type: "string", default: "300" },
      settle: { type: "string", default: "10" },
      dir: { type: "string" },
      keep: { type: "boolean", default: false },
      env: { type: "string", multiple: true, default: [] },
      script: { type: "string", default: "serve" },
    },
  });
  if (values.script !== "serve" && values.script !== "start") throw new Error(`--script is serve or start, got "${values.script}"`);
  const script = values.script;
  const extraEnv = Object.fromEntries(
    values.env.map((pair) => {
      const at = pair.indexOf("=");
      if (at < 1) throw new Error(`--env wants NAME=value, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  if (process.platform !== "linux") throw new Error("bench/memory.ts reads /proc: Linux only");
  if (!existsSync(path.join(ROOT, "build/server/index.js"))) throw new Error("build/server/index.js is missing: run `npm run build` first");
  applyTestEnv();
  const webhooks = Number(values.webhooks);
  const settleS = Number(values.settle);
  const dataDir = values.dir ?? mkdtempSync(path.join(tmpdir(), "ms-bench-memory-"));
  if (existsSync(path.join(dataDir, "PG_VERSION"))) throw new Error(`${dataDir} is not fresh: give a new or empty directory`);

  console.log(
    `memory: npm run ${script} on PGlite ${dataDir}; ${webhooks} webhooks, then ${settleS} s idle; node ${process.version}` +
      (values.env.length ? `; env ${values.env.join(" ")}` : ""),
  );
  const rows: StartFigures[] = [];
  try {
    rows.push(await measureStart("first start (fresh directory)", dataDir, webhooks, settleS, extraEnv, script));
    // Webhooks are accepted only for an installed shop: install it (server stopped) so the
    // restart measures a server that records and plans work. The first start stays fresh.
    await installShop(dataDir);
    rows.push(await measureStart("restart (same directory)", dataDir, webhooks, settleS, extraEnv, script));
  } finally {
    if (!values.keep && !values.dir) rmSync(dataDir, { recursive: true, force: true });
  }
  console.log();
  printTable(
    ["start", "to listening s", "RSS listening", "steady RSS", "server peak RSS", "tree peak RSS", "webhooks 200", "steady ≤ 350 MiB"],
    rows.map((r) => [
      r.label,
      fmt(r.listeningS),
      mib(r.rssAtListening),
      mib(r.steadyRss),
      mib(r.serverPeak),
      mib(r.treePeak),
      `${r.webhooksOk}/${webhooks}`,
      r.steadyRss <= GOAL_BYTES ? "ok" : "MISS",
    ]),
  );
  console.log(
    "\nserver = the largest node process under npm; tree = npm + server + children (on a fresh directory the" +
      "\nshort-lived initdb child is included), sampled every 100 ms until listening." +
      `\nmachine: ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}.`,
  );
}

await main();
