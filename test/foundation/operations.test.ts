import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "~/db.server";
import { startEmulator, type Emulator, type RecordedRequest } from "../../dev/emulator/server";
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../support/database";
import { applyTestEnv } from "../support/env";
import { customerBody } from "../support/pipeline";
import { appProcessEnv, prepareConnectedDataDir, spawnApp, type AppProcess } from "../support/processes";
import { sendWebhook } from "../support/webhooks";
import { connectShop } from "~/backfill/connect.server";

/**
 * What the people who run the app rely on: liveness and readiness probes, Prometheus metrics on
 * every process, and a SIGTERM that finishes the calls in flight and hands the rest back.
 */

const RUN = randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const ok = (r: RecordedRequest) => r.status !== null && r.status >= 200 && r.status < 300;
const serviceRequests = (e: Emulator) => e.requests.filter((r) => r.path.startsWith("/api/"));
/** The emails of every person upsert the service answered with success, once per request. */
const upsertedEmails = (e: Emulator) =>
  e.requests.filter((r) => ok(r) && r.method === "POST" && r.path === "/api/people").map((r) => String((r.body as { email?: unknown }).email).toLowerCase());

function metricValue(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("probes and metrics of the app process", () => {
  const SHOP = `ops-${RUN}.myshopify.com`;
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-ops-"));
  let emulator: Emulator | undefined;
  let app: AppProcess | undefined;

  afterAll(async () => {
    await app?.crash();
    await emulator?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers /healthz and /readyz, and counts webhooks and deliveries in /metrics", { timeout: 180_000 }, async () => {
    emulator = await startEmulator({ port: 0 });
    await prepareConnectedDataDir(dataDir, SHOP, emulator);
    app = await spawnApp({ env: appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), timeoutMs: 90_000 });

    const health = await fetch(`${app.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const ready = await fetch(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: { database: "ok", migrations: "ok", worker: "ok", shutdown: "ok" },
    });

    const email = `ops-${RUN}@example.com`;
    const accepted = await sendWebhook(app.url, { topic: "customers/create", shop: SHOP, body: customerBody({ id: "7100001", email }) });
    expect(accepted.status).toBe(200);
    const forged = await sendWebhook(app.url, { topic: "customers/create", shop: SHOP, body: customerBody({ id: "7100002" }), secret: "not-the-app-secret" });
    expect(forged.status).toBe(401);
    const emu = emulator;
    await waitFor("the customer at the service", () => emu.person(email) !== undefined);

    // Counters are written after the service answers: poll until the delivery is counted.
    let text = "";
    await waitFor("the delivery counted", async () => {
      const res = await fetch(`${app!.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      text = await res.text();
      return (metricValue(text, "marketing_sync_service_calls_total", 'result="delivered"') ?? 0) >= 1;
    });
    expect(metricValue(text, "marketing_sync_webhooks_answered_total", 'status="200"')).toBe(1);
    expect(metricValue(text, "marketing_sync_webhooks_answered_total", 'status="401"')).toBe(1);
    expect(metricValue(text, "marketing_sync_service_calls_total", 'kind="customer",result="delivered",error_class="none"')).toBeGreaterThanOrEqual(1);
    for (const queue of ["webhooks", "calls", "dead_letters", "abandonment_timers", "history_imports"]) {
      expect(metricValue(text, "marketing_sync_queue_depth", `queue="${queue}"`), queue).toBeTypeOf("number");
    }
    expect(text).toContain("marketing_sync_process_resident_memory_bytes");

    // The slowest shops' domains are in the metrics: not for anyone behind a proxy without the token.
    const proxied = await fetch(`${app.url}/metrics`, { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(proxied.status).toBe(403);
  });
});

describe("graceful shutdown (SIGTERM of the real server mid-delivery)", () => {
  const SHOP = `ops-stop-${RUN}.myshopify.com`;
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-stop-"));
  const TOTAL = 120;
  let emulator: Emulator | undefined;
  let app: AppProcess | undefined;

  afterAll(async () => {
    await app?.crash();
    await emulator?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("finishes the calls at the service, hands the rest back, and sends nothing twice after a restart", { timeout: 300_000 }, async () => {
    emulator = await startEmulator({ port: 0 });
    const emu = emulator;
    await prepareConnectedDataDir(dataDir, SHOP, emu);
    const env = appProcessEnv({ dataDir, marketingApiUrl: emu.url });
    app = await spawnApp({ env, timeoutMs: 90_000 });
    const first = app;

    // Slow answers keep calls at the service long enough for the signal to land among them.
    emu.setFaults({ latencyMs: 1_500, pathPrefix: "/api/" });
    const emails = Array.from({ length: TOTAL }, (_, i) => `stop-${RUN}-${i}@example.com`);
    for (let i = 0; i < TOTAL; i++) {
      const res = await sendWebhook(first.url, { topic: "customers/create", shop: SHOP, body: customerBody({ id: String(7_200_000 + i), email: emails[i] }) });
      expect(res.status).toBe(200);
    }
    await waitFor("calls in flight at the service", () => serviceRequests(emu).some((r) => r.status === null));

    await first.stop(60_000);
    const exit = await first.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(first.output().some((l) => l.includes('"msg":"stopped"'))).toBe(true);

    // Nothing was cut off at the service, and nothing is left leased to the stopped process.
    expect(serviceRequests(emu).every((r) => r.status !== null)).toBe(true);
    const db = openDatabase({ kind: "pglite", dataDir });
    const byStatus = await db.prisma.outboundCall.groupBy({ by: ["status"], _count: true, where: { shop: SHOP } });
    const leased = await db.prisma.outboundCall.count({ where: { shop: SHOP, lockedBy: { not: null } } });
    await db.close();
    const count = (status: string) => byStatus.find((b) => b.status === status)?._count ?? 0;
    expect(count("delivered")).toBeGreaterThan(0);
    expect(count("running")).toBe(0);
    expect(leased).toBe(0);
    expect(count("queued")).toBeGreaterThan(0); // the signal did land mid-delivery
    const answeredBeforeStop = upsertedEmails(emu).length;

    // After a restart the rest goes out, and what the service answered before the stop (recorded as
    // delivered, not handed back) is not sent again: each customer reaches it exactly once.
    emu.clearFaults();
    app = await spawnApp({ env, timeoutMs: 90_000 });
    await waitFor("every customer at the service", () => emails.every((e) => emu.person(e) !== undefined), 120_000);
    await app.stop();
    const upserted = upsertedEmails(emu);
    expect(answeredBeforeStop).toBeGreaterThan(0);
    expect(new Set(upserted).size).toBe(TOTAL);
    expect(upserted.length).toBe(TOTAL);
  });
});

describe.skipIf(!TEST_DATABASE_URL)("probes of a worker process (npm run worker, PostgreSQL)", () => {
  let db: TestDatabase | undefined;
  let emulator: Emulator | undefined;
  let worker: AppProcess | undefined;

  afterAll(async () => {
    await worker?.crash();
    await db?.destroy();
    await emulator?.close();
  });

  it("serves /healthz, /readyz and /metrics on its own port and stops cleanly on SIGTERM", { timeout: 180_000 }, async () => {
    emulator = await startEmulator({ port: 0 });
    applyTestEnv({ MARKETING_API_URL: emulator.url });
    db = await createTestDatabase("postgres");
    await connectShop(`ops-worker-${RUN}.myshopify.com`, { apiKey: emulator.apiKey, baseUrl: emulator.url, importHistory: false });
    const env = { ...appProcessEnv({ databaseUrl: db.url!, marketingApiUrl: emulator.url }), WORKER_PORT: "0", METRICS_TOKEN: `token-${RUN}-0123456789` };
    worker = await spawnApp({ env, script: "build/server/worker.js", listeningMessage: "workers running", timeoutMs: 90_000 });

    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${worker.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { worker: string } }).checks.worker).toBe("ok");
    // With a token configured, even a local reader needs it.
    expect((await fetch(`${worker.url}/metrics`)).status).toBe(403);
    const metrics = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer token-${RUN}-0123456789` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("marketing_sync_queue_depth");
    expect((await fetch(`${worker.url}/elsewhere`)).status).toBe(404);

    await worker.stop();
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });
});
