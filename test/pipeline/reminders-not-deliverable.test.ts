import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { pruneOldRows } from "~/pipeline/retention.server";
import { disconnectShop, pauseShop } from "~/shops/connection.server";
import { recordInstall } from "~/shops/shops.server";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { orderBody } from "../sync/fixtures";

let shopSeq = 0;
const newShop = () => `remind-offline-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

// A reminder is about a cart left minutes ago: one that could not go out then must not go out days
// later, when the merchant reconnects, perhaps for a checkout the customer has bought since.
describeEachDatabase("abandoned-cart reminders of a shop that cannot receive deliveries", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const checkout = (token: string, email: string) => ({
    ...JSON.parse(fixture("checkouts/create")),
    token,
    cart_token: `cart-${token}`,
    email,
    completed_at: null,
  });
  const makeDue = (shop: string, token: string) =>
    h.app.db.prisma.abandonmentTimer.update({
      where: { shop_checkoutToken: { shop, checkoutToken: token } },
      data: { dueAt: new Date(Date.now() - 1_000) },
    });
  const timer = (shop: string, token: string) => h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop, checkoutToken: token } });
  const abandoned = (cartId: string) =>
    h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/events/cart/abandoned" && (r.body as { id?: string }).id === cartId);
  const queuedReminders = (shop: string) => h.app.db.prisma.outboundCall.count({ where: { shop, kind: "checkout", status: "queued" } });
  const reminderCall = async (shop: string) =>
    (await h.app.db.prisma.outboundCall.findMany({ where: { shop, kind: "checkout" } })).find((c) => (c.call as { action?: string }).action === "abandoned");
  const expectCancelledForTheShop = async (shop: string, token: string) =>
    expect(await timer(shop, token)).toMatchObject({ status: "cancelled", lastError: expect.stringContaining("not connected") });

  it("paused: the reminder is not made; the checkout bought meanwhile gets none when the merchant reconnects 15 days later", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-p", "paula@example.com") });
    // The service rejects the key: the shop is paused (what delivery does on `unauthenticated`).
    await pauseShop(shop, "unauthenticated: key revoked");
    await makeDue(shop, "chk-p");
    await h.settle();
    await expectCancelledForTheShop(shop, "chk-p");
    expect(await queuedReminders(shop)).toBe(0);
    await h.deliver({
      topic: "orders/create",
      shop,
      body: orderBody({ id: 7171, admin_graphql_api_id: "gid://shopify/Order/7171", email: "paula@example.com", checkout_token: "chk-p", cart_token: "cart-chk-p" }),
    });
    await h.app.db.sql.query(`UPDATE "CompletedCheckout" SET "completedAt" = "completedAt" - interval '15 days' WHERE shop = $1`, [shop]);
    await h.app.db.sql.query(`UPDATE "OutboundCall" SET "createdAt" = "createdAt" - interval '15 days' WHERE shop = $1`, [shop]);
    await pruneOldRows(14);
    await h.connect(shop);
    await h.settle();
    expect(abandoned("cart-chk-p")).toHaveLength(0);
  });

  it("disconnected: no reminder is queued, none goes out on reconnection a month later", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-d", "dora@example.com") });
    await disconnectShop(shop);
    await makeDue(shop, "chk-d");
    await h.settle();
    await expectCancelledForTheShop(shop, "chk-d");
    expect(await queuedReminders(shop)).toBe(0);
    await h.connect(shop);
    await h.settle();
    expect(abandoned("cart-chk-d")).toHaveLength(0);
  });

  it("uninstalled: no reminder is queued, none goes out when the merchant reinstalls", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-u", "uma@example.com") });
    await h.deliver({ topic: "app/uninstalled", shop, body: { id: 1, domain: shop }, triggeredAt: new Date(Date.now() + 1_000).toISOString() });
    await makeDue(shop, "chk-u");
    await h.settle();
    await expectCancelledForTheShop(shop, "chk-u");
    expect(await queuedReminders(shop)).toBe(0);
    await recordInstall(shop, "read_customers");
    await h.settle();
    expect(abandoned("cart-chk-u")).toHaveLength(0);
  });

  it("a reminder queued just before the key was rejected is not sent two days later, and support sees why", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-k", "kim@example.com") });
    // The reminder's send is the request that finds the key revoked: the shop is paused, the reminder waits.
    h.emulator.setFaults({ serverErrors: { count: 1, status: 401 } });
    await makeDue(shop, "chk-k");
    await h.settle();
    h.emulator.clearFaults();
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } })).pausedAt).not.toBeNull();
    expect(await queuedReminders(shop)).toBe(1);
    const rejected = abandoned("cart-chk-k").length;
    // Two days later the merchant enters a new key.
    await h.app.db.sql.query(`UPDATE "OutboundCall" SET "createdAt" = "createdAt" - interval '2 days' WHERE shop = $1`, [shop]);
    await h.connect(shop);
    await h.settle();
    expect(abandoned("cart-chk-k")).toHaveLength(rejected);
    expect(await reminderCall(shop)).toMatchObject({ status: "refused", lastError: expect.stringContaining("reminder not sent: more than 24 h old") });
  });

  it("the record of a bought checkout stays past retention while its reminder still waits", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "checkouts/create", shop, body: checkout("chk-w", "wim@example.com") });
    h.emulator.setFaults({ serverErrors: { count: 1, status: 401 } });
    await makeDue(shop, "chk-w");
    await h.settle();
    h.emulator.clearFaults();
    expect(await queuedReminders(shop)).toBe(1);
    const rejected = abandoned("cart-chk-w").length;
    await h.deliver({
      topic: "orders/create",
      shop,
      body: orderBody({ id: 7272, admin_graphql_api_id: "gid://shopify/Order/7272", email: "wim@example.com", checkout_token: "chk-w", cart_token: "cart-chk-w" }),
    });
    await h.app.db.sql.query(`UPDATE "CompletedCheckout" SET "completedAt" = "completedAt" - interval '15 days' WHERE shop = $1`, [shop]);
    await pruneOldRows(14);
    expect(await h.app.db.prisma.completedCheckout.count({ where: { shop, token: "chk-w" } })).toBe(1);
    await h.connect(shop);
    await h.settle();
    expect(abandoned("cart-chk-w")).toHaveLength(rejected);
    expect(await reminderCall(shop)).toMatchObject({
      status: "refused",
      lastError: "checkout completed by an order before sending",
    });
  });
});
