/**
 * Fairness between shops: how long a quiet shop's change takes to reach the service while another
 * shop floods the pipeline, and while one account answers 429.
 *
 *   npx tsx bench/fairness.ts [--flood 3000[,30000]] [--shops 50] [--every-ms 3000] [--alone-s 20]
 *                             [--workers 1] [--service-latency 20] [--cap-s 150]
 *                             [--postgres | --no-postgres] [--db pglite|postgres|both]
 *                             [--scenario flood,import,throttle] [--import-customers 100000]
 *                             [--throttle-minutes 10] [--retry-after 5] [--throttle-backlog 500] [--timeline]
 *                             [--send record|http|both] [--mover back-to-back,resting]
 *                             [--admin-latency MS | --no-admin]
 * (import and throttle: bench/fairness-scenarios.ts)
 *
 * For each database (PGlite in a temporary directory; a new ms_bench_* PostgreSQL database) and
 * each scenario, a fresh database and emulator (in this process: it hands out one account per
 * shop, and the 429 fault is set on one account only), `--shops` quiet shops, each connected to its
 * own account, each recording a customers/create every `--every-ms` (jittered) through
 * recordDelivery(), as the webhook route does. The latency of a change is from its recording to its
 * person reaching the emulator (arrival, before the emulator's `--service-latency`). Scenarios:
 *   alone      the quiet shops only, for `--alone-s` seconds: each shop's latency alone;
 *   flood N    another shop records N customers/create at once (2 calls each) while the quiet shops
 *              go on, until the flood is delivered (or `--cap-s`); `--timeline` prints the quiet
 *              changes by 10 s window of their recording, and each run says how long the flood
 *              took to record;
 *   flood+429  the same, and one more quiet shop whose account answers every call 429
 *              (Retry-After 5 s) throughout: the others must not notice.
 * The bound (issue 33): every quiet shop's p99 within max(2 s, 3 × its p99 alone). Workers run in
 * this process with the production policy (PGlite: one, in the app as it would be; PostgreSQL:
 * `--workers`).
 *
 * `--send` says how the webhooks arrive (flood scenarios; `both` runs each scenario both ways):
 *   record  (default) recordDelivery() called directly: the flood's customers/create are recorded in
 *           a second or two, before most quiet changes, and the measure is of planning and delivery;
 *   http    as the demo and production run: signed webhooks POSTed to `/webhooks` of the production
 *           handler (receiveNodeWebhook) served by this process, beside its worker, the flood as
 *           `--flood` distinct orders/create 16 at a time (the demo's replay), the quiet shops'
 *           customers/create each from its own loop; the quiet changes sent while the flood is being
 *           acknowledged are the ones that count. A quiet change's latency is from its send to its
 *           person reaching the emulator, split into answered (sent → 200), planned (→ the delivery's
 *           finishedAt) and arrived (→ the service).
 * Every shop of the flood scenarios has its offline session, and Shopify's Admin runs in a child
 * process (bench/shopify-child.ts), as in production: planning confirms each new subscriber's
 * consent with it (one read per shop and planning batch). `--admin-latency MS` has it answer MS
 * later, as Shopify a network away; `--no-admin` leaves the shops without sessions (nothing asked).
 * `--mover` runs every scenario once per way the journal's mover may run, to compare them in one run:
 * `resting` (the policy as shipped: a rest after each batch, batches sized by time) and
 * `back-to-back` (ACK_JOURNAL_POLICY.moverRestMaxMs and moveBatchTargetMs 0: batches of 50 back to back).
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { applyTestEnv } from "../test/support/env";
import { startShopifyChild, type ShopifyChild } from "./shopify-child";
import { FAIRNESS_SCENARIOS, printTimeline, runFairnessScenarios, type FairnessScenario } from "./fairness-scenarios";
import {
  connectBenchShop,
  documentedOrderAs,
  fmt,
  openBenchDatabase,
  percentileOf as percentile,
  postgresAdminUrl,
  printMachine,
  printTable,
  recordCustomerCreate,
  sleep,
  startBenchWorkers,
  type BenchDb as Db,
} from "./support";

applyTestEnv({ LOG_LEVEL: "silent" });
const { moveJournaledDeliveries, journaledBacklog } = await import("../app/pipeline/record.server");
const { ACK_JOURNAL_POLICY } = await import("../app/pipeline/ack-journal.server");
const moverAsShipped = { moverRestMaxMs: ACK_JOURNAL_POLICY.moverRestMaxMs, moveBatchTargetMs: ACK_JOURNAL_POLICY.moveBatchTargetMs };
type Mover = "resting" | "back-to-back";
const { receiveNodeWebhook } = await import("../app/webhooks/ingest.server");
const { database } = await import("../app/db.server");
const { startEmulator } = await import("../dev/emulator/server");
const { fixture, webhookHeaders } = await import("../test/support/webhooks");
const { customerBody } = await import("../test/support/pipeline");

const USAGE = `npx tsx bench/fairness.ts [--flood 3000[,30000]] [--shops 50] [--every-ms 3000] [--alone-s 20]
                          [--workers 1] [--service-latency 20] [--cap-s 150] [--postgres | --no-postgres]
                          [--db pglite|postgres|both] [--scenario flood,import,throttle] [--import-customers 100000]
                          [--throttle-minutes 10] [--retry-after 5] [--throttle-backlog 500] [--timeline]
                          [--send record|http|both] [--mover back-to-back,resting]
(what each option means: the comment at the top of bench/fairness.ts)`;

type Send = "record" | "http";
interface Scenario {
  name: string;
  flood: number;
  limited: boolean;
  send: Send;
  /** How the journal's mover runs, when compared (`--mover`). */
  mover: Mover | undefined;
}
interface Result {
  db: Db;
  send: Send;
  mover: Mover | undefined;
  scenario: string;
  /** Latencies (ms) per quiet shop ("quiet-000", …). */
  perShop: Map<string, number[]>;
  /** Changes recorded but not at the service when the scenario ended. */
  lost: number;
  /** Flood customers whose person reached the service (each is 2 calls: the person and an event). */
  floodCalls: number;
  floodSeconds: number;
  /** Seconds the flood's deliveries took to record (the webhook route's share of the one thread on PGlite). */
  floodRecordedSeconds: number;
  limitedAsked: number;
  /** Where the counted quiet changes spent their time (ms): sent → answered, → planned, → at the service. */
  stages: { ack: number[]; plan: number[]; deliver: number[] };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      flood: { type: "string", default: "3000" },
      shops: { type: "string", default: "50" },
      "every-ms": { type: "string", default: "3000" },
      "alone-s": { type: "string", default: "20" },
      workers: { type: "string", default: "1" },
      "service-latency": { type: "string", default: "20" },
      "cap-s": { type: "string", default: "150" },
      postgres: { type: "boolean", default: false },
      "no-postgres": { type: "boolean", default: false },
      help: { type: "boolean", default: false },
      scenario: { type: "string", default: "flood" },
      "import-customers": { type: "string", default: "100000" },
      "throttle-minutes": { type: "string", default: "10" },
      "retry-after": { type: "string", default: "5" },
      "throttle-backlog": { type: "string", default: "500" },
      db: { type: "string", default: "both" },
      timeline: { type: "boolean", default: false },
      send: { type: "string", default: "record" },
      mover: { type: "string" },
      "admin-latency": { type: "string", default: "0" },
      "no-admin": { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const floods = values.flood.split(",").map(Number);
  const shops = Number(values.shops);
  const everyMs = Number(values["every-ms"]);
  const aloneMs = Number(values["alone-s"]) * 1000;
  const pgWorkers = Number(values.workers);
  const latencyMs = Number(values["service-latency"]);
  const capMs = Number(values["cap-s"]) * 1000;
  if (!(floods.every((n) => n >= 1 && n <= 100_000) && shops >= 1 && shops <= 500 && everyMs >= 100 && aloneMs >= 1000 && capMs >= 10_000 && pgWorkers >= 1 && pgWorkers <= 16)) {
    throw new Error("--flood 1..100000 (list), --shops 1..500, --every-ms ≥ 100, --alone-s ≥ 1, --cap-s ≥ 10, --workers 1..16");
  }
  if (!["record", "http", "both"].includes(values.send)) throw new Error("--send record, http or both");
  const sends: Send[] = values.send === "both" ? ["record", "http"] : [values.send as Send];
  const adminUrl = await postgresAdminUrl({ postgres: values.postgres, noPostgres: values["no-postgres"] });
  const dbs = (["pglite", ...(adminUrl ? ["postgres"] : [])] as Db[]).filter((d) => values.db === "both" || values.db === d);
  // import and throttle: bench/fairness-scenarios.ts (flood stays below).
  const picked = values.scenario.split(",") as FairnessScenario[];
  if (!picked.every((s) => FAIRNESS_SCENARIOS.includes(s))) throw new Error(`--scenario one or more of ${FAIRNESS_SCENARIOS.join(", ")}`);
  const others = picked.filter((s) => s !== "flood");
  const adminLatencyMs = Number(values["admin-latency"]);
  if (!(adminLatencyMs >= 0 && adminLatencyMs <= 10_000)) throw new Error("--admin-latency 0..10000 (ms)");
  const shopify = values["no-admin"] && !others.includes("import") ? undefined : await startShopifyChild({ latencyMs: adminLatencyMs });
  const sessions = values["no-admin"] ? undefined : shopify;
  if (others.length) {
    const [importCustomers, throttleMinutes, retryAfterSeconds, throttleBacklog] = ["import-customers", "throttle-minutes", "retry-after", "throttle-backlog"].map((k) => Number(values[k as "retry-after"]));
    if (!(importCustomers >= 1 && importCustomers <= 200_000 && throttleMinutes > 0 && retryAfterSeconds >= 0 && throttleBacklog >= 0)) throw new Error("--import-customers 1..200000, --throttle-minutes > 0, --retry-after ≥ 0, --throttle-backlog ≥ 0");
    await runFairnessScenarios(others, { dbs, adminUrl, shops, everyMs, aloneMs, capMs, latencyMs, workers: pgWorkers, importCustomers, throttleMinutes, retryAfterSeconds, throttleBacklog, timeline: values.timeline, shopify, sessions: Boolean(sessions) });
  }
  if (!picked.includes("flood")) return void (await shopify?.close());
  const movers = (values.mover?.split(",") ?? [undefined]) as (Mover | undefined)[];
  if (!movers.every((m) => m === undefined || m === "resting" || m === "back-to-back")) throw new Error("--mover resting, back-to-back or both (a list)");
  const scenarios: Scenario[] = movers.flatMap((mover) =>
    sends.flatMap((send) => {
      const tag = `${sends.length > 1 || send === "http" ? ` (${send})` : ""}${mover === undefined ? "" : `, mover ${mover}`}`;
      return [
        { name: `alone${tag}`, flood: 0, limited: false, send, mover },
        ...floods.map((n) => ({ name: `flood ${n}${tag}`, flood: n, limited: false, send, mover })),
        { name: `flood ${floods[0]} + one account 429${tag}`, flood: floods[0]!, limited: true, send, mover },
      ];
    }),
  );
  console.log(
    `fairness: ${shops} quiet shops, a change each every ~${everyMs} ms; service ${latencyMs} ms away; ` +
      `${sessions ? `Shopify's Admin ${adminLatencyMs} ms away` : "no offline sessions (--no-admin)"}; ` +
      `scenarios: ${scenarios.map((s) => s.name).join("; ")}; ${new Date().toISOString()}`,
  );
  const results: Result[] = [];
  for (const db of dbs) {
    for (const scenario of scenarios) {
      process.stdout.write(`  ${db}, ${scenario.name} … `);
      const r = await run(db, scenario, { adminUrl, shops, everyMs, aloneMs, capMs, latencyMs, workers: db === "pglite" ? 1 : pgWorkers, timeline: values.timeline, shopify: sessions });
      results.push(r);
      const all = [...r.perShop.values()].flat();
      console.log(`${all.length} changes, p99 ${fmt(percentile(all, 99), 0)} ms${scenario.flood ? `; flood: recorded in ${fmt(r.floodRecordedSeconds, 1)} s, ${r.floodCalls} customers delivered in ${fmt(r.floodSeconds, 1)} s` : ""}`);
    }
  }

  console.log();
  const rows: (string | number)[][] = [];
  for (const r of results) {
    // Each way of sending against its own alone run.
    const alone = results.find((a) => a.db === r.db && a.send === r.send && a.mover === r.mover && a.scenario.startsWith("alone"))!;
    const all = [...r.perShop.values()].flat();
    // Per shop: its p99 against max(2 s, 3 × its p99 alone).
    let worstShop = "";
    let worstRatio = 0;
    let over = 0;
    for (const [shop, latencies] of r.perShop) {
      const bound = Math.max(2_000, 3 * percentile(alone.perShop.get(shop) ?? [], 99));
      const p99 = percentile(latencies, 99);
      if (p99 > bound) over++;
      if (p99 / bound > worstRatio) {
        worstRatio = p99 / bound;
        worstShop = `${fmt(p99, 0)} / ${fmt(bound, 0)}`;
      }
    }
    rows.push([
      r.db,
      r.scenario,
      all.length,
      fmt(percentile(all, 50), 0),
      fmt(percentile(all, 90), 0),
      fmt(percentile(all, 99), 0),
      fmt(Math.max(...all), 0),
      worstShop,
      r.scenario.startsWith("alone") ? "-" : over ? `MISS (${over} shops)` : "ok",
      r.lost,
      r.floodCalls ? `${r.floodCalls} in ${fmt(r.floodSeconds, 1)} s (${fmt((2 * r.floodCalls) / r.floodSeconds, 0)} calls/s), recorded in ${fmt(r.floodRecordedSeconds, 1)} s` : "-",
      r.scenario.includes("429") ? r.limitedAsked : "-",
      ...(["ack", "plan", "deliver"] as const).map((k) => (r.stages[k].length ? `${fmt(percentile(r.stages[k], 50), 0)} / ${fmt(Math.max(...r.stages[k]), 0)}` : "-")),
    ]);
  }
  printTable(
    ["db", "scenario", "changes", "p50 ms", "p90 ms", "p99 ms", "max ms", "worst shop p99 / bound ms", "bound", "not arrived", "flood customers delivered", "429s answered", "answered p50 / max ms", "→ planned", "→ arrived"],
    rows,
  );
  printMachine();
  await shopify?.close();
}

async function run(
  db: Db,
  scenario: Scenario,
  o: { adminUrl: string | undefined; shops: number; everyMs: number; aloneMs: number; capMs: number; latencyMs: number; workers: number; timeline: boolean; shopify: ShopifyChild | undefined },
): Promise<Result> {
  Object.assign(ACK_JOURNAL_POLICY, scenario.mover === "back-to-back" ? { moverRestMaxMs: 0, moveBatchTargetMs: 0 } : moverAsShipped);
  const emulator = await startEmulator({ port: 0 });
  const { close } = await openBenchDatabase(db, { adminUrl: o.adminUrl, tmpPrefix: "ms-bench-fair-" });
  const tag = randomUUID().slice(0, 6);
  const quiet = Array.from({ length: o.shops }, (_, i) => `fair-${tag}-quiet-${String(i).padStart(3, "0")}.myshopify.com`);
  const flood = `fair-${tag}-flood.myshopify.com`;
  const limited = `fair-${tag}-limited.myshopify.com`;
  // Each shop on its own account: the 429 fault is set on one account only.
  const account = () => ({ url: emulator.url, apiKey: emulator.createAccount({ doubleOptIn: false }).apiKey });
  let workers: { stop(): Promise<void> } | undefined;
  let web: ReturnType<typeof createServer> | undefined;
  let agent: Agent | undefined;
  try {
    for (const shop of quiet) await connectBenchShop(shop, account(), o.shopify);
    await connectBenchShop(flood, account(), o.shopify);
    const limitedAccount = emulator.createAccount({ doubleOptIn: false });
    await connectBenchShop(limited, { url: emulator.url, apiKey: limitedAccount.apiKey }, o.shopify);
    emulator.requests.length = 0;
    emulator.setFaults({
      latencyMs: o.latencyMs,
      ...(scenario.limited ? { burst429: { count: 1_000_000_000, retryAfterSeconds: 5, accountId: limitedAccount.accountId } } : {}),
    });

    let seq = 0;
    let record = (shop: string, email: string) => recordCustomerCreate(shop, { id: String(9_000_000 + ++seq), email });
    let floodOne = (email: string) => record(flood, email);
    if (scenario.send === "http") {
      // The production handler of POST /webhooks, served by this process beside its worker, as the
      // app (and the demo) runs it; keep-alive connections as Shopify's.
      web = createServer((req, res) => {
        if (req.method === "POST" && req.url === "/webhooks") receiveNodeWebhook(req, res, () => res.writeHead(500).end());
        else res.writeHead(404).end();
      });
      // Longer than undici's idle sockets: a socket the server closed under load reset a send (ECONNRESET).
      web.keepAliveTimeout = 65_000;
      await new Promise<void>((resolve) => web!.listen(0, "127.0.0.1", resolve));
      const target = `http://127.0.0.1:${(web.address() as AddressInfo).port}/webhooks`;
      agent = new Agent({ connections: 64 });
      const dispatcher = agent;
      const post = async (shop: string, topic: string, body: string) => {
        const res = await request(target, { method: "POST", headers: webhookHeaders({ topic, shop, body }), body, dispatcher, signal: AbortSignal.timeout(30_000) });
        await res.body.arrayBuffer();
        if (res.statusCode !== 200) throw new Error(`POST /webhooks answered ${res.statusCode}`);
      };
      record = (shop, email) => post(shop, "customers/create", JSON.stringify(customerBody({ id: String(9_000_000 + ++seq), email })));
      // Each order its own customer (the documented order's customer and emails replaced).
      const order = fixture("orders/create");
      let orderSeq = 0;
      floodOne = (email) => {
        const n = ++orderSeq;
        const customerId = String(115310627314723950n + BigInt(n));
        const body = documentedOrderAs(order, n)
          .replace('"id": 115310627314723950', `"id": ${customerId}`)
          .replace("gid://shopify/Customer/115310627314723954", `gid://shopify/Customer/${customerId}`)
          .replaceAll(/"(jon|john)@example\.com"/g, `"${email}"`)
          // Shopify's sample is a test order, which the app does not send: these are real ones.
          .replace('"test": true', '"test": false');
        return post(flood, "orders/create", body);
      };
    }

    workers = await startBenchWorkers(o.workers, `bench-fair-${db}`);
    const sent = new Map<string, { shop: string; at: number; answeredAt: number }>();
    let stop = false;
    const quietLoops = [...quiet, ...(scenario.limited ? [limited] : [])].map(async (shop, i) => {
      // Spread the shops' first changes over one period, then one every everyMs ± 25 %.
      await sleep((i / o.shops) * o.everyMs);
      let n = 0;
      while (!stop) {
        const email = `q${n++}-${shop.split(".")[0]}@example.com`;
        const change = { shop, at: Date.now(), answeredAt: 0 };
        sent.set(email, change);
        await record(shop, email);
        change.answeredAt = Date.now();
        await sleep(o.everyMs * (0.75 + Math.random() * 0.5));
      }
    });

    const started = Date.now();
    const floodEmails: string[] = [];
    if (scenario.flood && scenario.send === "record") {
      for (let i = 0; i < scenario.flood; i++) {
        const email = `f${i}-${tag}@example.com`;
        floodEmails.push(email);
        await floodOne(email);
      }
      await moveJournaledDeliveries();
    } else if (scenario.flood) {
      // The demo's replay: 16 at a time, each sender its next order as soon as one is answered.
      for (let i = 0; i < scenario.flood; i++) floodEmails.push(`f${i}-${tag}@example.com`);
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < floodEmails.length) await floodOne(floodEmails[next++]!);
        }),
      );
    }
    const floodRecordedSeconds = (Date.now() - started) / 1000;
    // Until the flood is delivered (or the cap), or for aloneMs with no flood.
    const arrived = () => new Set(emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people" && r.status !== null && r.status < 300).map((r) => (r.body as { email?: string }).email));
    // Orders reach the service as events, not people: over HTTP, the flood is through once none of
    // its deliveries and calls waits any more.
    const floodSettled = async () => {
      const [left] = await database().sql.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM "OutboundCall" WHERE shop = $1 AND status IN ('queued', 'running'))::int
              + (SELECT count(*) FROM "WebhookDelivery" WHERE shop = $1 AND status IN ('queued', 'running'))::int AS n`,
        [flood],
      );
      return left?.n === 0 && (await journaledBacklog()) === 0;
    };
    let floodSeconds = 0;
    for (;;) {
      await sleep(500);
      const elapsed = Date.now() - started;
      if (!scenario.flood) {
        if (elapsed >= o.aloneMs) break;
        continue;
      }
      if (scenario.send === "http" ? await floodSettled() : floodEmails.every((e) => arrived().has(e))) {
        floodSeconds = elapsed / 1000;
        break;
      }
      if (elapsed >= o.capMs) {
        floodSeconds = Number.NaN;
        break;
      }
    }
    stop = true;
    await Promise.all(quietLoops);
    // The last changes get a few seconds to arrive; what does not is reported, not measured.
    await sleep(3_000);

    const arrival = new Map<string, number>();
    for (const r of emulator.requests) {
      if (r.method !== "POST" || r.path !== "/api/people" || r.status === null || r.status >= 300) continue;
      const email = (r.body as { email?: string }).email ?? "";
      if (!arrival.has(email)) arrival.set(email, Date.parse(r.at));
    }
    const perShop = new Map<string, number[]>();
    let lost = 0;
    // Sent over HTTP, a flood's acknowledgements take a while: the changes sent meanwhile count.
    const countUntil = scenario.send === "http" && scenario.flood ? started + floodRecordedSeconds * 1000 : Infinity;
    for (const [email, { shop, at }] of sent) {
      if (shop === limited || at > countUntil) continue;
      const got = arrival.get(email);
      if (got === undefined) {
        lost++;
        continue;
      }
      // By the shop's place, the same in every scenario (the names carry the run's tag).
      const key = shop.replace(`fair-${tag}-`, "");
      const list = perShop.get(key) ?? [];
      list.push(got - at);
      perShop.set(key, list);
    }
    const floodCalls =
      scenario.send === "http"
        ? ((await database().sql.query<{ n: number }>(`SELECT count(DISTINCT "deliveryId")::int AS n FROM "OutboundCall" WHERE shop = $1 AND status = 'delivered'`, [flood]))[0]?.n ?? 0)
        : floodEmails.filter((e) => arrival.has(e)).length;
    const answered429 = emulator.requests.filter((r) => r.fault === "429");
    if (o.timeline && scenario.flood) {
      const quietSent = new Map([...sent].filter(([, s]) => s.shop !== limited));
      printTimeline(started, quietSent, arrival, answered429.map((r) => Date.parse(r.at)));
    }
    // Per counted quiet change: answered (sent → 200), planned (→ the delivery's finishedAt, on this
    // machine's clock like the rest), arrived (→ the service).
    const planned = new Map(
      (
        await database().sql.query<{ email: string; finished: number }>(
          `SELECT "rawBody"::jsonb->>'email' AS email, (extract(epoch FROM "finishedAt") * 1000)::float8 AS finished
             FROM "WebhookDelivery" WHERE shop = ANY($1::text[]) AND "finishedAt" IS NOT NULL`,
          [quiet],
        )
      ).map((r) => [r.email, Number(r.finished)]),
    );
    const stages = { ack: [] as number[], plan: [] as number[], deliver: [] as number[] };
    for (const [email, { shop, at, answeredAt }] of sent) {
      const got = arrival.get(email);
      const done = planned.get(email);
      if (shop === limited || at > countUntil || got === undefined || done === undefined || !answeredAt) continue;
      stages.ack.push(answeredAt - at);
      stages.plan.push(done - answeredAt);
      stages.deliver.push(got - done);
    }
    return { db, send: scenario.send, mover: scenario.mover, scenario: scenario.name, perShop, lost, floodCalls, floodSeconds, floodRecordedSeconds, limitedAsked: answered429.length, stages };
  } finally {
    await agent?.close();
    if (web) await new Promise((resolve) => (web!.closeAllConnections(), web!.close(resolve)));
    await workers?.stop();
    await close();
    await emulator.close();
  }
}

await main();
