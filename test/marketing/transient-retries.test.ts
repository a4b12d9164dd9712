import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { classifyHttpError, RETRYABLE_CLIENT_STATUSES } from "~/services/marketing/marketing-error";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

describe("statuses §7 gives no meaning that say: try again", () => {
  it.each([408, 409, 425])("%i is retryable (retry_later), not a permanent client error", (status) => {
    expect(classifyHttpError({ status, body: { message: "Request Timeout" } })).toMatchObject({ kind: "retry_later", retryable: true, status });
    expect(classifyHttpError({ status, body: undefined })).toMatchObject({ kind: "retry_later", retryable: true });
    expect(RETRYABLE_CLIENT_STATUSES.has(status)).toBe(true);
  });

  it("other undescribed 4xx stay permanent, and a 422 is still a validation error", () => {
    for (const status of [400, 404, 405, 410, 413]) expect(classifyHttpError({ status, body: {} })).toMatchObject({ kind: "client_error", retryable: false });
    expect(classifyHttpError({ status: 422, body: { message: "The given data was invalid.", errors: { id: ["required"] } } }).kind).toBe("validation");
  });
});

describeEachDatabase("the pipeline on transient answers", (database) => {
  let h: PipelineHarness;
  let seq = 0;
  const newShop = () => `transient-${++seq}-${database}.myshopify.com`;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const calls = (shop: string) => h.app.db.prisma.outboundCall.findMany({ where: { shop }, orderBy: { id: "asc" } });
  const eventsFor = (email: string) => h.emulator.requests.filter((r) => r.path === "/api/events/customer/created" && (r.body as { customer_email?: string }).customer_email === email);

  it.each([408, 409, 425])("a %i from the service is retried and delivered, not dead-lettered", async (status) => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ serverErrors: { count: 1, status }, pathPrefix: "/api/events" });
    // A retry hundreds of milliseconds ahead: settle() must wait for it, not call the worker idle
    // while the call waits for its time (a race that failed this test on a loaded machine).
    h.startWorkers(1, { ...FAST_POLICY, backoffBaseMs: 300, backoffCapMs: 600 });
    const email = `t${status}@example.com`;
    expect((await h.send({ topic: "customers/create", shop, body: customerBody({ email, consent: "not_subscribed" }) })).status).toBe(200);
    await h.settle();
    expect(eventsFor(email).map((r) => r.status)).toEqual([status, 200]);
    expect((await calls(shop)).map((c) => c.status)).toEqual(["delivered"]);
  });

  it("a 429 with Retry-After: 0 waits before the call is sent again", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ burst429: { count: 1, retryAfterSeconds: 0 }, pathPrefix: "/api/events" });
    // The test policy's cap (50 ms) would hide the floor: give the backoff room.
    h.startWorkers(1, { ...FAST_POLICY, backoffCapMs: 60_000 });
    const email = "retry-after-zero@example.com";
    expect((await h.send({ topic: "customers/create", shop, body: customerBody({ email, consent: "not_subscribed" }) })).status).toBe(200);
    // Wait (bounded) for the worker to have handled the 429.
    let [call] = await calls(shop);
    for (let i = 0; i < 500 && (eventsFor(email).length === 0 || call?.status === "running"); i++) {
      await sleep(20);
      [call] = await calls(shop);
    }
    const [limited] = eventsFor(email);
    expect(limited?.status).toBe(429);
    // Without a floor the call is due again at once (and usually already re-sent by now).
    expect(call.status).toBe("queued");
    expect(call.runAt.getTime() - Date.parse(limited.at)).toBeGreaterThanOrEqual(900);
    // settle() counts a call waiting for its time as idle: wait (bounded) for the second try.
    for (let i = 0; i < 500 && eventsFor(email).length < 2; i++) await sleep(20);
    await h.settle();
    expect(eventsFor(email).map((r) => r.status)).toEqual([429, 200]);
    expect((await calls(shop)).map((c) => c.status)).toEqual(["delivered"]);
  });

  it("429s without Retry-After: the call backs off on its own (an attempt each) and is delivered once, nothing lost", async () => {
    const shop = newShop();
    await h.connect(shop);
    // §7/§8 promise no Retry-After on a 429: 4 answers without it, against 5 attempts allowed (FAST_POLICY).
    h.emulator.setFaults({ burst429: { count: 4, withoutRetryAfter: true }, pathPrefix: "/api/events" });
    h.startWorkers(1, FAST_POLICY);
    const email = "no-retry-after@example.com";
    expect((await h.send({ topic: "customers/create", shop, body: customerBody({ email, consent: "not_subscribed" }) })).status).toBe(200);
    for (let i = 0; i < 500 && !eventsFor(email).some((r) => r.status === 200); i++) await sleep(20);
    await h.settle();
    const sent = eventsFor(email);
    expect(sent.map((r) => r.status)).toEqual([429, 429, 429, 429, 200]);
    expect(sent.slice(0, 4).every((r) => r.responseHeaders?.["Retry-After"] === undefined)).toBe(true);
    // no Retry-After: the pipeline's own backoff (each 429 an attempt), not the service's flow control
    expect((await calls(shop)).map((c) => [c.status, c.attempts])).toEqual([["delivered", 5]]);
    expect(h.emulator.state.unattachedEvents.filter((e) => e.handle.email === email || e.properties.customer_email === email)).toHaveLength(1);
  });
});
