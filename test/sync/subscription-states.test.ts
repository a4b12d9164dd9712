import { expect, it } from "vitest";
import { describeOverHttp } from "../support/over-http";
import { customerBody } from "../support/pipeline";
import { fixture } from "./fixtures";

// End to end: a real contract's life replayed as signed webhooks, and what the marketing service
// (the emulator) recorded for the customer: every state, distinguishable, none dropped as a repeat.

describeOverHttp("subscription states reach the service", { shopPrefix: "subs" }, ({ h, shop }) => {
  const deliver = (topic: string, body: object) => h.deliver({ topic, shop, body });
  const contract = (topic: string, status: string, extra: object = {}) =>
    deliver(`subscription_contracts/${topic}`, {
      ...fixture("subscription_contracts/create"),
      id: 7103183873,
      admin_graphql_api_id: "gid://shopify/SubscriptionContract/7103183873",
      customer_id: 4100,
      admin_graphql_api_customer_id: "gid://shopify/Customer/4100",
      status,
      ...extra,
    });
  const attempt = (topic: string, key: string) =>
    deliver(`subscription_billing_attempts/${topic}`, {
      ...fixture(`subscription_billing_attempts/${topic}`),
      idempotency_key: key,
      subscription_contract_id: 7103183873,
      admin_graphql_api_subscription_contract_id: "gid://shopify/SubscriptionContract/7103183873",
    });

  it("create → pause → activate → cancel → billing success → billing failure: each state recorded once, in order", async () => {
    const email = "sub.scriber@example.com";
    await deliver("customers/create", customerBody({ id: "4100", email }));
    const line = {
      id: 1,
      title: "Coffee beans",
      product_id: 77,
      variant_id: 78,
      vendor: "Roastery",
      quantity: 2,
      current_price: { amount: "12.50", currency_code: "CAD" },
    };
    await contract("create", "active", { lines: [line] });
    await contract("pause", "paused", { lines: [line] });
    await contract("activate", "active", { lines: [line] });
    await contract("cancel", "cancelled", { lines: [line] });
    await attempt("success", "renewal-1");
    await attempt("success", "renewal-1"); // Shopify delivering the same attempt twice
    await attempt("failure", "renewal-2");

    const failed = (await h.app.db.prisma.outboundCall.findMany({ where: { shop } })).filter((c) => c.status !== "delivered");
    expect(failed).toEqual([]);
    const events = h.emulator.personEvents(email).filter((e) => e.event !== "customer_created");
    const names = events.map((e) => e.event);
    expect(names).toEqual([
      "subscription_created",
      "customer_updated",
      "subscription_updated",
      "subscription_paused",
      "customer_updated",
      "subscription_updated",
      "subscription_resumed",
      "customer_updated",
      "subscription_cancelled",
      "customer_updated",
      "subscription_renewed",
      "subscription_renewal_failed",
    ]);
    // The customer's subscriptions[] follows the contract's status.
    const statuses = events.filter((e) => e.event === "customer_updated").map((e) => (e.properties.subscriptions as { status: string }[])[0].status);
    expect(statuses).toEqual(["active", "paused", "active", "cancelled"]);
    expect(events.find((e) => e.event === "customer_updated")?.properties.subscriptions).toEqual([
      { plan_interval: "week", plan_interval_count: 4, plan_amount: 25, status: "active", currency: "CAD", start_date: expect.any(String) },
    ]);
    expect(events[0].properties).toMatchObject({
      id: "7103183873",
      url: `https://${shop}/account`,
      products: [{ id: "77", name: "Coffee beans", brand: "Roastery", url: `https://${shop}/variants/78`, price: 12.5, quantity: 2 }],
    });
    expect(events.find((e) => e.event === "subscription_paused")?.properties).toMatchObject({ subscription_id: "7103183873", status: "paused" });
  });
});
