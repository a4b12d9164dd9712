import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { listDeadLetters, replayDeadLetters } from "~/pipeline/dead-letters.server";
import { syncHealth } from "~/pipeline/counters.server";
import { encryptSecret } from "~/secrets.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `pipeline-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

describeEachDatabase("delivery pipeline", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database, env: { MARKETING_API_TIMEOUT_MS: "300" } });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const upserts = (email: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as { email?: string }).email === email);

  it("delivers a webhook repeated with the same Event-Id once, and counts the duplicates", async () => {
    const shop = newShop();
    await h.connect(shop);
    const body = customerBody({});
    for (let i = 0; i < 3; i++) {
      const res = await h.send({ topic: "customers/create", shop, body, eventId: "evt-same", webhookId: `wh-${i}` });
      expect(res.status).toBe(200);
    }
    h.startWorkers();
    await h.settle();
    expect(upserts(body.email as string)).toHaveLength(1);
    expect(await h.app.db.prisma.webhookDelivery.count({ where: { shop } })).toBe(1);
    const [customers] = await syncHealth(shop);
    expect(customers).toMatchObject({ kind: "customer", received: 1, duplicates: 2, delivered: 2, queued: 0 });
  });

  it("applies the newest version when updates arrive out of order", async () => {
    const shop = newShop();
    await h.connect(shop);
    const id = "7001";
    const newer = customerBody({ id, firstName: "Newest", updatedAt: "2026-03-01T12:00:00Z" });
    const older = customerBody({ id, firstName: "Older", updatedAt: "2026-02-01T12:00:00Z" });
    await h.send({ topic: "customers/update", shop, body: newer });
    await h.send({ topic: "customers/update", shop, body: older });
    h.startWorkers();
    await h.settle();

    expect(h.emulator.person(newer.email as string)?.customFields.firstName).toBe("Newest");
    expect(upserts(newer.email as string).map((r) => (r.body as { customFields: { firstName: string } }).customFields.firstName)).toEqual([
      "Newest",
    ]);
    const outcomes = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop }, orderBy: { receivedAt: "asc" } });
    expect(outcomes.map((d) => d.outcome)).toEqual(["planned", "stale"]);
  });

  it("skips an update whose mapped content did not change", async () => {
    const shop = newShop();
    await h.connect(shop);
    // In double opt-in the creating upsert carries no status, so the next profile upsert equals it.
    // (Keeping Shopify's consent, the first one carries `confirmed`: the next differs once.)
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "double_opt_in" } } });
    const first = customerBody({ id: "7100", updatedAt: "2026-03-01T12:00:00Z" });
    // Shopify bumps updated_at for changes the app does not sync (e.g. a note).
    const second = { ...first, updated_at: "2026-03-02T12:00:00Z", note: "called about an order" };
    await h.send({ topic: "customers/update", shop, body: first });
    h.startWorkers();
    await h.settle();
    await h.send({ topic: "customers/update", shop, body: second });
    await h.settle();
    expect(upserts(first.email as string)).toHaveLength(1);
    const outcomes = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop }, orderBy: { receivedAt: "asc" } });
    expect(outcomes.map((d) => d.outcome)).toEqual(["planned", "unchanged"]);
  });

  it("delivers everything once the service recovers from 5xx, 429 and stalls, within the attempt limit", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ serverErrors: 6, burst429: { count: 4, retryAfterSeconds: 0 } });
    const bodies = Array.from({ length: 12 }, () => customerBody({}));
    for (const body of bodies) await h.send({ topic: "customers/create", shop, body });
    h.startWorkers();
    await h.settle();
    h.emulator.setFaults({ stallMs: 1_000, pathPrefix: "/api/people" }); // beyond the 300 ms timeout
    const late = customerBody({});
    await h.send({ topic: "customers/create", shop, body: late });
    await new Promise((r) => setTimeout(r, 800));
    h.emulator.clearFaults();
    await h.settle();

    for (const body of [...bodies, late]) expect(h.emulator.person(body.email as string)).toBeDefined();
    const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
    expect(calls.every((c) => c.status === "delivered")).toBe(true);
    expect(Math.max(...calls.map((c) => c.attempts))).toBeLessThanOrEqual(5);
    expect(calls.some((c) => c.attempts > 1)).toBe(true);
  });

  it("pauses a shop whose key is rejected without burning attempts, and resumes on reconnect", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { serviceKeyEnc: encryptSecret("mk_revoked_key", shop) } });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers();
    await h.settle();

    const paused = await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } });
    expect(paused.pausedAt).not.toBeNull();
    expect(paused.pauseReason).toMatch(/unauthenticated/);
    const waiting = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.every((c) => c.status === "queued" && c.attempts === 0)).toBe(true);
    expect(await listDeadLetters(shop)).toHaveLength(0);

    await h.connect(shop); // the merchant reconnects with a working key
    await h.settle();
    expect(h.emulator.person(body.email as string)).toBeDefined();
    expect((await h.app.db.prisma.outboundCall.findMany({ where: { shop } })).every((c) => c.status === "delivered")).toBe(true);
  });

  it("dead-letters a call after its attempts, keeping reason, response and payload, and replays it", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ serverErrors: { count: 1_000, status: 503 }, pathPrefix: "/api/people" });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, { backoffBaseMs: 1, backoffCapMs: 5, pollMs: 10, maxAttempts: 3 });
    await h.settle();

    const dead = await listDeadLetters(shop);
    expect(dead).toHaveLength(1);
    expect(dead[0].attempts).toBe(3);
    expect(dead[0].reason).toMatch(/gave up after 3 attempts; last: server_error/);
    expect(dead[0].call).toMatchObject({ op: "person.upsert", body: { email: body.email } });
    expect(dead[0].lastResponse).toBeTruthy();
    expect((await syncHealth(shop)).find((c) => c.kind === "customer")?.dead).toBe(1);

    h.emulator.clearFaults();
    expect(await replayDeadLetters(shop, [dead[0].id])).toEqual({ replayed: 1, superseded: 0 });
    await h.settle();
    expect(h.emulator.person(body.email as string)).toBeDefined();
    expect(await listDeadLetters(shop)).toHaveLength(0);
  });

  it("records a refusal for a blocked person instead of retrying it", async () => {
    const shop = newShop();
    await h.connect(shop);
    // §3.2: `active` cannot be set on a blocked person (trusting Shopify's opt-in sends `active`)
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "trust_shopify" } } });
    const body = customerBody({ consent: "unsubscribed" });
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers();
    await h.settle();
    h.emulator.markBlocked(body.email as string);
    await h.send({
      topic: "customers/update",
      shop,
      body: { ...body, updated_at: "2026-05-01T00:00:00Z", email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-05-01T00:00:00Z" } },
    });
    await h.settle();
    const refused = await h.app.db.prisma.outboundCall.findMany({ where: { shop, status: "refused" } });
    expect(refused).toHaveLength(1);
    expect(refused[0].attempts).toBe(1);
    expect(refused[0].lastError).toMatch(/blocked/);
    expect(await listDeadLetters(shop)).toHaveLength(0);
  });

  it("stops sending for a shop that uninstalled the app and removes its sessions", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.session.create({ data: { id: `offline_${shop}`, shop, state: "", accessToken: "shpat_x" } });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    await h.send({ topic: "app/uninstalled", shop, body: { id: 1, domain: shop }, triggeredAt: new Date(Date.now() + 1_000).toISOString() });
    h.startWorkers();
    await h.settle();

    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } })).uninstalledAt).not.toBeNull();
    expect(await h.app.db.prisma.session.count({ where: { shop } })).toBe(0);
    expect(h.emulator.person(body.email as string)).toBeUndefined();
    const waiting = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.every((c) => c.status === "queued")).toBe(true);
  });

  it("ignores an uninstall older than the latest install", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.send({ topic: "app/uninstalled", shop, body: { id: 1, domain: shop }, triggeredAt: "2020-01-01T00:00:00Z" });
    h.startWorkers();
    await h.settle();
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } })).uninstalledAt).toBeNull();
  });

  it("keeps a body that does not parse, marked invalid, and acknowledges it", async () => {
    const shop = newShop();
    await h.connect(shop);
    const res = await h.send({ topic: "orders/create", shop, body: '{"id": 1, "line_items": "not a list"' });
    expect(res.status).toBe(200);
    h.startWorkers();
    await h.settle();
    const [delivery] = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop } });
    expect(delivery.outcome).toBe("invalid");
    expect(delivery.outcomeDetail).toMatch(/JSON/);
    expect(delivery.rawBody).toContain("not a list");
  });
});

// Several workers race for the same calls: in one process on PGlite, as on PostgreSQL.
describeEachDatabase("delivery pipeline with several workers", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    // A generous timeout: under a loaded machine a timed-out call is retried, which is correct
    // behaviour but not what this test is about.
    h = await startPipelineHarness({ database, env: { MARKETING_API_TIMEOUT_MS: "10000" } });
  });
  afterAll(() => h.close());

  it("never delivers the same call twice", async () => {
    const shop = newShop();
    await h.connect(shop);
    const bodies = Array.from({ length: 150 }, () => customerBody({}));
    await Promise.all(bodies.map((body) => h.send({ topic: "customers/create", shop, body })));
    h.startWorkers(4, { pollMs: 5, batchSize: 8 });
    await h.settle(60_000);

    const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
    expect(calls).toHaveLength(300); // a contact upsert and a customer/created event per customer
    expect(calls.every((c) => c.status === "delivered" && c.attempts === 1)).toBe(true);
    const posted = h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST");
    const perEmail = new Map<string, number>();
    for (const r of posted) perEmail.set((r.body as { email: string }).email, (perEmail.get((r.body as { email: string }).email) ?? 0) + 1);
    expect(perEmail.size).toBe(150);
    expect([...perEmail.values()].every((n) => n === 1)).toBe(true);
  });

  const upserts = (email: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as { email?: string }).email === email);

  it("workers planning versions of the same customers at once leave each with its newest version, sent last", async () => {
    const shop = newShop();
    await h.connect(shop);
    const ids = ["8101", "8102", "8103", "8104"];
    const versions = 16;
    const bodies = ids.flatMap((id) =>
      Array.from({ length: versions }, (_, v) =>
        customerBody({ id, firstName: `v${v}`, updatedAt: new Date(Date.UTC(2026, 2, 1, 12, v)).toISOString() }),
      ),
    );
    // Shuffled, so workers holding neighbouring deliveries plan older and newer versions at once.
    bodies.sort(() => Math.random() - 0.5);
    for (const body of bodies) expect((await h.send({ topic: "customers/update", shop, body })).status).toBe(200);
    h.startWorkers(4, { pollMs: 1, planBatchSize: 1, batchSize: 4 });
    await h.settle(60_000);

    const newest = `v${versions - 1}`;
    for (const id of ids) {
      const email = `customer${id}@example.com`;
      expect(h.emulator.person(email)?.customFields.firstName).toBe(newest);
      const sent = upserts(email).map((r) => (r.body as { customFields: { firstName: string } }).customFields.firstName);
      expect(sent.at(-1)).toBe(newest);
      // Each version is sent at most once, and never after a newer one.
      expect(sent).toEqual([...new Set(sent)].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
    }
    const states = await h.app.db.prisma.objectState.findMany({ where: { shop } });
    expect(states.map((o) => o.lastUpdatedAt?.toISOString()).sort()).toEqual(
      ids.map(() => new Date(Date.UTC(2026, 2, 1, 12, versions - 1)).toISOString()),
    );
  });
});
