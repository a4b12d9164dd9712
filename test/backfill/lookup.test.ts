import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { customerEmail, startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { install, newShop, numeric, until } from "./helpers";

// Live webhooks that need an object the app never synced: it is fetched from the (fake) Admin
// GraphQL API, within the cost budget, and the webhook is planned right after it.
const SIZE = { customers: 30, products: 3, orders: 30 };

/** refunds/create (Shopify's documented body) for an order, ids exact as Shopify writes them. */
const refundFor = (orderId: string) => fixture("refunds/create").replace(/"order_id":\s*\d+/g, `"order_id": ${orderId}`);

describeEachDatabase("unknown objects in live traffic", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE, { seed: 11 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    store.throttle({ maximumAvailable: 2_000, currentlyAvailable: 2_000, restoreRate: 100 });
  });

  const refunds = () => h.emulator.requests.filter((r) => r.path === "/api/events" && (r.body as { eventName?: string }).eventName === "order_refunded");
  const deliveriesOf = (shop: string) => h.app.db.prisma.webhookDelivery.findMany({ where: { shop }, orderBy: { receivedAt: "asc" } });
  /** An order of the store with a buyer (customer and email). */
  const orderWithBuyer = (from: number) => store.objects.orders.slice(from).find((o) => o.email && o.customer)!;

  it("a refund for a never-seen order reaches the service attached to its buyer", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    const order = orderWithBuyer(0);
    h.startWorkers(1, FAST_POLICY);
    expect((await h.send({ topic: "refunds/create", shop, body: refundFor(numeric(order.id)) })).status).toBe(200);
    await h.settle();

    const [refund] = refunds();
    expect(refund?.body).toMatchObject({ email: order.email, eventName: "order_refunded", properties: { order_id: numeric(order.id) } });
    // The refund is news (automations may run); the order fetched to attach it is context: silent.
    expect((refund.body as { silent?: boolean }).silent).toBeUndefined();
    const orderEvents = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/order/"));
    expect(orderEvents.length).toBeGreaterThan(0);
    expect(orderEvents.find((r) => (r.body as { silent?: boolean }).silent === true)?.body).toMatchObject({ id: numeric(order.id), email: order.email });
    const deliveries = await deliveriesOf(shop);
    expect(deliveries.map((d) => [d.source, d.topic, d.outcome])).toEqual([
      ["webhook", "refunds/create", "planned"],
      ["lookup", "orders/updated", "planned"],
    ]);
    expect(store.answered.LookupOrder).toBeGreaterThan(0);
  });

  it("a consent change for a never-seen customer creates the contact with its Shopify profile", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    // Subscribed in Shopify: the fetched customer becomes a contact with its name, then the change applies.
    const customer = store.objects.customers.find(
      (c) => c.firstName && (c.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === "SUBSCRIBED",
    )!;
    h.startWorkers(1, FAST_POLICY);
    const body = {
      admin_graphql_api_customer_id: customer.id,
      email_address: null,
      email_marketing_consent: { state: "unsubscribed", opt_in_level: "single_opt_in", consent_updated_at: new Date().toISOString() },
    };
    expect((await h.send({ topic: "customers_email_marketing_consent/update", shop, body })).status).toBe(200);
    await h.settle();
    const person = h.emulator.person(customerEmail(customer)!);
    expect(person?.customFields.firstName).toBe(customer.firstName);
    expect(person?.statusDetails).toBe("unsubscribed");
    expect((await deliveriesOf(shop)).map((d) => d.source)).toEqual(["webhook", "lookup"]);
  });

  it("an order edit for a never-seen order is attached to its buyer; a fulfilment carries its order and needs no lookup", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    const edited = orderWithBuyer(3);
    h.startWorkers(1, FAST_POLICY);
    const edit = fixture("orders/edited").replace(/"order_id":\s*\d+/g, `"order_id": ${numeric(edited.id)}`);
    expect((await h.send({ topic: "orders/edited", shop, body: edit })).status).toBe(200);
    await h.settle();
    const editEvents = h.emulator.requests.filter((r) => r.path === "/api/events/order/updated" && (r.body as { id?: string }).id === numeric(edited.id));
    expect(editEvents.some((r) => (r.body as { email?: string }).email === edited.email && (r.body as { silent?: boolean }).silent === undefined)).toBe(true);

    const lookupsBefore = store.answered.LookupOrder ?? 0;
    // Shopify's sample is a test order (nothing would be sent): as a real one.
    const fulfilled = fixture("orders/fulfilled").replace(/"test":\s*true/, '"test": false');
    expect((await h.send({ topic: "orders/fulfilled", shop, body: fulfilled })).status).toBe(200);
    await h.settle();
    const id = numeric((JSON.parse(fulfilled) as { admin_graphql_api_id: string }).admin_graphql_api_id);
    expect(h.emulator.requests.some((r) => r.path.startsWith("/api/events/order/") && (r.body as { id?: string }).id === id)).toBe(true);
    expect(store.answered.LookupOrder ?? 0).toBe(lookupsBefore);
  });

  it("waits for Shopify's cost budget when throttled, then succeeds", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    const order = orderWithBuyer(6);
    // An empty bucket that refills: the first answer is THROTTLED, the lookup waits and gets the order.
    store.throttle({ currentlyAvailable: 0, restoreRate: 400 });
    const throttledBefore = store.throttled.LookupOrder ?? 0;
    h.startWorkers(1, FAST_POLICY);
    await h.send({ topic: "refunds/create", shop, body: refundFor(numeric(order.id)) });
    await h.settle();
    expect(store.throttled.LookupOrder ?? 0).toBeGreaterThan(throttledBefore);
    expect(refunds().map((r) => (r.body as { email?: string }).email)).toEqual([order.email]);
  });

  it("throttled for minutes: the webhook waits in the queue with the reason, and goes through once Shopify answers", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    const order = orderWithBuyer(9);
    store.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    // Retries a second apart at most, so the test sees the queue before the bucket comes back.
    h.startWorkers(1, { ...FAST_POLICY, backoffBaseMs: 200, backoffCapMs: 1_000 });
    await h.send({ topic: "refunds/create", shop, body: refundFor(numeric(order.id)) });
    const waiting = await until("the refund to wait", async () => (await deliveriesOf(shop)).find((d) => d.status === "queued" && d.outcomeDetail?.startsWith("waiting:")));
    expect(waiting.outcomeDetail).toMatch(/could not be fetched from Shopify: Shopify's API budget .* is spent/);
    expect(refunds()).toEqual([]);

    store.throttle({ currentlyAvailable: 2_000, restoreRate: 100 });
    await until("the refund to reach the service", async () => refunds().length > 0);
    expect(refunds()[0].body).toMatchObject({ email: order.email });
    expect((await deliveriesOf(shop)).find((d) => d.id === waiting.id)?.outcome).toBe("planned");
  });

  it("an order Shopify does not have: retried, then recorded with the reason", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    h.startWorkers(1, { ...FAST_POLICY, backoffBaseMs: 200, backoffCapMs: 1_000 });
    await h.send({ topic: "refunds/create", shop, body: refundFor("424242") });
    const waiting = await until("the refund to wait", async () => (await deliveriesOf(shop)).find((d) => d.status === "queued" && d.outcomeDetail?.startsWith("waiting:")));
    expect(waiting.outcomeDetail).toContain("Shopify has no order 424242");
    await h.stopWorkers();
    // The home page names the waiting change and why; past 15 minutes it no longer says "healthy".
    const { healthView } = await import("~/admin/sync-health.server");
    const soon = await healthView(shop);
    expect(soon.waiting).toMatchObject({ count: 1, reason: expect.stringContaining("Shopify has no order 424242") });
    expect(soon.banner.status).toBe("healthy");
    const later = await healthView(shop, new Date(Date.now() + 20 * 60_000));
    expect(later.banner).toMatchObject({ status: "degraded", title: "Some changes are waiting" });
    expect(later.banner.reason).toMatch(/^1 store change is waiting before anything can be sent, the oldest for 2\d minutes: order 424242 could not be fetched from Shopify/);

    // Past the deadline (6 hours by default): recorded, with the reason, nothing sent, and on Problems.
    h.startWorkers(1, { ...FAST_POLICY, lookupDeadlineMs: 0 });
    const done = await until("the refund to be recorded", async () => (await deliveriesOf(shop)).find((d) => d.id === waiting.id && d.status === "done"));
    expect(done.outcome).toBe("invalid");
    expect(done.outcomeDetail).toMatch(/^gave up: order 424242 could not be fetched from Shopify: Shopify has no order 424242/);
    expect(refunds()).toEqual([]);
    const { listUnprocessed } = await import("~/admin/problems.server");
    expect((await listUnprocessed(shop)).items.map((i) => i.reason)).toEqual([done.outcomeDetail]);
    expect((await healthView(shop, new Date(Date.now() + 20 * 60_000))).waiting.count).toBe(0);
  });
  it("a refund for a never-seen order with 120 line items fetches them all: the order reaches the service with its 120 products", async () => {
    const shop = newShop("lookup");
    await install(h, shop);
    // The lookup asks for 50 line items; the rest are asked for page by page (up to 250 each).
    const index = store.objects.orders.indexOf(orderWithBuyer(12));
    const order = store.objects.orders[index]!;
    store.setChildren("orders", index, 120);
    h.startWorkers(1, FAST_POLICY);
    await h.send({ topic: "refunds/create", shop, body: refundFor(numeric(order.id)) });
    await h.settle();
    const sent = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/order/") && (r.body as { id?: string }).id === numeric(order.id));
    expect(sent.length).toBeGreaterThan(0);
    // The fetched order (silent context) carries its products; the refund's own update does not.
    const fetched = sent.find((r) => (r.body as { silent?: boolean }).silent === true);
    expect((fetched?.body as { products?: unknown[] } | undefined)?.products).toHaveLength(120);
    expect(refunds().map((r) => (r.body as { email?: string }).email)).toEqual([order.email]);
  });
});
