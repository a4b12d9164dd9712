import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { pruneOldRows } from "~/pipeline/retention.server";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

let shopSeq = 0;
const newShop = () => `abandon-timer-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

describeEachDatabase("abandoned-cart timers", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const checkout = (token: string, email: string, over: Record<string, unknown> = {}) => ({
    ...JSON.parse(fixture("checkouts/create")),
    token,
    cart_token: `cart-${token}`,
    email,
    completed_at: null,
    ...over,
  });
  /** A cart of one line at `price`: a cart's total is its lines (tax and shipping are not in it). */
  const lines = (price: string) => [{ ...JSON.parse(fixture("checkouts/create")).line_items[0], price, line_price: price, quantity: 1 }];
  const makeDue = (shop: string, token: string) =>
    h.app.db.prisma.abandonmentTimer.updateMany({ where: { shop, checkoutToken: token, status: "pending" }, data: { dueAt: new Date(Date.now() - 1_000) } });
  const abandoned = (cartId: string) =>
    h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/events/cart/abandoned" && (r.body as { id?: string }).id === cartId);

  it("a checkout touched again after retention removed its sent timer gets no second reminder", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-r", "rita@example.com") });
    await makeDue(shop, "chk-r");
    await h.settle();
    expect(abandoned("cart-chk-r")).toHaveLength(1);

    // 15 days later the hourly retention removes the sent timer (and its snapshot: email, items);
    // then the customer opens the recovery link and the checkout is updated once more.
    await h.app.db.sql.query(`UPDATE "AbandonmentTimer" SET "updatedAt" = "updatedAt" - interval '15 days' WHERE shop = $1`, [shop]);
    await pruneOldRows(14);
    expect(await h.app.db.prisma.abandonmentTimer.count({ where: { shop } })).toBe(0);
    await h.deliver({ topic: "checkouts/update", shop, body: checkout("chk-r", "rita@example.com", { updated_at: "2030-01-16T00:00:00Z", line_items: lines("13.00") }) });
    await makeDue(shop, "chk-r");
    await h.settle();
    expect(abandoned("cart-chk-r")).toHaveLength(1);
    expect(await h.app.db.prisma.abandonmentTimer.count({ where: { shop } })).toBe(0);
  });

  it("a checkout changed while a worker that died holds its due timer starts the timer again, with the new cart", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-l", "lena@example.com", { line_items: lines("10.00") }) });
    // A live worker runs (on PGlite, starting it hands orphaned leases back, so it must start
    // before the claim). Then another worker process claims the due timer and dies before firing
    // it (kill -9, OOM, deploy): made due and claimed in one statement, so the live worker cannot
    // fire it first.
    await h.settle();
    const claimed = await h.app.db.sql.query(
      `UPDATE "AbandonmentTimer" SET "dueAt" = now() - interval '1 minute', status = 'running', "lockedBy" = 'dead-worker',
              "lockedUntil" = now() + interval '3 seconds', attempts = attempts + 1
        WHERE shop = $1 AND "checkoutToken" = $2 AND status = 'pending' RETURNING 1`,
      [shop, "chk-l"],
    );
    expect(claimed).toHaveLength(1);
    // Meanwhile the customer comes back and changes the cart: the timer starts again (60 min).
    await h.deliver({
      topic: "checkouts/update",
      shop,
      body: checkout("chk-l", "lena@example.com", { updated_at: "2030-01-01T00:00:00Z", line_items: lines("99.00") }),
    });
    // The dead worker's lease runs out (moved into the past, as makeDue moves a timer: no wait).
    await h.app.db.sql.query(`UPDATE "AbandonmentTimer" SET "lockedUntil" = now() - interval '1 second' WHERE shop = $1 AND "checkoutToken" = $2 AND "lockedBy" = 'dead-worker'`, [shop, "chk-l"]);
    await h.settle();
    expect(abandoned("cart-chk-l")).toEqual([]);
    const timer = await h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop, checkoutToken: "chk-l" } });
    expect(timer).toMatchObject({ status: "pending", lockedBy: null });
    expect(timer.dueAt.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    // When it is due, the reminder carries the cart as the customer left it last.
    await makeDue(shop, "chk-l");
    await h.settle();
    expect(abandoned("cart-chk-l").map((r) => (r.body as { total?: unknown }).total)).toEqual([99]);
  });
});
