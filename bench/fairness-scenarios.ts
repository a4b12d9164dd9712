/**
 * bench:fairness scenarios beside the flood (issue 33): one shop importing its customer history, and
 * one shop whose marketing account answers 429 for minutes. bench/fairness.ts runs them with
 * `--scenario import|throttle` (a list: `--scenario import,throttle`).
 *
 *   import    another shop imports a `--import-customers` history through the real path: the fake
 *             Shopify Admin and store in a child process (its bulk export as JSONL, as Shopify
 *             serves it), requestBackfill() (customers only), the worker's import steps and their
 *             background calls. Measured until the import is done and every call of it delivered
 *             (or `--cap-s`).
 *   throttle  another shop with `--throttle-backlog` changes queued (planned before the clock starts), and a live change every
 *             `--every-ms` like the quiet shops, whose account answers every call 429
 *             (Retry-After `--retry-after` s) for `--throttle-minutes`; then the fault ends and the
 *             run goes on until that shop's changes are all delivered (or `--cap-s` after the window).
 *
 * Each database's run starts with the quiet shops alone (`--alone-s`), measured by the same code,
 * and prints per quiet shop: p50/p95/p99/max, its p99 alone, the bound max(2 s, 3 × p99 alone) and
 * PASS/FAIL, with the load average at the start and end of each run. The emulator runs in this
 * process as in the flood scenarios (one account per shop; the 429 is set on one account only).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { connectBenchShop, createBenchDatabase, fmt, percentile, printTable, recordCustomerCreate, sleep } from "./support";
import { startShopifyChild, type ShopifyChild } from "./shopify-child";

export const FAIRNESS_SCENARIOS = ["flood", "import", "throttle"] as const;
export type FairnessScenario = (typeof FAIRNESS_SCENARIOS)[number];

export interface ScenarioOptions {
  dbs: ("pglite" | "postgres")[];
  adminUrl: string | undefined;
  shops: number;
  everyMs: number;
  aloneMs: number;
  capMs: number;
  latencyMs: number;
  /** Workers on PostgreSQL (PGlite: one, as the app runs it). */
  workers: number;
  importCustomers: number;
  throttleMinutes: number;
  retryAfterSeconds: number;
  throttleBacklog: number;
  /** Print each scenario's quiet changes by 10 s window of their recording (where a tail comes from). */
  timeline: boolean;
  /** The fake Shopify Admin the caller started (the process routes Admin calls to one origin). */
  shopify?: ShopifyChild;
  /** Every shop gets its offline session at that Admin (false with --no-admin: only the importing shop has one). */
  sessions: boolean;
}



// ---------------------------------------------------------------------------------------------
// The runs

interface RunResult {
  /** Latencies (ms) per quiet shop ("quiet-000", …). */
  perShop: Map<string, number[]>;
  /** Quiet changes recorded but not at the service when the run ended. */
  lost: number;
  load: string;
  /** What the scenario's own shop did. */
  subject: string;
}

type Load = "alone" | "import" | "throttle";

const load3 = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

/** Runs the quiet shops alone, then each scenario, on each database; prints the tables. */
export async function runFairnessScenarios(scenarios: Exclude<FairnessScenario, "flood">[], o: ScenarioOptions): Promise<void> {
  const own = !o.shopify && scenarios.includes("import") ? await startShopifyChild() : undefined;
  const shopify = o.shopify ?? own;
  const describe = (s: Load) =>
    s === "import"
      ? `one shop imports ${o.importCustomers} customers`
      : s === "throttle"
        ? `one account answers 429 (Retry-After ${o.retryAfterSeconds} s) for ${o.throttleMinutes} min, ${o.throttleBacklog} changes queued`
        : "alone";
  console.log(
    `fairness scenarios: ${o.shops} quiet shops, a change each every ~${o.everyMs} ms; service ${o.latencyMs} ms away; ` +
      `${scenarios.map(describe).join("; ")}; ${new Date().toISOString()}, load ${load3()}`,
  );
  try {
    for (const db of o.dbs) {
      const workers = db === "pglite" ? 1 : o.workers;
      process.stdout.write(`  ${db}, alone … `);
      const alone = await runOne(db, "alone", o, workers, shopify);
      console.log(`${[...alone.perShop.values()].flat().length} changes; load ${alone.load}`);
      for (const s of scenarios) {
        process.stdout.write(`  ${db}, ${describe(s)} … `);
        const r = await runOne(db, s, o, workers, shopify);
        console.log(`${r.subject}; load ${r.load}`);
        report(`${db}, ${describe(s)}, ${workers} worker(s)`, alone, r);
      }
    }
  } finally {
    await own?.close();
  }
}

function report(title: string, alone: RunResult, r: RunResult): void {
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
  };
  const rows: (string | number)[][] = [];
  let over = 0;
  let worst = { ratio: 0, text: "-" };
  for (const [shop, latencies] of [...r.perShop].sort(([a], [b]) => a.localeCompare(b))) {
    const s = stats(latencies);
    const aloneP99 = stats(alone.perShop.get(shop) ?? []).p99;
    const bound = Math.max(2_000, 3 * (Number.isFinite(aloneP99) ? aloneP99 : 0));
    const pass = s.p99 <= bound;
    if (!pass) over++;
    if (s.p99 / bound > worst.ratio) worst = { ratio: s.p99 / bound, text: `${shop}: ${fmt(s.p99, 0)} / ${fmt(bound, 0)} ms` };
    rows.push([shop, s.n, fmt(s.p50, 0), fmt(s.p95, 0), fmt(s.p99, 0), fmt(s.max, 0), fmt(aloneP99, 0), fmt(bound, 0), pass ? "PASS" : "FAIL"]);
  }
  const all = stats([...r.perShop.values()].flat());
  const allAlone = stats([...alone.perShop.values()].flat());
  rows.push(["all shops", all.n, fmt(all.p50, 0), fmt(all.p95, 0), fmt(all.p99, 0), fmt(all.max, 0), fmt(allAlone.p99, 0), "-", over ? `FAIL (${over})` : "PASS"]);
  console.log(`\n${title}`);
  printTable(["quiet shop", "changes", "p50 ms", "p95 ms", "p99 ms", "max ms", "p99 alone ms", "bound ms", "result"], rows);
  console.log(
    `${over ? `FAIL: ${over} of ${r.perShop.size} shops over the bound` : `PASS: all ${r.perShop.size} shops within the bound`}; worst p99 / bound ${worst.text}; ` +
      `not arrived ${r.lost}; ${r.subject}; load (1/5/15) alone ${alone.load}, scenario ${r.load}\n`,
  );
}

/** Per 10 s of the run: quiet changes recorded, their p99 and max latency (or how many never arrived), 429s answered. */
/** The quiet changes by 10 s window of their recording: p99, max, not arrived, and 429s answered then. */
export function printTimeline(started: number, sent: Map<string, { at: number }>, arrival: Map<string, number>, answered429: number[]): void {
  const windows = new Map<number, { latencies: number[]; lost: number; answers429: number }>();
  const at = (t: number) => {
    const k = Math.floor((t - started) / 10_000);
    let w = windows.get(k);
    if (!w) windows.set(k, (w = { latencies: [], lost: 0, answers429: 0 }));
    return w;
  };
  for (const [email, { at: sentAt }] of sent) {
    const got = arrival.get(email);
    if (got === undefined) at(sentAt).lost++;
    else at(sentAt).latencies.push(got - sentAt);
  }
  for (const t of answered429) at(t).answers429++;
  console.log("\n    from s  changes  p99 ms  max ms  not arrived  429s");
  for (const [k, w] of [...windows].sort(([a], [b]) => a - b)) {
    const sorted = w.latencies.sort((a, b) => a - b);
    console.log(
      `    ${String(k * 10).padStart(6)}  ${String(sorted.length).padStart(7)}  ${fmt(percentile(sorted, 99), 0).padStart(6)}  ${fmt(sorted.at(-1) ?? Number.NaN, 0).padStart(6)}  ${String(w.lost).padStart(11)}  ${String(w.answers429).padStart(4)}`,
    );
  }
}

async function runOne(db: "pglite" | "postgres", scenario: Load, o: ScenarioOptions, workerCount: number, shopify: ShopifyChild | undefined): Promise<RunResult> {
  const { openDatabase, installDatabase } = await import("../app/db.server");
  const { startWorker } = await import("../app/jobs/index.server");
  const { requestBackfill, backfillProgress } = await import("../app/backfill/backfill.server");
  const { startEmulator } = await import("../dev/emulator/server");

  const loadAtStart = load3();
  const emulator = await startEmulator({ port: 0 });
  const pgDb = db === "postgres" ? await createBenchDatabase(o.adminUrl!) : undefined;
  const dir = db === "pglite" ? mkdtempSync(path.join(tmpdir(), "ms-bench-fair-")) : undefined;
  const database = openDatabase(pgDb ? { kind: "postgres", url: pgDb.url } : { kind: "pglite", dataDir: dir! });
  const tag = randomUUID().slice(0, 6);
  const quiet = Array.from({ length: o.shops }, (_, i) => `fair-${tag}-quiet-${String(i).padStart(3, "0")}.myshopify.com`);
  const subject = `fair-${tag}-${scenario}.myshopify.com`;
  const workers: { stop(): Promise<void> }[] = [];
  let stop = false;
  /** The throttled shop stops sending when its 429s end; the quiet shops go on. */
  let subjectStop = false;
  const loops: Promise<void>[] = [];
  try {
    await database.migrate();
    installDatabase(database);
    // Installed shops, as in the demo and in production: each has its offline session, and planning
    // asks Shopify's Admin (the child) what it asks there (a new subscriber's consent).
    const installed = o.sessions ? shopify : undefined;
    for (const shop of quiet) await connectBenchShop(shop, { url: emulator.url, apiKey: emulator.createAccount({ doubleOptIn: false }).apiKey }, installed);
    const subjectAccount = emulator.createAccount({ doubleOptIn: false });
    // The importing shop reads its history from that Admin: it has its session in any case.
    await connectBenchShop(subject, { url: emulator.url, apiKey: subjectAccount.apiKey }, scenario === "import" ? shopify : installed);
    if (scenario === "import") await shopify!.store({ customers: o.importCustomers, orders: 0, products: 0 });
    emulator.requests.length = 0;
    const throttled = { latencyMs: o.latencyMs, burst429: { count: 1_000_000_000, retryAfterSeconds: o.retryAfterSeconds, accountId: subjectAccount.accountId } };
    emulator.setFaults(scenario === "throttle" ? throttled : { latencyMs: o.latencyMs });

    let seq = 0;
    const record = (shop: string, email: string) => recordCustomerCreate(shop, { id: String(9_000_000 + ++seq), email });

    // Arrivals are folded as they come and the recording emptied: an import of 100,000 would
    // otherwise keep every request body, and each pass would scan them all.
    const sent = new Map<string, { shop: string; at: number }>();
    const subjectSent = new Set<string>();
    const arrival = new Map<string, number>();
    let subjectCalls = 0;
    let subject429 = 0;
    const answered429: number[] = [];
    const fold = () => {
      for (const r of emulator.requests) {
        if (r.status === null) continue;
        // Only the subject's account is given the 429 fault (a faulted request names no account).
        if (r.fault === "429") {
          subject429++;
          answered429.push(Date.parse(r.at));
        }
        else if (r.accountId === subjectAccount.accountId && r.status !== null && r.status < 300) subjectCalls++;
        if (r.method !== "POST" || r.path !== "/api/people" || r.status === null || r.status >= 300) continue;
        const email = (r.body as { email?: string }).email ?? "";
        if ((sent.has(email) || subjectSent.has(email)) && !arrival.has(email)) arrival.set(email, Date.parse(r.at));
      }
      // A request still being answered (the service's latency) has no status yet: it stays.
      const inFlight = emulator.requests.filter((r) => r.status === null);
      emulator.requests.length = 0;
      emulator.requests.push(...inFlight);
    };

    if (scenario === "throttle") {
      for (let i = 0; i < o.throttleBacklog; i++) {
        const email = `b${i}-${tag}@example.com`;
        subjectSent.add(email);
        await record(subject, email);
      }
    }
    for (let k = 0; k < workerCount; k++) workers.push(startWorker({ id: `bench-fair-${scenario}-${db}-${k + 1}` }));
    if (scenario === "throttle") {
      // The backlog is planned before the clock starts: what is measured is an account answering 429
      // with calls queued for it, not the planning of another shop's burst (the flood scenarios).
      for (;;) {
        const [left] = await database.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE shop = $1 AND status IN ('queued', 'running')`, [subject]);
        if (left?.n === 0) break;
        await sleep(500);
      }
      fold();
      subject429 = 0;
      answered429.length = 0;
    }
    const started = Date.now();
    if (scenario === "import") await requestBackfill(subject, { kinds: ["customers"], orderDays: null });

    const liveShops = [...quiet, ...(scenario === "throttle" ? [subject] : [])];
    loops.push(
      ...liveShops.map(async (shop, i) => {
        // Spread the shops' first changes over one period, then one every everyMs ± 25 %.
        await sleep((i / liveShops.length) * o.everyMs);
        let n = 0;
        while (!stop && !(shop === subject && subjectStop)) {
          const email = `q${n++}-${shop.split(".")[0]}@example.com`;
          if (shop === subject) subjectSent.add(email);
          else sent.set(email, { shop, at: Date.now() });
          await record(shop, email);
          await sleep(o.everyMs * (0.75 + Math.random() * 0.5));
        }
      }),
    );

    const windowMs = o.throttleMinutes * 60_000;
    let throttleEnded = false;
    let subjectSeconds = Number.NaN;
    let importObjects = 0;
    for (;;) {
      await sleep(500);
      fold();
      const elapsed = Date.now() - started;
      if (scenario === "alone") {
        if (elapsed >= o.aloneMs) break;
        continue;
      }
      if (scenario === "throttle") {
        if (!throttleEnded && elapsed >= windowMs) {
          throttleEnded = true;
          emulator.setFaults({ latencyMs: o.latencyMs });
          // From here the shop sends nothing new: the run ends when its queue is delivered.
          subjectStop = true;
        }
        if (throttleEnded && [...subjectSent].every((e) => arrival.has(e))) {
          subjectSeconds = (elapsed - windowMs) / 1000;
          break;
        }
        if (elapsed >= windowMs + o.capMs) break;
        continue;
      }
      // import: done, and nothing of the shop's left to plan or deliver
      const p = await backfillProgress(subject);
      importObjects = p?.objects ?? 0;
      if (p?.status === "failed") throw new Error(`history import failed: ${p.lastError}`);
      if (p?.status === "done") {
        const [left] = await database.sql.query<{ n: number }>(
          `SELECT (SELECT count(*) FROM "OutboundCall" WHERE shop = $1 AND status IN ('queued', 'running'))::int
                + (SELECT count(*) FROM "WebhookDelivery" WHERE shop = $1 AND status IN ('queued', 'running'))::int AS n`,
          [subject],
        );
        if (left?.n === 0) {
          subjectSeconds = elapsed / 1000;
          break;
        }
      }
      if (elapsed >= o.capMs) break;
    }
    stop = true;
    await Promise.all(loops);
    // The last changes get a few seconds to arrive; what does not is reported, not measured.
    await sleep(3_000);
    fold();

    const perShop = new Map<string, number[]>();
    let lost = 0;
    for (const [email, { shop, at }] of sent) {
      const got = arrival.get(email);
      if (got === undefined) {
        lost++;
        continue;
      }
      // By the shop's place, the same in every run (the names carry the run's tag).
      const key = shop.replace(`fair-${tag}-`, "").replace(".myshopify.com", "");
      const list = perShop.get(key) ?? [];
      list.push(got - at);
      perShop.set(key, list);
    }
    const secs = Number.isFinite(subjectSeconds) ? `${fmt(subjectSeconds, 1)} s` : "not finished by the cap";
    const subjectText =
      scenario === "import"
        ? `import: ${importObjects} of ${o.importCustomers} customers, ${subjectCalls} calls delivered, done in ${secs}`
        : scenario === "throttle"
          ? `throttled shop: ${subjectSent.size} changes, ${[...subjectSent].filter((e) => arrival.has(e)).length} arrived, ${subject429} answers of 429 in ${o.throttleMinutes} min, drained ${secs} after the 429s ended`
          : "alone";
    if (o.timeline && scenario !== "alone") printTimeline(started, sent, arrival, answered429);
    return { perShop, lost, load: `${loadAtStart} → ${load3()}`, subject: subjectText };
  } finally {
    stop = true;
    await Promise.all(loops);
    await Promise.all(workers.map((w) => w.stop()));
    installDatabase(undefined);
    await database.close();
    await pgDb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await emulator.close();
  }
}
