import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { DeliveryLane } from "~/pipeline/deliver.server";
import { moveJournaledDeliveries } from "~/pipeline/record.server";
import { planDeliveries } from "~/jobs/index.server";
import { PIPELINE_POLICY, type PipelinePolicy } from "~/pipeline/policy";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let seq = 0;
const newShop = () => `lane-${++seq}-${Date.now().toString(36)}.myshopify.com`;

/**
 * One worker's calls in flight (DeliveryLane), driven here without the worker's loop, so that
 * nothing but the lane itself claims: what it claims ahead, and when it claims again by itself.
 */
describeEachDatabase("a worker's delivery lane", (database) => {
  let h: PipelineHarness;
  const lanes: DeliveryLane[] = [];
  const policy: PipelinePolicy = { ...PIPELINE_POLICY, ...FAST_POLICY, batchSize: 8 };
  const workerId = `lane-test-${database}`;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterEach(async () => {
    h.emulator.setFaults({});
    await Promise.all(lanes.splice(0).map((lane) => lane.close()));
    // What a test left queued is not the next test's to claim.
    await h.app.db.sql.query(`DELETE FROM "OutboundCall" WHERE shop LIKE 'lane-%'`);
    await h.reset();
  });
  afterAll(() => h.close());

  const newLane = () => {
    const lane = new DeliveryLane(workerId, { refill: async () => policy });
    lanes.push(lane);
    return lane;
  };

  /** Acknowledges customers/create webhooks over HTTP and plans them all. */
  async function planned(shop: string, bodies: Record<string, unknown>[]): Promise<void> {
    for (const body of bodies) expect((await h.send({ topic: "customers/create", shop, body })).status).toBe(200);
    await moveJournaledDeliveries();
    while ((await planDeliveries(workerId, policy)) > 0);
  }

  const upserts = () => h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people");
  const upserted = (email: string) =>
    upserts().some((r) => (r.body as { email?: string }).email === email && r.status !== null && r.status < 300);

  const until = (condition: () => boolean, what: string) => expect.poll(condition, { timeout: 30_000, message: what }).toBe(true);

  const leased = async (shop: string) =>
    (await h.app.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "OutboundCall" WHERE shop = $1 AND status = 'running'`, [shop]))[0]!.n;

  it("claims two windows of calls at once: one goes to the service, the other waits beside it", async () => {
    const shop = newShop();
    await h.connect(shop);
    await planned(shop, Array.from({ length: 40 }, () => customerBody({})));
    let release!: () => void;
    h.emulator.setFaults({ hold: new Promise<void>((resolve) => (release = resolve)) });
    const lane = newLane();
    expect(await lane.topUp(policy)).toBe(2 * policy.batchSize);
    await until(() => upserts().length >= policy.batchSize, "a full window at the service");
    expect(upserts()).toHaveLength(policy.batchSize);
    expect(await leased(shop)).toBe(2 * policy.batchSize);
    release();
    await lane.drain();
  });

  it("claims calls planned after its last claim came back short, without waiting for the worker's next pass", async () => {
    const shop = newShop();
    await h.connect(shop);
    const first = customerBody({});
    await planned(shop, [first]);
    const lane = newLane();
    // One customer: one call is due (its second waits behind it), fewer than the lane asked for.
    expect(await lane.topUp(policy)).toBe(1);
    await until(() => upserted(first.email as string), "the first customer at the service");

    const second = customerBody({});
    await planned(shop, [second]);
    lane.plannedMore();
    await until(() => upserted(second.email as string), "the customer planned later at the service");
    await lane.drain();
  });

  it("claims a shop's new change at once while another shop's calls fill the windows claimed ahead, and sends it at the next free place", async () => {
    const busy = newShop();
    const quiet = newShop();
    await h.connect(busy);
    await h.connect(quiet);
    await planned(busy, Array.from({ length: 40 }, () => customerBody({})));
    let release!: () => void;
    h.emulator.setFaults({ hold: new Promise<void>((resolve) => (release = resolve)) });
    const lane = newLane();
    expect(await lane.topUp(policy)).toBe(2 * policy.batchSize);
    await until(() => upserts().length >= policy.batchSize, "a full window of the busy shop at the service");

    const change = customerBody({});
    let shops = new Set<string>();
    expect(await h.send({ topic: "customers/create", shop: quiet, body: change })).toMatchObject({ status: 200 });
    await moveJournaledDeliveries();
    while ((await planDeliveries(workerId, policy, (s) => (shops = s))) > 0);
    expect([...shops]).toEqual([quiet]);
    // A window of the busy shop's calls still waits in the lane: the quiet shop's is claimed beside it.
    expect(await lane.plannedMore(shops, policy)).toBe(1);
    expect(await leased(quiet)).toBe(1);
    release();
    await until(() => upserted(change.email as string), "the quiet shop's change at the service");
    // The busy shop's window answered frees the first place: the quiet change takes it, ahead of
    // the window of calls claimed before it was planned (left to the lane's refill, it would follow them).
    const sentAt = upserts().findIndex((r) => (r.body as { email?: string }).email === change.email);
    expect(sentAt).toBeGreaterThanOrEqual(policy.batchSize);
    expect(sentAt).toBeLessThan(2 * policy.batchSize);
    await lane.drain();
  });

  // PGlite has one connection: a transaction held by the test would hold the lane too.
  it.skipIf(database === "pglite")("sends no more of a shop's calls once it answers 429, while its hold is still being written", async () => {
    const shop = newShop();
    const account = h.emulator.createAccount({ doubleOptIn: false });
    await h.connect(shop, account.apiKey);
    await planned(shop, Array.from({ length: 40 }, () => customerBody({})));
    let answer!: () => void;
    h.emulator.setFaults({ hold: new Promise<void>((resolve) => (answer = resolve)), burst429: { count: 1_000_000, retryAfterSeconds: 60 }, accountId: account.accountId });
    // The hold on the shop cannot be written while the test holds the shop's row.
    let rowLocked!: () => void;
    let release!: () => void;
    const locked = new Promise<void>((resolve) => (rowLocked = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const rowLock = h.app.db.sql.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM "Shop" WHERE domain = $1 FOR UPDATE`, [shop]);
      rowLocked();
      await released;
    });
    const lane = newLane();
    try {
      await locked;
      expect(await lane.topUp(policy)).toBe(2 * policy.batchSize);
      await until(() => upserts().length >= policy.batchSize, "a full window at the service");
      answer();
      await until(() => upserts().filter((r) => r.status === 429).length === policy.batchSize, "the window answered 429");
      // The worker's passes find the window's places free: none may go to this shop.
      for (let pass = 0; pass < 10; pass++) {
        await lane.topUp(policy);
        await sleep(20);
      }
      expect(upserts()).toHaveLength(policy.batchSize);
    } finally {
      release();
      await rowLock;
    }
    await lane.drain();
  });
});
