import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { install, newShop, until } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

// Shopify gives an app 30 days to act on a redaction, and a merchant must be able to answer a data
// request: neither waits behind changes that cannot proceed (here: about customers the app must look
// up while Shopify's API budget is spent, retried for hours before they give up).
describeEachDatabase("privacy requests behind stuck changes", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, { customers: 5, products: 0, orders: 0 }, { seed: 3 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    store.throttle({ maximumAvailable: 2_000, currentlyAvailable: 2_000, restoreRate: 100 });
  });

  const deliveries = (shop: string) => h.app.db.prisma.webhookDelivery.findMany({ where: { shop }, orderBy: { receivedAt: "asc" } });
  const consentChange = (id: string) => ({
    admin_graphql_api_customer_id: `gid://shopify/Customer/${id}`,
    email_address: null,
    email_marketing_consent: { state: "unsubscribed", opt_in_level: "single_opt_in", consent_updated_at: new Date().toISOString() },
  });

  it("a redaction and a data request are acted on while earlier changes wait for Shopify", async () => {
    const shop = newShop("privacy");
    await install(h, shop);
    // Shopify's budget is spent for good: changes about customers the app never saw wait, retried.
    store.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    h.startWorkers(1, { ...FAST_POLICY, backoffBaseMs: 200, backoffCapMs: 1_000 });
    for (const id of ["7001", "7002", "7003"]) expect((await h.send({ topic: "customers_email_marketing_consent/update", shop, body: consentChange(id) })).status).toBe(200);
    await until("the three changes to wait for Shopify", async () => {
      const waiting = (await deliveries(shop)).filter((d) => d.status === "queued" && d.attempts > 0 && d.outcomeDetail?.startsWith("waiting:"));
      return waiting.length === 3;
    });

    const shopId = 1;
    const redact = { shop_id: shopId, shop_domain: shop, customer: { id: 7001, email: null, phone: null }, orders_to_redact: [] };
    const dataRequest = { shop_id: shopId, shop_domain: shop, customer: { id: 7002, email: null, phone: null }, orders_requested: [], data_request: { id: 42 } };
    expect((await h.send({ topic: "customers/redact", shop, body: redact })).status).toBe(200);
    expect((await h.send({ topic: "customers/data_request", shop, body: dataRequest })).status).toBe(200);

    const done = await until("both privacy requests to be acted on", async () => {
      const rows = (await deliveries(shop)).filter((d) => d.topic === "customers/redact" || d.topic === "customers/data_request");
      return rows.length === 2 && rows.every((d) => d.status === "done") ? rows : undefined;
    });
    expect(done.map((d) => d.outcome)).toEqual(["handled", "handled"]);
    const rest = await deliveries(shop);
    // The redacted customer's waiting change went with the redaction; the others still wait.
    // (A waiting change may be claimed for its next try at the moment it is read: queued or running.)
    const left = rest.filter((d) => d.topic === "customers_email_marketing_consent/update");
    expect(left.map((d) => [d.rawBody.includes("Customer/7001"), d.status === "done"])).toEqual([
      [false, false],
      [false, false],
    ]);
  });
});
