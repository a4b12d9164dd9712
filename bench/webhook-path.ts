/**
 * The rooms (source files of app/) one webhook passes on its way through the worker, and those
 * connecting a shop passes; how often their call paths go back into a room they had left.
 *
 *   npm run bench:webhook-path -- [--repeat 3] [--warmup 3] [--no-connect] [--walk]
 *
 * One process on embedded PGlite (a temporary directory: acknowledgements go through the journal,
 * as in production), the emulator in a child process, the fake Shopify Admin and a fake store in
 * this one (neither imports app/). The webhook is Shopify's customers/create sample
 * (test/fixtures) carrying a customer of the fake store (id, email, names, times), so the lookup a
 * customer without consent needs is answered and both the lookup's and the webhook's calls are
 * sent; signed, POSTed to the production handler of /webhooks (receiveNodeWebhook) served
 * here, and followed until the worker (the production policy, its clocks pushed beyond the run,
 * woken by idle() as the tests wake it) is idle again with the calls at the emulator. Connecting
 * is the Connection page's action (connectionAction) for a new shop with its offline session, the
 * worker stopped. Warm-up first (--warmup of each), so that no module loads in a window.
 *
 * Two tools of the V8 inspector:
 * - precise block coverage, taken just before and just after a window: the code that ran in it.
 *   Each window is followed by an idle one: the worker woken with nothing to do (its idle round
 *   runs every job, each finding nothing), or for connecting, this process left alone as long;
 * - a trace: a breakpoint at the first statement of every app function the windows ran (a few
 *   hundred; under 2,000 pauses for a webhook, each resumed at once by a worker thread that holds
 *   the debugger), recording the function entered, in order, and its call path, awaits included.
 *   A sampled CPU profile sees no call path across an await (a stack starts where the last await
 *   resumed), and single-stepping the debugger is far too slow.
 * An entry belongs to the webhook when some frame of its call path (itself included) is at code
 * that ran in every window and in no idle one: the idle round's own jobs stay out. Rooms passed:
 * the files of those entries. Returns: a call, on their call paths, into a file already lower on
 * the same path (left, then entered again), counted once per pair of files. `--walk` prints the
 * rooms in the order they were entered; the "walk" line counts every entry into a room visited
 * before, returns from calls included, so it grows with loops: printed beside the figure, not as it.
 * --repeat measures each that many times and says whether the figures differ.
 */
import { Session } from "node:inspector/promises";
import { execSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { Agent, request } from "undici";
import { applyTestEnv, TEST_API_KEY, TEST_API_SECRET } from "../test/support/env";
import { openBenchDatabase, printMachine, startEmulatorProcess } from "./support";

// Coverage counts calls only in functions compiled after it starts: before any app module loads.
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });

const { values } = parseArgs({
  options: {
    repeat: { type: "string", default: "3" },
    warmup: { type: "string", default: "3" },
    "no-connect": { type: "boolean", default: false },
    walk: { type: "boolean", default: false },
  },
});
const o = { repeat: Math.max(1, Number(values.repeat)), warmup: Number(values.warmup), connect: !values["no-connect"], walk: values.walk };

const APP = fileURLToPath(new URL("../app/", import.meta.url));
const COMMIT = (() => {
  try {
    return execSync("git rev-parse --short HEAD", { cwd: APP, encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
})();

/** The room of a script URL: its path under app/ (generated code excluded), or null. */
function roomOf(url: string): string | null {
  if (!url.startsWith("file://")) return null;
  const file = fileURLToPath(url.replace(/\?.*$/, ""));
  if (!file.startsWith(APP)) return null;
  const room = file.slice(APP.length);
  return room.startsWith("generated/") ? null : room;
}

// ---------------------------------------------------------------------------------------------
// Coverage

interface Range {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: { functionName: string; ranges: Range[] }[];
}
interface AppFunction {
  key: string;
  scriptId: string;
  room: string;
  name: string;
  start: number;
  end: number;
}
/** Functions of app/ that ran in a window, by key (`${scriptId}:${start}`): their blocks' counts. */
type Ran = Map<string, Range[]>;

/** Every app function coverage has reported, by script (ordered by start). */
const functionsOf = new Map<string, AppFunction[]>();
const byKey = new Map<string, AppFunction>();
const roomOfScript = new Map<string, string>();

async function takeCoverage(): Promise<Ran> {
  const { result } = (await session.post("Profiler.takePreciseCoverage")) as unknown as { result: ScriptCoverage[] };
  const ran: Ran = new Map();
  for (const script of result) {
    const room = roomOf(script.url);
    if (!room) continue;
    roomOfScript.set(script.scriptId, room);
    for (const f of script.functions) {
      const { startOffset: start, endOffset: end, count } = f.ranges[0]!;
      const key = `${script.scriptId}:${start}`;
      if (!byKey.has(key)) {
        const fn = { key, scriptId: script.scriptId, room, name: f.functionName || "(anonymous)", start, end };
        byKey.set(key, fn);
        functionsOf.set(script.scriptId, [...(functionsOf.get(script.scriptId) ?? []), fn].sort((a, b) => a.start - b.start));
      }
      if (count > 0) ran.set(key, f.ranges);
    }
  }
  return ran;
}

/** Runs `fn` between two coverages: what ran in it alone. */
async function covered(fn: () => Promise<void>): Promise<Ran> {
  await takeCoverage();
  await fn();
  return takeCoverage();
}

/** A block's count at an offset: that of the innermost range holding it (V8 nests blocks in the function's range). */
function countAt(ranges: Range[] | undefined, at: number): number {
  let best: Range | undefined;
  for (const r of ranges ?? []) if (r.startOffset <= at && at < r.endOffset && (!best || r.endOffset - r.startOffset <= best.endOffset - best.startOffset)) best = r;
  return best?.count ?? 0;
}

/** The innermost app function holding an offset of a script. */
function functionAt(scriptId: string, at: number): AppFunction | undefined {
  let best: AppFunction | undefined;
  for (const f of functionsOf.get(scriptId) ?? []) if (f.start <= at && at < f.end && (!best || f.end - f.start < best.end - best.start)) best = f;
  return best;
}

const roomsOf = (keys: Iterable<string>) => new Set([...keys].map((k) => byKey.get(k)!.room));

// ---------------------------------------------------------------------------------------------
// Sources: the debugger places frames by line and column, coverage by offset

const lineStarts = new Map<string, number[]>();
async function loadSources(): Promise<void> {
  await session.post("Debugger.enable");
  for (const scriptId of roomOfScript.keys()) {
    if (lineStarts.has(scriptId)) continue;
    const { scriptSource } = (await session.post("Debugger.getScriptSource", { scriptId })) as { scriptSource: string };
    const starts = [0];
    for (let i = 0; i < scriptSource.length; i++) if (scriptSource.charCodeAt(i) === 10) starts.push(i + 1);
    lineStarts.set(scriptId, starts);
  }
  await session.post("Debugger.disable");
}
const offsetOf = (scriptId: string, line: number, column: number) => (lineStarts.get(scriptId)?.[line] ?? 0) + column;
function locationOf(scriptId: string, offset: number): { scriptId: string; lineNumber: number; columnNumber: number } {
  const starts = lineStarts.get(scriptId)!;
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1]! <= offset) line++;
  return { scriptId, lineNumber: line, columnNumber: offset - starts[line]! };
}

// ---------------------------------------------------------------------------------------------
// The trace: a worker thread debugs this one (a session on this thread could not resume it)

/** Frames bottom first, as [scriptId, line, column]; `key` the function whose breakpoint was hit. */
interface Entry {
  key: string;
  frames: [string, number, number][];
}

const TRACER = `
const { parentPort } = require("node:worker_threads");
const { Session } = require("node:inspector");
const session = new Session();
session.connectToMainThread();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
const keyOf = new Map();
let entries = [];
session.on("Debugger.paused", ({ params }) => {
  const frames = params.callFrames.map((f) => [f.location.scriptId, f.location.lineNumber, f.location.columnNumber]);
  for (let t = params.asyncStackTrace; t; t = t.parent) for (const f of t.callFrames) frames.push([f.scriptId, f.lineNumber, f.columnNumber]);
  entries.push({ key: keyOf.get((params.hitBreakpoints || [])[0]), frames: frames.reverse() });
  session.post("Debugger.resume");
});
parentPort.on("message", async (m) => {
  try {
    if (m.type === "arm") {
      await post("Debugger.enable");
      await post("Debugger.setAsyncCallStackDepth", { maxDepth: 64 });
      let missed = 0;
      for (const f of m.functions) {
        const { locations } = await post("Debugger.getPossibleBreakpoints", { start: f.start, end: f.end, restrictToFunction: true });
        if (!locations.length) { missed++; continue; }
        const { breakpointId } = await post("Debugger.setBreakpoint", { location: locations[0] });
        keyOf.set(breakpointId, f.key);
      }
      entries = [];
      parentPort.postMessage({ id: m.id, value: missed });
    } else if (m.type === "disarm") {
      await post("Debugger.disable");
      keyOf.clear();
      parentPort.postMessage({ id: m.id, value: entries });
      entries = [];
    }
  } catch (error) {
    parentPort.postMessage({ id: m.id, error: String(error) });
  }
});
`;

const tracer = new Worker(TRACER, { eval: true });
tracer.unref();
let asked = 0;
function askTracer<T>(message: Record<string, unknown>): Promise<T> {
  const id = ++asked;
  return new Promise<T>((resolve, reject) => {
    const onMessage = (m: { id: number; value?: T; error?: string }) => {
      if (m.id !== id) return;
      tracer.off("message", onMessage);
      if (m.error) reject(new Error(`tracer: ${m.error}`));
      else resolve(m.value as T);
    };
    tracer.on("message", onMessage);
    tracer.postMessage({ ...message, id });
  });
}

/** Runs `fn` with a breakpoint at the entry of each of `keys`: the entries, in order. */
async function traced(keys: Iterable<string>, fn: () => Promise<void>): Promise<{ entries: Entry[]; missed: number }> {
  await loadSources();
  const functions = [...keys].map((key) => {
    const f = byKey.get(key)!;
    return { key, start: locationOf(f.scriptId, f.start), end: locationOf(f.scriptId, f.end) };
  });
  const missed = await askTracer<number>({ type: "arm", functions });
  try {
    await fn();
  } catch (error) {
    await askTracer<Entry[]>({ type: "disarm" });
    throw error;
  }
  return { entries: await askTracer<Entry[]>({ type: "disarm" }), missed };
}

// ---------------------------------------------------------------------------------------------
// Reading a trace

interface Path {
  /** The functions entered on the path, in order. */
  entries: string[];
  rooms: Set<string>;
  /** Distinct returns, "caller → file entered again", each with the stretch of a call path from where it was left. */
  returns: Map<string, string[]>;
  /** Entries left out: the idle round's own work. */
  other: number;
}

/** A call path's files, each once per stay (a file calling itself stays in it). */
const chainOf = (rooms: string[]) => rooms.filter((room, i) => room !== rooms[i - 1]);

/**
 * Keeps the entries on the path: code at the entry or at a caller that ran in every window and
 * never idle (`windows`, `idles`: coverage of each).
 */
function readTrace(entries: Entry[], windows: Ran[], idles: Ran[]): Path {
  const onlyWindows = (scriptId: string, offset: number) => {
    const f = functionAt(scriptId, offset);
    return f !== undefined && windows.every((w) => countAt(w.get(f.key), offset) > 0) && idles.every((i) => countAt(i.get(f.key), offset) === 0);
  };
  const path: Path = { entries: [], rooms: new Set(), returns: new Map(), other: 0 };
  for (const entry of entries) {
    const app = entry.frames.filter(([scriptId]) => roomOfScript.has(scriptId));
    if (!entry.key || !app.some(([scriptId, line, column]) => onlyWindows(scriptId, offsetOf(scriptId, line, column)))) {
      path.other++;
      continue;
    }
    path.entries.push(entry.key);
    path.rooms.add(byKey.get(entry.key)!.room);
    const chain = chainOf(app.map(([scriptId]) => roomOfScript.get(scriptId)!));
    for (let i = 1; i < chain.length; i++) {
      const left = chain.lastIndexOf(chain[i]!, i - 1);
      const key = `${chain[i - 1]} → ${chain[i]}`;
      if (left >= 0 && !path.returns.has(key)) path.returns.set(key, chain.slice(left, i + 1));
    }
  }
  return path;
}

/** The path in the order it ran, one room per entry: changes of room, and how many go back to one left before. */
function walkOf(path: Path): { rooms: string[]; changes: number; back: number } {
  const rooms = chainOf(path.entries.map((key) => byKey.get(key)!.room));
  const seen = new Set<string>();
  let back = 0;
  for (const room of rooms) {
    if (seen.has(room)) back++;
    seen.add(room);
  }
  return { rooms, changes: rooms.length - 1, back };
}

// ---------------------------------------------------------------------------------------------
// The app, the emulator, the fake Shopify

const emulator = await startEmulatorProcess();
const { startFakeAdmin } = await import("../dev/shopify/fake-admin");
const { startFakeStore } = await import("../dev/shopify/fake-store");
const admin = await startFakeAdmin({ apiKey: TEST_API_KEY, apiSecret: TEST_API_SECRET });
applyTestEnv({ LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent", MARKETING_API_URL: emulator.url, SHOPIFY_ADMIN_API_ORIGIN: admin.url });
const { close } = await openBenchDatabase("pglite", { tmpPrefix: "ms-bench-rooms-" });

// The app's entries this measures.
const { receiveNodeWebhook } = await import("../app/webhooks/ingest.server");
const { startWorker } = await import("../app/jobs/index.server");
const { connectShop } = await import("../app/backfill/connect.server");
const { connectionAction } = await import("../app/admin/connect-page.server");
const { storeOfflineSession } = await import("../dev/shopify/offline-session");
const { fixture, webhookHeaders } = await import("../test/support/webhooks");

// Customers of one kind (an email, not subscribed, named, no phone, no tags): every webhook takes the same path.
const needed = o.warmup + 3 * o.repeat + 5;
const store = await startFakeStore(admin, { customers: needed * 20, products: 0, orders: 0 });
const customers = store.objects.customers.filter(
  (c) => c.firstName && c.lastName && !c.defaultPhoneNumber && !(c.tags as string[]).length && (c.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === "NOT_SUBSCRIBED",
);
if (customers.length < needed) throw new Error(`the fake store has ${customers.length} customers of the kind, ${needed} needed`);

const sample = fixture("customers/create");
let sent = 0;
/** Shopify's sample customers/create, as the next customer of the store (its id, email, names and times). */
function nextBody(): string {
  const c = customers[sent++]!;
  const gid = String(c.id);
  const id = gid.slice(gid.lastIndexOf("/") + 1);
  return sample
    .replace('"id": 706405506930370000,', `"id": ${id},`)
    .replace('"customer_id": 706405506930370000,', `"customer_id": ${id},`)
    .replace("gid://shopify/Customer/706405506930370084", gid)
    .replace('"email": "bob@biller.com"', `"email": ${JSON.stringify((c.defaultEmailAddress as { emailAddress: string }).emailAddress)}`)
    .replaceAll('"first_name": "Bob"', `"first_name": ${JSON.stringify(c.firstName)}`)
    .replaceAll('"last_name": "Biller"', `"last_name": ${JSON.stringify(c.lastName)}`)
    .replace('"created_at": "2021-12-31T19:00:00-05:00"', `"created_at": ${JSON.stringify(c.createdAt)}`)
    .replace('"updated_at": "2021-12-31T19:00:00-05:00"', `"updated_at": ${JSON.stringify(c.updatedAt)}`);
}

const shop = `rooms-${randomUUID().slice(0, 6)}.myshopify.com`;
await connectShop(shop, { apiKey: emulator.apiKey, baseUrl: emulator.url, importHistory: false });
await storeOfflineSession(shop, admin.issueOfflineToken(shop), "bench");

const web = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/webhooks") receiveNodeWebhook(req, res, () => res.writeHead(500).end());
  else res.writeHead(404).end();
});
await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
const target = `http://127.0.0.1:${(web.address() as AddressInfo).port}/webhooks`;
const agent = new Agent({ connections: 1 });

// The production policy; its clocks beyond the run, so that only the webhook (idle()) wakes it.
const LATER = 24 * 3_600_000;
const worker = startWorker({ id: "bench-rooms", policy: { pollMs: LATER, upkeepCheckMs: LATER, pruneEveryMs: LATER, analyzeEveryMs: LATER } });

/** Calls each webhook made at the emulator (the same work, whatever the commit). */
const callsPerWebhook = new Set<number>();

/** One webhook, from its POST until the worker is idle again, its calls at the emulator. */
async function webhook(): Promise<void> {
  const before = (await emulator.stats()).requests;
  const body = nextBody();
  const res = await request(target, { method: "POST", headers: webhookHeaders({ topic: "customers/create", shop, body }), body, dispatcher: agent });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`POST /webhooks answered ${res.statusCode}`);
  await worker.idle({ timeoutMs: 120_000 });
  const calls = (await emulator.stats()).requests - before;
  if (!calls) throw new Error("the webhook reached no call at the emulator");
  callsPerWebhook.add(calls);
}

/** A new shop with its offline session; connecting it is connectionAction, as the Connection page submits it. */
async function newShop(): Promise<() => Promise<void>> {
  const domain = `rooms-c-${randomUUID().slice(0, 6)}.myshopify.com`;
  await storeOfflineSession(domain, admin.issueOfflineToken(domain), "bench");
  const form = new FormData();
  form.set("intent", "connect");
  form.set("apiKey", emulator.apiKey);
  return async () => {
    const result = await connectionAction(domain, form);
    if (!result.ok) throw new Error(`connecting answered ${JSON.stringify(result)}`);
  };
}

// ---------------------------------------------------------------------------------------------
// Measure

interface Measured {
  name: string;
  what: string;
  windows: Ran[];
  idles: Ran[];
  paths: Path[];
  /** Functions that ran in traced windows without a breakpoint (the trace would miss their entries). */
  unarmed: Set<string>;
  missed: number;
}

/**
 * `--repeat` windows of `run`, each after an idle one (coverage), then `--repeat` traced windows
 * with a breakpoint on every function the first covered ones ran.
 */
async function measure(name: string, what: string, prepare: () => Promise<() => Promise<void>>, idle: (ms: number) => Promise<void>): Promise<Measured> {
  const windows: Ran[] = [];
  const idles: Ran[] = [];
  for (let r = 0; r < o.repeat; r++) {
    const run = await prepare();
    const t = performance.now();
    windows.push(await covered(run));
    idles.push(await covered(() => idle(performance.now() - t)));
  }
  const armed = new Set(windows.flatMap((w) => [...w.keys()]));
  const paths: Path[] = [];
  const unarmed = new Set<string>();
  let missed = 0;
  for (let r = 0; r < o.repeat; r++) {
    const run = await prepare();
    let ran: Ran = new Map();
    const trace = await traced(armed, async () => {
      ran = await covered(run);
    });
    for (const key of ran.keys()) if (!armed.has(key)) unarmed.add(key);
    missed = trace.missed;
    paths.push(readTrace(trace.entries, windows, idles));
  }
  return { name, what, windows, idles, paths, unarmed, missed };
}

const measured: Measured[] = [];
const T0 = performance.now();
try {
  for (let i = 0; i < o.warmup; i++) await webhook();
  callsPerWebhook.clear(); // the worker's first pass also refreshes the shop's tracker
  measured.push(
    await measure(
      "webhook",
      "Shopify's customers/create sample POSTed to /webhooks, until the worker is idle again with its calls at the emulator",
      async () => webhook,
      () => worker.idle({ timeoutMs: 60_000 }),
    ),
  );
  await worker.stop();
  if (o.connect) {
    for (let i = 0; i < o.warmup; i++) await (await newShop())();
    measured.push(
      await measure(
        "connecting",
        "connectionAction (the Connection page's connect) for a new shop with its offline session, the worker stopped",
        newShop,
        (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ),
    );
  }
} finally {
  await worker.stop();
  await agent.close();
  await new Promise((resolve) => (web.closeAllConnections(), web.close(resolve)));
  await close();
  await store.close();
  await admin.close();
  await emulator.close();
}

// ---------------------------------------------------------------------------------------------
// Report

const list = (rooms: Iterable<string>) => [...rooms].sort().join(" ") || "none";
/** Whether every repeat found the same items; else what each later one found more (+) or less (-). */
function same(repeats: Iterable<string>[]): string {
  const [first, ...later] = repeats.map((r) => new Set(r));
  const diffs = later.map((r, i) => {
    const changes = [...[...r].filter((x) => !first!.has(x)).map((x) => `+${x}`), ...[...first!].filter((x) => !r.has(x)).map((x) => `-${x}`)];
    return changes.length ? `repeat ${i + 2}: ${changes.join(" ")}` : "";
  });
  return diffs.some(Boolean) ? `differs: ${diffs.filter(Boolean).join("; ")}` : "the same in every repeat";
}
console.log(`webhook-path at ${COMMIT} (${((performance.now() - T0) / 1000).toFixed(0)} s): rooms are the files of app/ (app/generated excluded)`);
for (const m of measured) {
  const ran = roomsOf(m.windows[0]!.keys());
  const idle = roomsOf(m.idles.flatMap((i) => [...i.keys()]));
  const path = m.paths[0]!;
  const walk = walkOf(path);
  console.log(`\n${m.name}: ${m.what}${m.name === "webhook" ? ` (calls per webhook: ${[...callsPerWebhook].join(" or ")})` : ""}`);
  console.log(`  ran in the window:  ${ran.size} rooms, ${m.windows[0]!.size} functions (${same(m.windows.map((w) => roomsOf(w.keys())))})`);
  console.log(`  ran idle:           ${idle.size} rooms`);
  console.log(`  rooms passed:       ${path.rooms.size} (${same(m.paths.map((p) => p.rooms))})`);
  console.log(`  returns:            ${path.returns.size} (${same(m.paths.map((p) => p.returns.keys()))})`);
  console.log(`  trace:              ${path.entries.length} entries on the path, ${path.other} left out (the idle round's own work); functions without a place for a breakpoint: ${m.missed}; run in a traced window only (entries not seen): ${[...m.unarmed].map((k) => `${byKey.get(k)!.room}:${byKey.get(k)!.name}`).join(", ") || "none"}`);
  console.log(`  walk in order:      ${walk.changes} changes of room, ${walk.back} into a room already left`);
  console.log(`  rooms passed: ${list(path.rooms)}`);
  console.log(`  ran, not passed: ${list([...ran].filter((r) => !path.rooms.has(r)))}`);
  console.log(`  returns (caller → file entered again   [the call path from where it was left]):`);
  for (const [key, chain] of [...path.returns].sort((a, b) => a[0].localeCompare(b[0]))) console.log(`    ${key}   [${chain.join(" → ")}]`);
  if (o.walk) console.log(`  walk: ${walk.rooms.join(" → ")}`);
}
printMachine();
// The inspector session and the app's own timers would hold the process open.
await tracer.terminate();
process.exit(0);
