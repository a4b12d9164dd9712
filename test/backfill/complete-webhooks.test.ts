import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { reconcileShopNow } from "~/backfill/reconcile.server";
import { PIPELINE_POLICY, type PipelinePolicy } from "~/pipeline/policy";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { install, newShop, numeric, until } from "./helpers";

// Webhooks Shopify sends cut short are completed from the (fake) Admin GraphQL API before they
// are planned: a product's variants past the 100 the products/* payload details (its
// `variant_gids` names them all), a 2026-04 subscription contract's lines, dates and plan.
const SIZE = { customers: 5, products: 3, orders: 0 };
const CLI_POLICY: PipelinePolicy = { ...PIPELINE_POLICY, ...FAST_POLICY };

type Line = Record<string, unknown>;

/** A variant of the fake store as Shopify's products/* webhook details it (ids rounded, as Shopify's are). */
const webhookVariant = (productGid: string, v: Line, position: number) => ({
  admin_graphql_api_id: v.id,
  id: Number(numeric(v.id)),
  product_id: Number(numeric(productGid)),
  title: v.title,
  price: v.price,
  sku: v.sku,
  barcode: v.barcode,
  position,
  option1: (v.selectedOptions as { value: string }[])[0]?.value ?? null,
  option2: null,
  option3: null,
  inventory_quantity: 3,
});

describeEachDatabase("webhooks completed from the Admin API", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE, { seed: 3 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(() => h.reset());

  const productEvents = (id: string) => h.emulator.requests.filter((r) => r.path.startsWith("/api/events/product/") && (r.body as { id?: string }).id === id);

  it("a product with 250 variants: the live webhook (100 detailed) and the reconciliation sweep send the same 250 variants", async () => {
    const shop = newShop("complete");
    await install(h, shop);
    const index = 1;
    store.setChildren("products", index, 250);
    const product = store.objects.products[index]!;
    const variants = store.childrenOf("products", index);
    // Shopify's products/update (2026-04 sample) for this product: the first 100 variants detailed, all 250 named.
    const body = {
      ...(JSON.parse(fixture("products/update")) as Line),
      admin_graphql_api_id: product.id,
      id: Number(numeric(product.id)),
      title: product.title,
      handle: product.handle,
      status: "active",
      published_at: "2026-10-01T00:00:00Z",
      updated_at: "2026-11-20T10:00:00Z",
      variants: variants.slice(0, 100).map((v, i) => webhookVariant(product.id as string, v, i + 1)),
      variant_gids: variants.map((v) => ({ admin_graphql_api_id: v.id, updated_at: "2026-11-20T10:00:00.000Z" })),
    };
    h.startWorkers(1, FAST_POLICY);
    await h.deliver({ topic: "products/update", shop, body });
    const [live] = productEvents(numeric(product.id));
    const liveVariants = (live?.body as { variants?: { id: string }[] } | undefined)?.variants;
    expect(liveVariants).toHaveLength(250);
    expect(liveVariants!.map((v) => v.id)).toEqual(variants.map((v) => numeric(v.id)));
    expect(store.answered.ProductVariants).toBeGreaterThan(0);

    // Changed in Shopify since, without a webhook: the sweep reads it whole and sends it again.
    await h.stopWorkers();
    store.touch("products", index, { title: "Two hundred and fifty sizes" });
    expect((await reconcileShopNow(shop, "cli-test", CLI_POLICY)).lastEnqueued).toBe(1);
    h.startWorkers(1, FAST_POLICY);
    await h.settle();
    const events = productEvents(numeric(product.id));
    expect(events).toHaveLength(2);
    expect((events[1].body as { name?: string; silent?: boolean })).toMatchObject({ name: "Two hundred and fifty sizes", silent: true });
    expect((events[1].body as { variants?: unknown[] }).variants).toEqual(liveVariants);
  });

  it("variants Shopify cannot give now (throttled for minutes): the product waits in the queue with the reason, never sent cut short", async () => {
    const shop = newShop("complete");
    await install(h, shop);
    const index = 2;
    store.setChildren("products", index, 120);
    const product = store.objects.products[index]!;
    const variants = store.childrenOf("products", index);
    const body = {
      ...(JSON.parse(fixture("products/create")) as Line),
      admin_graphql_api_id: product.id,
      id: Number(numeric(product.id)),
      status: "active",
      published_at: "2026-10-01T00:00:00Z",
      variants: variants.slice(0, 100).map((v, i) => webhookVariant(product.id as string, v, i + 1)),
      variant_gids: variants.map((v) => ({ admin_graphql_api_id: v.id, updated_at: "2026-11-20T10:00:00.000Z" })),
    };
    store.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    try {
      h.startWorkers(1, { ...FAST_POLICY, backoffBaseMs: 200, backoffCapMs: 1_000 });
      await h.send({ topic: "products/create", shop, body });
      const waiting = await until("the product to wait", async () =>
        (await h.app.db.prisma.webhookDelivery.findMany({ where: { shop } })).find((d) => d.status === "queued" && d.outcomeDetail?.startsWith("waiting:")),
      );
      expect(waiting.outcomeDetail).toMatch(/the product's other variants could not be read from Shopify: Shopify's API budget .* is spent/);
      expect(productEvents(numeric(product.id))).toEqual([]);
    } finally {
      store.throttle({ maximumAvailable: 2_000, currentlyAvailable: 2_000, restoreRate: 100 });
    }
    await until("the product to reach the service", async () => productEvents(numeric(product.id)).length > 0);
    expect((productEvents(numeric(product.id))[0].body as { variants: unknown[] }).variants).toHaveLength(120);
  });

  it("a 2026-04 subscription contract webhook (no lines) reaches the service with its products, amount and plan read from Shopify", async () => {
    const shop = newShop("complete");
    await install(h, shop);
    const contractGid = "gid://shopify/SubscriptionContract/9100000000000000001";
    const customerGid = "gid://shopify/Customer/9100000000000000002";
    store.addSubscriptionContract({
      id: contractGid,
      createdAt: "2026-11-02T09:30:00Z",
      updatedAt: "2026-11-02T09:30:00Z",
      currencyCode: "CAD",
      status: "ACTIVE",
      billingPolicy: { interval: "WEEK", intervalCount: 4, minCycles: 1, maxCycles: null, anchors: [] },
      deliveryPolicy: { interval: "WEEK", intervalCount: 4, anchors: [] },
      lines: [
        {
          id: "gid://shopify/SubscriptionLine/501",
          title: "Café beans",
          variantTitle: "1 kg",
          productId: "gid://shopify/Product/9100000000000000011",
          variantId: "gid://shopify/ProductVariant/9100000000000000012",
          sku: "BEANS-1KG",
          quantity: 2,
          currentPrice: { amount: "18.5", currencyCode: "CAD" },
          variantImage: { url: "https://cdn.example/beans.jpg" },
          sellingPlanId: "gid://shopify/SellingPlan/77",
          sellingPlanName: "Delivered every 4 weeks",
        },
        {
          id: "gid://shopify/SubscriptionLine/502",
          title: "Filter papers",
          variantTitle: null,
          productId: "gid://shopify/Product/9100000000000000013",
          variantId: "gid://shopify/ProductVariant/9100000000000000014",
          sku: null,
          quantity: 1,
          currentPrice: { amount: "4.25", currencyCode: "CAD" },
          variantImage: null,
          sellingPlanId: "gid://shopify/SellingPlan/77",
          sellingPlanName: "Delivered every 4 weeks",
        },
      ],
    });
    // Shopify's 2026-04 subscription_contracts/create sample: no lines, created_at or updated_at.
    const sample = JSON.parse(fixture("subscription_contracts/create")) as Line;
    expect(sample.lines).toBeUndefined();
    // Ids as Shopify writes them: numbers beyond 2^53, exact in the body's text.
    const body = JSON.stringify({ ...sample, admin_graphql_api_id: contractGid, id: "<id>", admin_graphql_api_customer_id: customerGid, customer_id: "<customer>" })
      .replace('"<id>"', numeric(contractGid))
      .replace('"<customer>"', numeric(customerGid));
    h.startWorkers(1, FAST_POLICY);
    await h.deliver({ topic: "subscription_contracts/create", shop, body });

    const created = h.emulator.requests.find((r) => r.path === "/api/events/subscription/created");
    expect(created?.body).toMatchObject({
      id: numeric(contractGid),
      currency: "CAD",
      products: [
        { id: numeric("gid://shopify/Product/9100000000000000011"), name: "Café beans", variant_id: numeric("gid://shopify/ProductVariant/9100000000000000012"), price: 18.5, quantity: 2, image_url: "https://cdn.example/beans.jpg" },
        { id: numeric("gid://shopify/Product/9100000000000000013"), name: "Filter papers", price: 4.25, quantity: 1 },
      ],
    });
    const customer = h.emulator.requests.find((r) => r.path === "/api/events/customer/updated" && (r.body as { subscriptions?: unknown }).subscriptions);
    expect((customer?.body as { subscriptions: unknown[] }).subscriptions).toEqual([
      expect.objectContaining({
        plan_id: "77",
        plan_name: "Delivered every 4 weeks",
        plan_amount: 41.25,
        plan_interval: "week",
        plan_interval_count: 4,
        currency: "CAD",
        status: "active",
        start_date: "2026-11-02T09:30:00.000Z",
      }),
    ]);
  });
});
