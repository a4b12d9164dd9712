import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { installDatabase, openDatabase, type Database } from "~/db.server";
import { leaseFor, PIPELINE_POLICY } from "~/pipeline/policy";
import { connectShop } from "~/backfill/connect.server";
import { startEmulator, type Emulator, type RecordedRequest } from "../../dev/emulator/server";
import { createTestDatabase, describeEachDatabase, type DatabaseKind, type TestDatabase } from "../support/database";
import { applyTestEnv } from "../support/env";
import { customerBody } from "../support/pipeline";
import { appProcessEnv, prepareConnectedDataDir, spawnApp, type AppProcess } from "../support/processes";
import { sendWebhook } from "../support/webhooks";

/**
 * The promise of the pipeline: a webhook answered 200 is never lost. The real server runs as a
 * child process on a PGlite directory (and on a PostgreSQL database when TEST_DATABASE_URL is set), takes a burst of webhooks while delivering to the emulator,
 * and is killed with SIGKILL mid-burst, mid-delivery. After a restart on the same directory (and
 * Shopify's retries of what was not acknowledged), every acknowledged customer must reach the
 * service. At-least-once: re-sends of the calls in flight at the crash are counted and bounded.
 */

const TOTAL = 400;
const CONCURRENCY = 20;
const RUN = randomUUID().slice(0, 8);

interface Hook {
  index: number;
  customerId: string;
  email: string;
  body: Record<string, unknown>;
  eventId: string;
  webhookId: string;
  /** answered 200 by the first process, before the crash */
  ackedBeforeCrash: boolean;
  /** answered 200 by either process */
  acked: boolean;
}

const makeHooks = (kind: DatabaseKind): Hook[] => Array.from({ length: TOTAL }, (_, index) => {
  const customerId = String(8_800_000 + index);
  const email = `crash-${RUN}-${kind}-${index}@example.com`;
  return {
    index,
    customerId,
    email,
    body: customerBody({ id: customerId, email }),
    eventId: `evt-crash-${RUN}-${kind}-${index}`,
    webhookId: `wh-crash-${RUN}-${kind}-${index}`,
    ackedBeforeCrash: false,
    acked: false,
  };
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

const ok = (r: RecordedRequest) => r.status !== null && r.status >= 200 && r.status < 300;
const upsertsOf = (e: Emulator) => e.requests.filter((r) => r.method === "POST" && r.path === "/api/people");
const customerCreatedOf = (e: Emulator) => e.requests.filter((r) => r.method === "POST" && r.path === "/api/events/customer/created");

/** How many times each key was sent (successful requests only), and the surplus over once. */
function tally(requests: RecordedRequest[], keyOf: (r: RecordedRequest) => string) {
  const counts = new Map<string, number>();
  for (const r of requests.filter(ok)) counts.set(keyOf(r), (counts.get(keyOf(r)) ?? 0) + 1);
  const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  return { counts, duplicates };
}
const upsertEmail = (r: RecordedRequest) => String((r.body as { email?: unknown }).email).toLowerCase();
const eventCustomerId = (r: RecordedRequest) => String((r.body as { id?: unknown }).id);

interface Burst {
  /** requests sent and not answered yet */
  readonly inFlight: number;
  /** no new request is started once this is set */
  stop(): void;
  /** resolves when every sender is done: the hooks that were sent and not answered 200 */
  done: Promise<Hook[]>;
}

/** Sends `batch` with `concurrency` senders; `gate` may hold a sender before each send. */
function sendAll(url: string, shop: string, batch: Hook[], onAck: (h: Hook) => void, gate: () => Promise<void> = async () => {}): Burst {
  const failed: Hook[] = [];
  let next = 0;
  let inFlight = 0;
  let stopped = false;
  const sender = async () => {
    for (;;) {
      await gate();
      if (stopped || next >= batch.length) return;
      const hook = batch[next++];
      inFlight++;
      try {
        const res = await sendWebhook(url, {
          topic: "customers/create",
          shop,
          body: hook.body,
          eventId: hook.eventId,
          webhookId: hook.webhookId,
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.status === 200) onAck(hook);
        else failed.push(hook);
      } catch {
        failed.push(hook); // connection reset by the crash: not acknowledged, Shopify retries it
      } finally {
        inFlight--;
      }
    }
  };
  const done = Promise.all(Array.from({ length: CONCURRENCY }, sender)).then(() => failed);
  return {
    get inFlight() {
      return inFlight;
    },
    stop: () => (stopped = true),
    done,
  };
}

describeEachDatabase("crash safety (SIGKILL of the real server)", (kind) => {
  const SHOP = `crash-${kind}-${Date.now().toString(36)}.myshopify.com`;
  const hooks = makeHooks(kind);
  let emulator: Emulator | undefined;
  let app: AppProcess | undefined;
  let prepDb: Database | undefined;
  let pgDb: TestDatabase | undefined;
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-crash-"));

  afterAll(async () => {
    await app?.crash();
    if (prepDb) {
      installDatabase(undefined);
      await prepDb.close().catch(() => undefined);
    }
    await pgDb?.destroy();
    await emulator?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const childEnv = (emulatorUrl: string) =>
    appProcessEnv(pgDb ? { databaseUrl: pgDb.url, marketingApiUrl: emulatorUrl } : { dataDir, marketingApiUrl: emulatorUrl });

  // On PostgreSQL a dead worker's claims are taken over when its lease ends (PGlite: at start-up).
  const takeoverMs = kind === "postgres" ? leaseFor(PIPELINE_POLICY, 10_000) : 0;

  it("delivers every acknowledged webhook after a kill -9 and a restart", { timeout: 300_000 + takeoverMs }, async () => {
    const started = Date.now();
    emulator = await startEmulator({ port: 0 });
    const t = { emulator: Date.now(), connected: 0 };
    const emu = emulator;
    emu.setFaults({ latencyMs: 15, pathPrefix: "/api/" });

    // 1. A migrated database with the shop connected; a PGlite directory is closed again (one
    //    process's), a PostgreSQL database stays open here for the final count.
    if (kind === "pglite") {
      await prepareConnectedDataDir(dataDir, SHOP, emu);
    } else {
      applyTestEnv({ MARKETING_API_URL: emu.url });
      pgDb = await createTestDatabase("postgres");
      await connectShop(SHOP, { apiKey: emu.apiKey, baseUrl: emu.url, importHistory: false });
    }
    t.connected = Date.now();

    // 2. The real server, worker in-process.
    const spawnedAt = Date.now();
    app = await spawnApp({ env: childEnv(emu.url), timeoutMs: 90_000 });
    const first = app;
    const listeningAt = Date.now();

    // 3. The burst. Once half is acknowledged, senders wait for a moment with a service call in
    //    flight, and the crash follows within milliseconds: webhooks and service calls both in flight.
    let ackedCount = 0;
    const half = TOTAL / 2;
    const callsInFlight = () => emu.requests.filter((r) => r.path.startsWith("/api/") && r.status === null).length;
    const deliveriesStarted = () => upsertsOf(emu).some(ok);
    let crashing = false;
    const gate = async () => {
      if (ackedCount < half) return;
      const moment = () => crashing || (deliveriesStarted() && callsInFlight() > 0);
      await waitFor("deliveries with a call in flight", moment, 45_000, 1).catch(() => undefined);
    };
    const firstBurst = sendAll(
      first.url,
      SHOP,
      hooks,
      (h) => {
        h.ackedBeforeCrash = h.acked = true;
        ackedCount++;
      },
      gate,
    );
    await waitFor("half of the burst acknowledged", () => ackedCount >= half, 90_000, 5);
    const halfAckedAt = Date.now();
    // Bounded: if the moment does not come, crash anyway (the report says what was in flight).
    await waitFor(
      "webhooks and service calls in flight",
      () => deliveriesStarted() && callsInFlight() > 0 && firstBurst.inFlight > 0,
      20_000,
      1,
    ).catch(() => undefined);
    const crashedAt = Date.now();
    const callsInFlightAtCrash = callsInFlight();
    const webhooksInFlightAtCrash = firstBurst.inFlight;
    const requestsBeforeCrash = emu.requests.length;
    firstBurst.stop();
    crashing = true;
    await first.crash();
    const crashExit = await first.exited;
    expect(crashExit.signal).toBe("SIGKILL");
    const unanswered = await firstBurst.done;
    const firstErrors = first.errors();
    const ackedBeforeCrash = hooks.filter((h) => h.ackedBeforeCrash);
    const upsertsBeforeRestart = tally(upsertsOf(emu), upsertEmail).counts.size;

    // 4. Restart on the same directory, and Shopify's retries of everything not acknowledged
    //    (the in-flight ones failed; the rest were never sent). Same Event-Id, as Shopify does.
    const restartedAt = Date.now();
    app = await spawnApp({ env: childEnv(emu.url), timeoutMs: 90_000 });
    const second = app;
    const relisteningAt = Date.now();
    const retried = hooks.filter((h) => !h.acked);
    const failedAfterRestart = await sendAll(second.url, SHOP, retried, (h) => (h.acked = true)).done;
    expect(failedAfterRestart.map((h) => h.index)).toEqual([]);

    // 5. Everything acknowledged reaches the service: the contact and its customer/created event.
    const missing = () => {
      const upserted = tally(upsertsOf(emu), upsertEmail).counts;
      const evented = tally(customerCreatedOf(emu), eventCustomerId).counts;
      return hooks.filter(
        (h) => h.acked && (!emu.person(h.email) || !upserted.has(h.email.toLowerCase()) || !evented.has(h.customerId)),
      );
    };
    await waitFor("every acknowledged customer delivered", () => missing().length === 0, 120_000 + takeoverMs, 100).catch((error: Error) => {
      const m = missing();
      throw new Error(
        `${error.message}: ${m.length} missing (${m.filter((h) => h.ackedBeforeCrash).length} acknowledged before the crash), ` +
          `e.g. ${m.slice(0, 5).map((h) => h.email).join(", ")}\n--- app output ---\n${second.output().slice(-30).join("\n")}`,
      );
    });
    const deliveredAt = Date.now();

    // 6. Let anything still queued drain, stop gracefully, and read the database.
    await sleep(PIPELINE_POLICY.pollMs * 4);
    await second.stop();
    app = undefined;
    const upserts = tally(upsertsOf(emu), upsertEmail);
    const events = tally(customerCreatedOf(emu), eventCustomerId);
    const failedCalls = emu.requests.filter((r) => r.path.startsWith("/api/") && r.status !== null && !ok(r));

    prepDb = pgDb ?? openDatabase({ kind: "pglite", dataDir });
    const deliveries = await prepDb.prisma.webhookDelivery.groupBy({ by: ["status", "outcome"], _count: true, where: { shop: SHOP } });
    const calls = await prepDb.prisma.outboundCall.groupBy({ by: ["status"], _count: true, where: { shop: SHOP } });
    const counter = await prepDb.prisma.syncCounter.findUnique({ where: { shop_kind: { shop: SHOP, kind: "customer" } } });
    if (!pgDb) await prepDb.close();
    prepDb = undefined;

    const report = {
      total: TOTAL,
      ackedBeforeCrash: ackedBeforeCrash.length,
      webhooksInFlightAtCrash,
      webhooksUnansweredAtCrash: unanswered.length,
      resentAfterRestart: retried.length,
      serviceCallsInFlightAtCrash: callsInFlightAtCrash,
      serviceRequestsBeforeCrash: requestsBeforeCrash,
      contactsUpsertedBeforeRestart: upsertsBeforeRestart,
      delivered: { contacts: upserts.counts.size, customerCreated: events.counts.size },
      duplicates: { upserts: upserts.duplicates, customerCreated: events.duplicates },
      failedServiceRequests: failedCalls.length,
      webhookDeliveries: deliveries.map((d) => `${d.status}/${d.outcome}: ${d._count}`),
      outboundCalls: calls.map((c) => `${c.status}: ${c._count}`),
      counter: counter && { received: counter.received, duplicates: counter.duplicates, delivered: counter.delivered },
      seconds: {
        total: (deliveredAt - started) / 1000,
        prepare: {
          emulator: (t.emulator - started) / 1000,
          migrateAndConnect: (t.connected - t.emulator) / 1000,
          close: (spawnedAt - t.connected) / 1000,
        },
        firstStart: (listeningAt - spawnedAt) / 1000,
        listeningToHalfAcked: (halfAckedAt - listeningAt) / 1000,
        halfAckedToCrash: (crashedAt - halfAckedAt) / 1000,
        crashToRestart: (restartedAt - crashedAt) / 1000,
        restart: (relisteningAt - restartedAt) / 1000,
        restartToAllDelivered: (deliveredAt - restartedAt) / 1000,
      },
      appErrorLogs: [...firstErrors, ...second.errors()].slice(0, 10),
    };
    // eslint-disable-next-line no-console -- the report is the point of this test
    console.log(`crash test report: ${JSON.stringify(report, null, 2)}`);

    // Acknowledged before the crash means owed: every one of them, contact and event.
    expect(ackedBeforeCrash.length).toBeGreaterThanOrEqual(half);
    expect(ackedBeforeCrash.length).toBeLessThan(TOTAL); // the crash did land mid-burst
    for (const h of ackedBeforeCrash) {
      expect(emu.person(h.email), h.email).toBeDefined();
      expect(upserts.counts.get(h.email.toLowerCase()) ?? 0, h.email).toBeGreaterThanOrEqual(1);
      expect(events.counts.get(h.customerId) ?? 0, h.customerId).toBeGreaterThanOrEqual(1);
    }
    // After the retries everything was acknowledged, so everything is owed.
    expect(hooks.every((h) => h.acked)).toBe(true);
    expect(upserts.counts.size).toBe(TOTAL);
    expect(events.counts.size).toBe(TOTAL);
    // One recorded delivery per Event-Id, whatever the retries; nothing left behind or dead.
    expect(deliveries.reduce((n, d) => n + d._count, 0)).toBe(TOTAL);
    expect(deliveries.every((d) => d.status === "done" && d.outcome === "planned")).toBe(true);
    expect(calls.every((c) => c.status === "delivered")).toBe(true);
    // At-least-once: only calls in flight at the crash (one claimed batch) may be sent twice.
    expect(upserts.duplicates + events.duplicates).toBeLessThanOrEqual(PIPELINE_POLICY.batchSize * 2);
  });
});
