import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { forgetAdminBudgets } from "~/shopify/admin-api.server";
import { backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { reconcileShopNow, reconcileStatus, seedReconcileStates } from "~/backfill/reconcile.server";
import { PIPELINE_POLICY, type PipelinePolicy } from "~/pipeline/policy";
import { customerEmail, startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, numeric, until } from "./helpers";

// The daily sweep: objects Shopify changed without a webhook reaching the app are asked for and
// re-played (silent), once per shop per day whatever the number of workers.
const SIZE = { customers: 20, products: 4, orders: 10 };
const CLI_POLICY: PipelinePolicy = { ...PIPELINE_POLICY, ...FAST_POLICY };

describeEachDatabase("reconciliation", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE, { seed: 5 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(() => h.reset());

  /** A connected shop whose customers were imported, then one of them changed in Shopify with no webhook. */
  async function shopWithMissedUpdate(index: number) {
    const shop = newShop("reconcile");
    await install(h, shop);
    await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    await until("the import", async () => (await backfillProgress(shop))?.status === "done");
    await h.settle();
    await h.reset();
    const customer = store.touch("customers", index, { firstName: `Missed${index}` });
    return { shop, customer };
  }

  const customerEvents = (email: string) =>
    h.emulator.requests.filter((r) => r.path.startsWith("/api/events/customer/") && (r.body as { customer_email?: string }).customer_email === email);
  const sweepCalls = (shop: string) => h.app.admin.calls.filter((c) => c.shop === shop && String((c.body as { query?: string }).query).includes("query Reconcile"));

  it("a customer update Shopify never delivered reaches the service after the daily sweep, once, whatever the number of workers", async () => {
    const { shop, customer } = await shopWithMissedUpdate(2);
    await seedReconcileStates(PIPELINE_POLICY);
    const seeded = await reconcileStatus(shop);
    // First due a day after the connection.
    expect(seeded!.dueAt.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    expect(seeded!.lastSweepAt).toBeNull();
    // The day has come: three workers compete for it.
    await h.app.db.sql.query(`UPDATE "ReconcileState" SET "dueAt" = now() WHERE shop = $1`, [shop]);
    h.startWorkers(3, FAST_POLICY);
    const swept = await until("the sweep", async () => (await reconcileStatus(shop))?.lastSweepAt && reconcileStatus(shop));
    await h.settle();

    expect(swept.lastEnqueued).toBe(1);
    expect(swept.dueAt.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    // One page per kind, asked once: customers, orders, products.
    expect(sweepCalls(shop).map((c) => /query (Reconcile\w+)/.exec(String((c.body as { query: string }).query))?.[1])).toEqual([
      "ReconcileCustomers",
      "ReconcileOrders",
      "ReconcileProducts",
    ]);
    const events = customerEvents(customerEmail(customer)!);
    expect(events).toHaveLength(1);
    expect(events[0].body).toMatchObject({ first_name: `Missed2`, silent: true });
    const delivery = await h.app.db.prisma.webhookDelivery.findFirstOrThrow({ where: { shop, source: "reconcile" } });
    expect(delivery).toMatchObject({ topic: "customers/update", outcome: "planned" });
    expect(delivery.rawBody).toContain(numeric(customer.id));
  });

  it("on demand (the CLI's reconcile): objects already synced are not sent again", async () => {
    const { shop, customer } = await shopWithMissedUpdate(4);
    // Orders and products never synced since the connection: nothing of theirs changed after it either.
    const first = await reconcileShopNow(shop, "cli-test", CLI_POLICY);
    expect(first.lastEnqueued).toBe(1);
    h.startWorkers(1, FAST_POLICY);
    await h.settle();
    expect(customerEvents(customerEmail(customer)!).map((r) => (r.body as { first_name?: string }).first_name)).toEqual(["Missed4"]);

    // A second sweep finds the same change already synced.
    await h.stopWorkers();
    const second = await reconcileShopNow(shop, "cli-test", CLI_POLICY);
    expect(second.lastEnqueued).toBe(0);
  });

  it("a sweep that fails (Shopify throttling for minutes) resumes later and says why", async () => {
    const { shop } = await shopWithMissedUpdate(6);
    store.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    try {
      await expect(reconcileShopNow(shop, "cli-test", CLI_POLICY)).rejects.toThrow(/API budget .* is spent/);
      const status = await reconcileStatus(shop);
      expect(status?.lastError).toMatch(/API budget/);
      expect(status?.lastSweepAt).toBeNull();
    } finally {
      store.throttle({ currentlyAvailable: 2_000, restoreRate: 100 });
    }
    expect((await reconcileShopNow(shop, "cli-test", CLI_POLICY)).lastEnqueued).toBe(1);
  });

  it("a sweep whose pages keep failing past its deadline is given up with the reason; the next sweep covers the same span", async () => {
    const { shop } = await shopWithMissedUpdate(7);
    store.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    try {
      // A deadline already past: the first failure gives the sweep up, and the on-demand sweep says so.
      await expect(reconcileShopNow(shop, "cli-test", { ...CLI_POLICY, reconcileDeadlineMs: -1 })).rejects.toThrow(/failed: gave up this sweep after 1 attempts: .*API budget/);
      const status = (await reconcileStatus(shop))!;
      expect(status.lastError).toMatch(/^gave up this sweep after 1 attempts: .*API budget/);
      expect(status.running).toBe(false);
      expect(status.lastSweepAt).toBeNull();
      expect(status.dueAt.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    } finally {
      store.throttle({ currentlyAvailable: 2_000, restoreRate: 100 });
    }
    // The missed update is still found: the span was not marked swept.
    expect((await reconcileShopNow(shop, "cli-test", CLI_POLICY)).lastEnqueued).toBe(1);
  });
  it("a page Shopify prices above its limit (MAX_COST_EXCEEDED) is asked for again at half the size, and the sweep goes on", async () => {
    const { shop, customer } = await shopWithMissedUpdate(8);
    // Shopify charging more than its documented rules: ReconcileCustomers (898 by the rules) is refused above 500.
    h.app.admin.limitQueryCost(500);
    const refusedBefore = h.app.admin.costRefused.ReconcileCustomers ?? 0;
    try {
      const status = await reconcileShopNow(shop, "cli-test", CLI_POLICY);
      expect(status.lastError).toBeNull();
      expect(status.lastEnqueued).toBe(1);
      // Refused once (179 customers), then 89 a page: the same query is not sent again.
      expect((h.app.admin.costRefused.ReconcileCustomers ?? 0) - refusedBefore).toBe(1);
      const pages = sweepCalls(shop).map((c) => (c.body as { variables?: { first?: number } }).variables?.first);
      expect(pages.slice(0, 2)).toEqual([179, 89]);
      h.startWorkers(1, FAST_POLICY);
      await h.settle();
      expect(customerEvents(customerEmail(customer)!).map((r) => (r.body as { first_name?: string }).first_name)).toEqual(["Missed8"]);
      // The next sweep starts at the size Shopify took.
      await h.stopWorkers();
      await reconcileShopNow(shop, "cli-test", CLI_POLICY);
      expect((h.app.admin.costRefused.ReconcileCustomers ?? 0) - refusedBefore).toBe(1);
    } finally {
      h.app.admin.limitQueryCost();
      forgetAdminBudgets();
    }
  });

  // Last: it changes orders and products of the shared store, which later sweeps would find.
  it("an order with 60 line items and a product with 60 variants changed without a webhook reach the service whole", async () => {
    const { shop } = await shopWithMissedUpdate(9);
    // Shopify gives at most 50 children per page; the rest are asked for page by page.
    const orderIndex = store.objects.orders.findIndex((o) => o.email && o.customer);
    const order = store.objects.orders[orderIndex]!;
    store.setChildren("orders", orderIndex, 60);
    store.touch("orders", orderIndex, { tags: ["big"] });
    const product = store.objects.products[0]!;
    store.setChildren("products", 0, 60);
    store.touch("products", 0, { title: "Sixty sizes" });
    await reconcileShopNow(shop, "cli-test", CLI_POLICY);
    h.startWorkers(1, FAST_POLICY);
    await h.settle();

    const orderEvents = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/order/") && (r.body as { id?: string }).id === numeric(order.id));
    expect(orderEvents.length).toBeGreaterThan(0);
    expect((orderEvents.at(-1)!.body as { products: unknown[] }).products).toHaveLength(60);
    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop, source: "reconcile" } });
    const productBody = deliveries.map((d) => JSON.parse(d.rawBody) as { admin_graphql_api_id?: string; variants?: unknown[] }).find((b) => b.admin_graphql_api_id === product.id);
    expect(productBody?.variants).toHaveLength(60);
  });
});
