/** Products, checkouts (abandonment), subscriptions. */
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../app/sync/mappers/products";
import { SUBSCRIPTION_STATES } from "../../app/sync/mappers/subscriptions";
import { mapAbandonedCheckout, planWebhook } from "../../app/sync/plan-webhook";
import type { SyncPlan } from "../../app/sync/plan-contract";
import { serviceCallSchema } from "../../app/services/marketing/schemas";
import { eventOf, fixture, makeCtx, NOW, ops, run, runSequence, withCurrency, type Json } from "./fixtures";

describe("products", () => {
  const draft = () => ({ ...fixture("products/create"), status: "draft" });
  const unpublished = () => ({ ...fixture("products/update"), published_at: null });

  it("draft create → nothing; publishing later → product/created", () => {
    const [create, publish] = runSequence([
      { topic: "products/create", body: draft() },
      { topic: "products/update", body: fixture("products/update") },
    ]);
    expect(create.calls).toEqual([]);
    expect(create.skipped).toMatch(/not live/);
    expect(ops(publish)).toEqual(["product/created"]);
  });

  it("live → archived/unpublished → product/deleted once; further draft updates → nothing", () => {
    const [, archived, again, back] = runSequence([
      { topic: "products/create", body: fixture("products/create") },
      { topic: "products/update", body: { ...fixture("products/update"), status: "archived" } },
      { topic: "products/update", body: unpublished() },
      { topic: "products/update", body: fixture("products/update") },
    ]);
    expect(ops(archived)).toEqual(["product/deleted"]);
    expect(eventOf(archived, "product", "deleted")).toEqual({
      referenceId: "shop:acme.myshopify.com",
      source: "shopify",
      id: "788032119674292922",
      modified_at: "2022-01-01T00:00:00.000Z",
    });
    expect(again.calls).toEqual([]);
    expect(ops(back)).toEqual(["product/created"]);
  });

  it("unchanged product update (inventory-only) is not re-sent", () => {
    const [, same] = runSequence([
      { topic: "products/update", body: fixture("products/update") },
      { topic: "products/update", body: { ...fixture("products/update"), updated_at: "2026-01-01T00:00:00Z" } },
    ]);
    expect(same.calls).toEqual([]);
  });

  it("deleting a never-advertised product sends nothing", () => {
    const [, del] = runSequence([
      { topic: "products/create", body: draft() },
      { topic: "products/delete", body: { id: "788032119674292922" } },
    ]);
    expect(del.calls).toEqual([]);
  });

  it("description is plain text; min price exact; options skip Default Title; JPY prices", () => {
    const body = eventOf(
      run(
        "products/create",
        {
          ...fixture("products/create"),
          body_html: "<p>Soft&nbsp;&amp; warm</p>\n<ul><li>100% wool</li><li>Caf&eacute; &#x2615; &#8220;cozy&#8221;</li></ul><script>alert(1)</script>",
          variants: [
            { id: 1, price: "2500", sku: "A", barcode: "123", option1: "Default Title" },
          ],
          category: { name: "Sweaters", full_name: "Apparel > Sweaters" },
          image: { src: "https://cdn.example.com/a.jpg" },
        },
        makeCtx({ currency: "JPY" }),
      ),
      "product",
      "created",
    );
    expect(body.description).toBe("Soft & warm 100% wool Café ☕ “cozy”");
    expect(body).toMatchObject({
      price: 2500,
      currency: "JPY",
      sku: "A",
      barcode: "123",
      variant_id: "1",
      image_url: "https://cdn.example.com/a.jpg",
      categories: ["Shirts", "Apparel > Sweaters"],
      variants: [{ id: "1", sku: "A", price: 2500, barcode: "123", options: [] }],
    });
  });

  it("htmlToText collapses whitespace and keeps unknown entities", () => {
    expect(htmlToText("  a<br/>b\n\n<div>c</div> &unknown; &lt;tag&gt; ")).toBe("a b c &unknown; <tag>");
    expect(htmlToText(null)).toBe("");
  });

  it("min price over variants is exact", () => {
    const body = eventOf(
      run("products/create", { ...fixture("products/create"), variants: [{ id: 1, price: "10.10" }, { id: 2, price: "10.09" }, { id: 3, price: "100.00" }] }),
      "product",
      "created",
    );
    expect(body.price).toBe(10.09);
  });
});

describe("checkouts and abandonment", () => {
  it("no email → skipped, nothing scheduled", () => {
    const plan = run("checkouts/create", { ...fixture("checkouts/create"), email: null, customer: null });
    expect(plan.calls).toEqual([]);
    expect(plan.abandonment).toBeUndefined();
  });

  it("guest checkout (email, no customer) → cart/updated by email + schedule", () => {
    const plan = run("checkouts/update", { ...fixture("checkouts/update"), customer: null });
    expect(eventOf(plan, "cart", "updated").email).toBe("example@email.com");
    expect(plan.abandonment?.action).toBe("schedule");
  });

  it("completed_at → cancel with checkout and cart tokens, and later updates never reschedule", () => {
    const [done, late] = runSequence([
      { topic: "checkouts/update", body: { ...fixture("checkouts/update"), completed_at: "2026-04-01T00:00:00Z" } },
      { topic: "checkouts/update", body: fixture("checkouts/update") },
    ]);
    expect(done.calls).toEqual([]);
    expect(done.abandonment).toEqual({ action: "cancel", keys: ["123123123", "eeafa272cebfd4b22385bc4b645e762c"] });
    expect(late.abandonment?.action).toBe("cancel");
  });

  it("unchanged checkout update: no duplicate cart/updated, but the snapshot still goes to the scheduler", () => {
    const [, same] = runSequence([
      { topic: "checkouts/create", body: fixture("checkouts/create") },
      { topic: "checkouts/update", body: fixture("checkouts/update") },
    ]);
    expect(same.calls).toEqual([]);
    expect(same.abandonment?.action).toBe("schedule");
  });

  it("mapAbandonedCheckout: exactly the cart/abandoned call, from a JSON round-tripped snapshot", () => {
    const plan = run("checkouts/create", withCurrency(fixture("checkouts/create"), "EUR"));
    if (plan.abandonment?.action !== "schedule") throw new Error("expected schedule");
    const snapshot = JSON.parse(JSON.stringify(plan.abandonment.snapshot));
    const call = mapAbandonedCheckout(snapshot, makeCtx({ now: new Date("2026-05-01T13:00:00Z") }));
    expect(serviceCallSchema.parse(call)).toEqual(call);
    expect(call).toMatchObject({
      op: "event",
      type: "cart",
      action: "abandoned",
      body: {
        email: "example@email.com",
        source: "shopify",
        id: "eeafa272cebfd4b22385bc4b645e762c",
        url: "https://checkout.local/548380009/checkouts/123123123/recover?key=example-secret-token",
        total: 398,
        total_products: 2,
        currency: "EUR",
        occurredAt: "2026-05-01T13:00:00.000Z",
      },
    });
    expect(() => mapAbandonedCheckout({ token: "x" }, makeCtx())).toThrow();
  });

  it("checkout discounts are subtracted per line", () => {
    const ch = fixture("checkouts/create");
    ch.line_items[0].discount_allocations = [{ amount: "19.90" }];
    const body = eventOf(run("checkouts/create", ch), "cart", "updated");
    expect(body.products[0]).toMatchObject({ total: 179.1, discounts: 19.9 });
  });
});

describe("subscription contracts", () => {
  const customEvents = (plan: SyncPlan) => plan.calls.flatMap((c) => (c.op === "event.custom" ? [c.body.eventName] : []));

  it("every state of SUBSCRIPTION_STATES is reported by its own action or custom event", () => {
    const seen = new Set<string>();
    for (const [state, e] of Object.entries(SUBSCRIPTION_STATES)) {
      const mark = `${e.action ?? ""}|${e.eventName ?? ""}`;
      expect(seen.has(mark) && !e.eventName, state).toBe(false);
      seen.add(mark);
    }
    expect(Object.keys(SUBSCRIPTION_STATES).sort()).toEqual(
      ["cancelled", "created", "expired", "failed", "paused", "renewal_failed", "renewed", "resumed", "skipped", "updated"],
    );
  });

  for (const [topic, action, custom] of [
    ["create", "created", null],
    ["update", "updated", null],
    ["activate", "updated", "subscription_resumed"],
    ["pause", "updated", "subscription_paused"],
    ["cancel", "cancelled", null],
    ["expire", "expired", null],
    ["fail", "updated", "subscription_failed"],
  ] as const) {
    it(`subscription_contracts/${topic} → subscription/${action}${custom ? ` + ${custom}` : ""} + customer/updated`, () => {
      const plan = run(`subscription_contracts/${topic}`, fixture(`subscription_contracts/${topic}`));
      expect(eventOf(plan, "subscription", action)).toMatchObject({ referenceId: "1", currency: "CAD", url: "https://shop.example.com/account" });
      expect(customEvents(plan)).toEqual(custom ? [custom] : []);
      const status = fixture(`subscription_contracts/${topic}`).status as string;
      expect(eventOf(plan, "customer", "updated")).toEqual({
        referenceId: "1",
        source: "shopify",
        id: "1",
        subscriptions: [expect.objectContaining({ status, plan_interval: "week", plan_interval_count: 4, currency: "CAD" })],
      });
    });
  }

  it("lines become products (brand = vendor, url = the variant's storefront link) and set the plan", () => {
    const plan = run("subscription_contracts/update", {
      ...fixture("subscription_contracts/update"),
      lines: [
        {
          id: "gid://shopify/SubscriptionLine/abc",
          title: "Coffee beans",
          product_id: 77,
          variant_id: 78,
          vendor: "Roastery",
          quantity: 2,
          current_price: { amount: "12.50", currency_code: "CAD" },
          selling_plan_id: 91,
          selling_plan_name: "Delivered every 4 weeks",
        },
      ],
    });
    expect(eventOf(plan, "subscription", "updated").products).toEqual([
      { id: "77", name: "Coffee beans", url: "https://shop.example.com/variants/78", brand: "Roastery", variant_id: "78", price: 12.5, quantity: 2 },
    ]);
    expect(eventOf(plan, "customer", "updated").subscriptions[0]).toMatchObject({
      plan_id: "91",
      plan_name: "Delivered every 4 weeks",
      plan_amount: 25,
      status: "active",
    });
  });

  it("create → pause → activate → pause → cancel: every state change is sent, a repeat is not", () => {
    const contract = (topic: string, status: string) => ({ topic: `subscription_contracts/${topic}`, body: { ...fixture("subscription_contracts/create"), status } });
    const plans = runSequence([
      contract("create", "active"),
      contract("pause", "paused"),
      contract("pause", "paused"),
      contract("activate", "active"),
      contract("pause", "paused"),
      contract("cancel", "cancelled"),
    ]);
    expect(plans.map((p) => [...ops(p).filter((o) => o !== "event.custom"), ...customEvents(p)])).toEqual([
      ["subscription/created", "customer/updated"],
      ["subscription/updated", "customer/updated", "subscription_paused"],
      [],
      ["subscription/updated", "customer/updated", "subscription_resumed"],
      ["subscription/updated", "customer/updated", "subscription_paused"],
      ["subscription/cancelled", "customer/updated"],
    ]);
    expect(eventOf(plans[5], "customer", "updated").subscriptions).toEqual([
      expect.objectContaining({ status: "cancelled", canceled_at: NOW.toISOString(), end_date: NOW.toISOString() }),
    ]);
  });

  it("a status change reported by subscription_contracts/update is the state it reaches", () => {
    const plans = runSequence([
      { topic: "subscription_contracts/create", body: fixture("subscription_contracts/create") },
      { topic: "subscription_contracts/update", body: { ...fixture("subscription_contracts/create"), status: "paused" } },
      { topic: "subscription_contracts/pause", body: { ...fixture("subscription_contracts/create"), status: "paused" } },
    ]);
    expect(customEvents(plans[1])).toEqual(["subscription_paused"]);
    expect(plans[2].calls).toEqual([]);
  });

  it("billing attempts: every renewal and every failed payment is sent, a redelivery is not", () => {
    const attempt = (topic: string, key: string) => ({ topic: `subscription_billing_attempts/${topic}`, body: { ...fixture(`subscription_billing_attempts/${topic}`), subscription_contract_id: 7103183873, admin_graphql_api_subscription_contract_id: null, idempotency_key: key } });
    const plans = runSequence([
      { topic: "subscription_contracts/create", body: fixture("subscription_contracts/create") },
      attempt("success", "a"),
      attempt("success", "a"),
      attempt("success", "b"),
      attempt("failure", "c"),
      attempt("challenged", "d"),
    ]);
    expect(plans.slice(1).map(ops)).toEqual([["subscription/renewed"], [], ["subscription/renewed"], ["subscription/renewal_failed"], ["subscription/renewal_failed"]]);
    expect(eventOf(plans[1], "subscription", "renewed")).toEqual({
      referenceId: "1",
      source: "shopify",
      id: "7103183873",
      url: "https://shop.example.com/account",
      currency: "CAD",
    });
  });

  it("a skipped billing cycle is a subscription_skipped custom event", () => {
    const plans = runSequence([
      { topic: "subscription_contracts/create", body: fixture("subscription_contracts/create") },
      { topic: "subscription_billing_cycles/skip", body: { ...fixture("subscription_billing_cycles/skip"), subscription_contract_id: 7103183873 } },
    ]);
    const custom = plans[1].calls[0];
    expect(custom.op === "event.custom" && custom.body).toEqual({
      referenceId: "1",
      source: "shopify",
      eventName: "subscription_skipped",
      properties: {
        subscription_id: "7103183873",
        cycle_index: 1,
        cycle_start_at: "2022-10-01T04:00:00.000Z",
        cycle_end_at: "2022-11-01T04:00:00.000Z",
        billing_date: "2022-11-01T04:00:00.000Z",
      },
    });
  });

  it("a billing attempt of a contract never seen is skipped with the reason", () => {
    const plan = run("subscription_billing_attempts/success", fixture("subscription_billing_attempts/success"));
    expect(plan).toMatchObject({ calls: [], skipped: expect.stringMatching(/not synced yet/) });
  });

  it("the customer event lists the customer's other contracts too, in id order", () => {
    const other = { kind: "subscription" as const, customerId: "1", status: "paused", currency: "CAD", interval: "month", intervalCount: 1, amount: null, planId: null, planName: null, startedAt: null, endedAt: null, cancelledAt: null, changes: 1 };
    const plan = run("subscription_contracts/create", fixture("subscription_contracts/create"), makeCtx({ customerSubscriptions: [{ id: "99999999999", state: other }] }));
    expect(eventOf(plan, "customer", "updated").subscriptions.map((s: Json) => s.status)).toEqual(["active", "paused"]);
    const customer = run("customers/update", fixture("customers/update"), makeCtx({ customerSubscriptions: [{ id: "5", state: other }] }));
    expect(eventOf(customer, "customer", "updated").subscriptions).toEqual([{ plan_interval: "month", plan_interval_count: 1, status: "paused", currency: "CAD" }]);
  });

  it("a contract naming no customer is skipped", () => {
    const plan = planWebhook("subscription_contracts/create", { id: 5, customer_id: null, admin_graphql_api_customer_id: null }, makeCtx({ now: NOW }));
    expect(plan.calls).toEqual([]);
  });
});

describe("unhandled topics", () => {
  it("plan nothing with a reason", () => {
    const plan = planWebhook("inventory_levels/update", { anything: true }, makeCtx());
    expect(plan).toMatchObject({ calls: [], nextState: null, skipped: "topic inventory_levels/update is not synced" });
  });
});
