import { randomInt } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { replayDeadLetters } from "~/pipeline/dead-letters.server";
import type { PipelinePolicy } from "~/pipeline/policy";
import { planWebhook } from "~/sync/plan-webhook";
import { defaultSettings } from "~/sync/settings";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { applyTestEnv } from "../support/env";
import { fixture } from "../support/webhooks";

let shopSeq = 0;
const newShop = () => `faults-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

/**
 * Production retries for 24 hours; here the clock is scaled down: an outage of 2 s against a
 * deadline of 5 min keeps production's ratio (a 10-minute outage against 24 hours is 1:144).
 */
const OUTAGE_POLICY: Partial<PipelinePolicy> = {
  ...FAST_POLICY,
  retryDeadlineMs: 5 * 60_000,
  maxAttempts: 100_000,
  backoffBaseMs: 5,
  backoffCapMs: 100,
};
/** Retries that give up quickly, to make dead letters. */
const DYING_POLICY: Partial<PipelinePolicy> = { ...OUTAGE_POLICY, retryDeadlineMs: 300 };

describeEachDatabase("the pipeline under faults", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database, env: { MARKETING_API_TIMEOUT_MS: "5000" } });
  });
  afterAll(() => h.close());
  afterEach(async () => {
    releaseHeld?.();
    releaseHeld = undefined;
    await h.reset();
    applyTestEnv({ MARKETING_API_URL: h.emulator.url, SHOPIFY_ADMIN_API_ORIGIN: h.app.admin.url, MARKETING_API_TIMEOUT_MS: "5000" });
  });

  /**
   * Holds the service's answers on a path until release(), with the service timeout raised
   * meanwhile: how long the worker then takes does not decide the test (a fixed stall did).
   */
  let releaseHeld: (() => void) | undefined;
  const holdAtService = (pathPrefix: string) => {
    applyTestEnv({ MARKETING_API_URL: h.emulator.url, SHOPIFY_ADMIN_API_ORIGIN: h.app.admin.url, MARKETING_API_TIMEOUT_MS: "120000" });
    const hold = new Promise<void>((resolve) => (releaseHeld = resolve));
    h.emulator.setFaults({ hold, pathPrefix });
    return { release: () => releaseHeld?.() };
  };

  const calls = (shop: string) => h.app.db.prisma.outboundCall.findMany({ where: { shop }, orderBy: { id: "asc" } });
  const peopleRequests = (email: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as { email?: string }).email === email);

  it("rides out a service outage: nothing dead, nothing missing once the service is back", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ errorRate: 1 });
    const bodies = Array.from({ length: 20 }, () => customerBody({}));
    for (const body of bodies) expect((await h.send({ topic: "customers/create", shop, body })).status).toBe(200);
    h.startWorkers(1, OUTAGE_POLICY);
    // The outage lasts until every call has failed more often than the attempt bound that used
    // to make dead letters (FAST_POLICY's 5; 8 in production).
    // (Only the head call of each customer is tried: the ones behind it wait their turn.)
    const outlasted = async () => {
      const tried = new Map<string, number>();
      for (const c of await calls(shop)) tried.set(c.objectKey, Math.max(tried.get(c.objectKey) ?? 0, c.attempts));
      return tried.size === bodies.length && [...tried.values()].every((n) => n > FAST_POLICY.maxAttempts!);
    };
    while (!(await outlasted())) await sleep(50);

    const during = await calls(shop);
    expect(during.filter((c) => c.status === "dead")).toEqual([]);

    h.emulator.clearFaults();
    await h.settle();
    const after = await calls(shop);
    expect(after.filter((c) => c.status !== "delivered")).toEqual([]);
    for (const body of bodies) expect(h.emulator.person(body.email as string)).toBeDefined();
  });

  it("a rate limit that says when to come back uses up no attempts: the call waits its turn instead of dying", async () => {
    const shop = newShop();
    await h.connect(shop);
    // 40 answers of 429 with Retry-After: 0, against 5 attempts allowed (FAST_POLICY).
    h.emulator.setFaults({ burst429: { count: 40, retryAfterSeconds: 0 }, pathPrefix: "/api/people" });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, FAST_POLICY);
    await h.settle();

    expect(peopleRequests(body.email as string).length).toBeGreaterThan(40);
    expect(await calls(shop)).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "customer", status: "delivered" })]));
    expect((await calls(shop)).filter((c) => c.status === "dead")).toEqual([]);
  });

  it("sends an identical change again after the call that carried it died", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ errorRate: 1 });
    const body = customerBody({ firstName: "Grace" });
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    expect((await calls(shop)).map((c) => c.status)).toContain("dead");

    h.emulator.clearFaults();
    // Shopify sends the same customer again (another event): it must not be skipped as unchanged.
    await h.send({ topic: "customers/update", shop, body });
    await h.settle();
    expect(h.emulator.person(body.email as string)?.customFields.firstName).toBe("Grace");
    const outcomes = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop }, orderBy: { receivedAt: "asc" } });
    expect(outcomes.map((d) => d.outcome)).toEqual(["planned", "planned"]);
  });

  it("records poison deliveries as invalid once, and delivers the 31 good ones beside them", async () => {
    const shop = newShop();
    await h.connect(shop);
    const good = Array.from({ length: 31 }, () => customerBody({}));
    // A mapping failure (a date no system can hold) and a database refusal (an id too long to index).
    const hugeId = Array.from({ length: 20_000 }, () => randomInt(10)).join("");
    const poisons = [
      // A raw JSON number, as a hostile or broken sender writes it (JSON.stringify would spell it out).
      JSON.stringify(customerBody({ updatedAt: "PLACEHOLDER" })).replace('"PLACEHOLDER"', "1e20"),
      { ...customerBody({ email: "huge-id@example.com" }), id: hugeId, admin_graphql_api_id: `gid://shopify/Customer/${hugeId}` },
    ];
    for (const [i, body] of good.entries()) {
      if (i === 10) await h.send({ topic: "customers/create", shop, body: poisons[0] });
      if (i === 20) await h.send({ topic: "customers/create", shop, body: poisons[1] });
      await h.send({ topic: "customers/create", shop, body });
    }
    h.startWorkers();
    await h.settle();

    for (const body of good) expect(h.emulator.person(body.email as string)).toBeDefined();
    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop } });
    expect(deliveries.every((d) => d.status === "done")).toBe(true);
    const invalid = deliveries.filter((d) => d.outcome === "invalid");
    expect(invalid).toHaveLength(2);
    expect(invalid.map((d) => d.attempts)).toEqual([1, 1]);
    expect(invalid.map((d) => d.outcomeDetail).join(" | ")).toMatch(/years 1–9999/);
    expect(invalid.map((d) => d.outcomeDetail).join(" | ")).toMatch(/index row|exceeds/i);
    expect(deliveries.filter((d) => d.outcome === "planned")).toHaveLength(31);
  });

  it("stores text with U+0000 and unpaired surrogates, made storable, instead of failing the batch", async () => {
    const shop = newShop();
    await h.connect(shop);
    const body: Record<string, unknown> = { ...customerBody({}), first_name: "Ada\u0000Byron\ud800", tags: "vip\u0000" };
    await h.send({ topic: "customers/create", shop, body: JSON.stringify(body) });
    h.startWorkers();
    await h.settle();
    expect(h.emulator.person(body.email as string)?.customFields.firstName).toBe("Ada\uFFFDByron\uFFFD");
  });

  it("records a timer that cannot be mapped as failed, and fires the good one beside it", async () => {
    const shop = newShop();
    await h.connect(shop);
    const plan = planWebhook("checkouts/create", fixture("checkouts/create"), {
      shopDomain: shop,
      storefrontUrl: `https://${shop}`,
      settings: defaultSettings,
      now: new Date(),
      prior: null,
    });
    if (plan.abandonment?.action !== "schedule") throw new Error("the fixture checkout should schedule a timer");
    const past = new Date(Date.now() - 60_000);
    await h.app.db.prisma.abandonmentTimer.createMany({
      data: [
        { shop, checkoutToken: "broken", dueAt: past, snapshot: { token: 42, items: "not a snapshot" } },
        { shop, checkoutToken: plan.abandonment.key, dueAt: past, snapshot: JSON.parse(JSON.stringify(plan.abandonment.snapshot)) },
      ],
    });
    h.startWorkers();
    await h.settle();

    const timers = await h.app.db.prisma.abandonmentTimer.findMany({ where: { shop }, orderBy: { checkoutToken: "asc" } });
    const broken = timers.find((t) => t.checkoutToken === "broken")!;
    expect(broken).toMatchObject({ status: "failed", attempts: 1 });
    expect(broken.lastError).toMatch(/snapshot cannot be mapped/);
    expect(timers.find((t) => t.checkoutToken !== "broken")?.status).toBe("sent");
    expect(h.emulator.requests.filter((r) => r.path === "/api/events/cart/abandoned")).toHaveLength(1);
  });

  it("a worker whose lease ran out mid-call cannot overwrite the new owner's result", async () => {
    const shop = newShop();
    await h.connect(shop);
    // Every request stalls 3 s (under the 5 s timeout); the first then fails, the second succeeds.
    h.emulator.setFaults({ stallMs: 3_000, serverErrors: 1, pathPrefix: "/api/people" });
    const body = customerBody({});
    const email = body.email as string;
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, { ...FAST_POLICY, leaseMs: 300 });
    while (peopleRequests(email).length === 0) await sleep(10);
    // A second worker takes the call over once the first lease has expired (its lease of 4 s
    // outlasts the stall; it looks for expired leases every second).
    const [second] = h.startWorkers(1, { ...FAST_POLICY, leaseMs: 4_000 });
    while (peopleRequests(email).length < 2) await sleep(10);
    // The take-over happened while the first worker's request was still stalled.
    expect((await calls(shop))[0]).toMatchObject({ status: "running", lockedBy: second.id });
    await h.settle();

    const [call] = await calls(shop);
    expect(call).toMatchObject({ status: "delivered", lastError: null });
    // Without fencing, the first worker's late failure re-queued the call and it was sent a third time.
    expect(peopleRequests(email)).toHaveLength(2);
  });

  it("a slow call does not hold back the delivered calls of its batch: they are marked while it waits", async () => {
    const shop = newShop();
    await h.connect(shop);
    // The product's event is held at the service until the test lets it go; the customers'
    // upserts answer at once.
    const held = holdAtService("/api/events/product");
    const bodies = Array.from({ length: 5 }, () => customerBody({}));
    for (const body of bodies) expect((await h.send({ topic: "customers/create", shop, body })).status).toBe(200);
    expect((await h.send({ topic: "products/update", shop, body: fixture("products/update") })).status).toBe(200);
    h.startWorkers(1, FAST_POLICY);
    const upserts = async () => (await calls(shop)).filter((c) => (c.call as { op?: string }).op === "person.upsert");
    const product = async () => (await calls(shop)).find((c) => c.objectKey.startsWith("product:"));
    while ((await product())?.status !== "running") await sleep(10);
    for (const until = Date.now() + 60_000; (await upserts()).some((c) => c.status !== "delivered") && Date.now() < until; ) await sleep(10);
    // All five shown as delivered while the product's call is still at the service.
    expect((await upserts()).map((c) => c.status)).toEqual(Array(5).fill("delivered"));
    expect((await product())?.status).toBe("running");
    held.release();
    await h.settle();
    expect((await calls(shop)).every((c) => c.status === "delivered")).toBe(true);
  });

  it("a slow answer does not hold back the calls behind it: the worker keeps its window full meanwhile", async () => {
    const shop = newShop();
    await h.connect(shop);
    // The product's event is held at the service; 40 customers wait behind it in a window of 8
    // places: five windows' worth, which a batch-at-a-time worker only starts after its answer.
    const held = holdAtService("/api/events/product");
    expect((await h.send({ topic: "products/update", shop, body: fixture("products/update") })).status).toBe(200);
    const bodies = Array.from({ length: 40 }, () => customerBody({ consent: "not_subscribed" }));
    for (const body of bodies) expect((await h.send({ topic: "customers/create", shop, body })).status).toBe(200);
    h.startWorkers(1, { ...FAST_POLICY, batchSize: 8 });
    const product = async () => (await calls(shop)).find((c) => c.objectKey.startsWith("product:"));
    while ((await product())?.status !== "running") await sleep(10);
    const customersDone = async () => (await calls(shop)).filter((c) => c.objectKey.startsWith("customer:") && c.status === "delivered").length;
    const customerCalls = (await calls(shop)).filter((c) => c.objectKey.startsWith("customer:")).length;
    for (const until = Date.now() + 60_000; (await customersDone()) < customerCalls && Date.now() < until; ) await sleep(20);
    // Every customer's calls delivered while the product's call is still at the service.
    expect(await customersDone()).toBe(customerCalls);
    expect((await product())?.status).toBe("running");
    held.release();
    await h.settle();
    expect((await calls(shop)).every((c) => c.status === "delivered")).toBe(true);
  });

  it("a worker shutting down hands back the calls it claimed ahead, instead of sending them or holding their leases", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ stallMs: 1_500, pathPrefix: "/api/people" });
    for (let i = 0; i < 12; i++) expect((await h.send({ topic: "customers/create", shop, body: customerBody({}) })).status).toBe(200);
    // A window of 4 at the service, 4 more claimed ahead; leases far longer than the test.
    const [first] = h.startWorkers(1, { ...FAST_POLICY, batchSize: 4, leaseMs: 120_000 });
    const heldBy = async (worker: string) => (await calls(shop)).filter((c) => c.status === "running" && c.lockedBy === worker).length;
    const sent = () => h.emulator.requests.filter((r) => r.path === "/api/people").length;
    while ((await heldBy(first.id)) < 8 || sent() < 4) await sleep(10);
    expect(sent()).toBe(4);

    await h.stopWorkers();
    // Only the 4 at the service were answered; nothing more was sent while stopping.
    expect(sent()).toBe(4);
    const after = await calls(shop);
    expect(after.filter((c) => c.status === "running")).toEqual([]);
    const upserts = after.filter((c) => (c.call as { op?: string }).op === "person.upsert");
    expect(upserts.filter((c) => c.status === "delivered")).toHaveLength(4);
    // The 4 claimed ahead are queued again, their attempt given back: another worker takes them now.
    expect(upserts.filter((c) => c.status === "queued").every((c) => c.attempts === 0 && c.lockedBy === null)).toBe(true);
    h.emulator.clearFaults();
    h.startWorkers(1, FAST_POLICY);
    await h.settle(10_000);
    expect((await calls(shop)).every((c) => c.status === "delivered")).toBe(true);
  });

  it("replay never goes backwards: an old subscribe does not undo a newer unsubscribe", async () => {
    const shop = newShop();
    await h.connect(shop);
    const id = "880001";
    h.emulator.setFaults({ errorRate: 1 });
    const subscribed = customerBody({ id, consent: "subscribed", updatedAt: "2026-03-01T10:00:00Z", consentUpdatedAt: "2026-03-01T10:00:00Z" });
    await h.send({ topic: "customers/create", shop, body: subscribed });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    expect((await calls(shop)).some((c) => c.status === "dead")).toBe(true);

    h.emulator.clearFaults();
    const unsubscribed = customerBody({ id, consent: "unsubscribed", updatedAt: "2026-03-02T10:00:00Z", consentUpdatedAt: "2026-03-02T10:00:00Z" });
    await h.send({ topic: "customers/update", shop, body: unsubscribed });
    await h.settle();
    const email = subscribed.email as string;
    expect(h.emulator.person(email)?.statusDetails).toBe("unsubscribed");
    const sentBefore = peopleRequests(email).length;

    // The subscribe is overtaken by the unsubscribe. (The customer/created event behind it may have
    // died too — nothing newer of its kind, so it would be replayed — or been sent once the
    // service came back, depending on where its backoff fell.)
    const result = await replayDeadLetters(shop);
    expect(result.superseded).toBe(1);
    await h.settle();
    const [subscribe] = (await calls(shop)).filter((c) => c.status === "superseded");
    expect(subscribe.call).toMatchObject({ op: "person.upsert" });
    expect(peopleRequests(email)).toHaveLength(sentBefore);
    expect(h.emulator.person(email)?.statusDetails).toBe("unsubscribed");
    expect((await calls(shop)).filter((c) => c.status === "dead")).toEqual([]);
  });

  it("replay never brings back a person deleted since: nothing older than the deletion is sent", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "trust_shopify", deleteContactOnCustomerDelete: true } } });
    const id = "880002";
    h.emulator.setFaults({ errorRate: 1 });
    const created = customerBody({ id, consent: "subscribed" });
    await h.send({ topic: "customers/create", shop, body: created });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    const dead = (await calls(shop)).filter((c) => c.status === "dead");
    expect(dead.map((c) => (c.call as { op: string }).op)).toContain("person.upsert");

    h.emulator.clearFaults();
    await h.send({ topic: "customers/delete", shop, body: { id: Number(id), admin_graphql_api_id: `gid://shopify/Customer/${id}` } });
    await h.settle();
    expect((await calls(shop)).find((c) => (c.call as { op: string }).op === "person.delete")?.status).toBe("delivered");

    const result = await replayDeadLetters(shop);
    expect(result).toEqual({ replayed: 0, superseded: dead.length });
    await h.settle();
    expect(h.emulator.person(created.email as string)).toBeUndefined();
    expect(peopleRequests(created.email as string).filter((r) => r.fault === undefined)).toEqual([]);
  });

  it("deleting a person the service does not have is done, not a dead letter", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.outboundCall.create({
      data: { shop, objectKey: "customer:404", kind: "customer", call: { op: "person.delete", idOrEmail: "never-synced@example.com" } },
    });
    h.startWorkers();
    await h.settle();
    const [call] = await calls(shop);
    expect(call.status).toBe("delivered");
    expect(h.emulator.requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  });
});
