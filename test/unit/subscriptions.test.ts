/**
 * Subscription contracts, billing attempts and skipped cycles, per delivery: which state the
 * service is told of (docs/event-mapping.md, Subscription states), what the customer's
 * subscriptions[] says, and what makes a delivery a new occurrence. Shopify's samples
 * (test/fixtures/shopify-webhooks/subscription_*.json: contract 7103183873 of customer 1, CAD,
 * billed every 4 weeks, no lines and no dates).
 */
import { describe, expect, it } from "vitest";
import type { ObjectSyncState, SubscriptionSyncState, SyncPlan } from "../../app/sync/plan-contract";
import {
  customerSubscriptions,
  mapSubscription,
  SUBSCRIPTION_TOPICS,
  subscriptionStateOfTopic,
  subscriptionUrl,
} from "../../app/sync/mappers/subscriptions";
import { subscriptionContractPayload } from "../../app/sync/payloads";
import { eventOf, fixture, makeCtx, NOW, ops, run, type Json } from "../sync/fixtures";

const AT = NOW.toISOString();
const contract = (over: Record<string, Json> = {}) => ({ ...fixture("subscription_contracts/create"), ...over });
const state = (over: Partial<SubscriptionSyncState> = {}): SubscriptionSyncState => ({
  kind: "subscription",
  customerId: "1",
  status: "active",
  currency: "CAD",
  interval: "week",
  intervalCount: 4,
  amount: null,
  planId: null,
  planName: null,
  startedAt: null,
  endedAt: null,
  cancelledAt: null,
  changes: 0,
  ...over,
});
const customEvents = (plan: SyncPlan) => plan.calls.flatMap((c) => (c.op === "event.custom" ? [c.body] : [])) as Json[];
const subscriptionsOf = (plan: SyncPlan) => eventOf(plan, "customer", "updated").subscriptions as Json[];
const line = (over: Record<string, Json> = {}) => ({ id: 11, title: "Coffee", product_id: 77, variant_id: 78, quantity: 2, current_price: "12.50", ...over });

describe("the subscription topics", () => {
  it("are every contract, billing attempt and skipped-cycle topic, each mapped to its state", () => {
    expect([...SUBSCRIPTION_TOPICS].sort()).toEqual([
      "subscription_billing_attempts/challenged",
      "subscription_billing_attempts/failure",
      "subscription_billing_attempts/success",
      "subscription_billing_cycles/skip",
      "subscription_contracts/activate",
      "subscription_contracts/cancel",
      "subscription_contracts/create",
      "subscription_contracts/expire",
      "subscription_contracts/fail",
      "subscription_contracts/pause",
      "subscription_contracts/update",
    ]);
    expect(SUBSCRIPTION_TOPICS.map(subscriptionStateOfTopic)).toEqual(
      SUBSCRIPTION_TOPICS.map((t) =>
        ({
          "subscription_billing_attempts/challenged": "renewal_failed",
          "subscription_billing_attempts/failure": "renewal_failed",
          "subscription_billing_attempts/success": "renewed",
          "subscription_billing_cycles/skip": "skipped",
          "subscription_contracts/activate": "resumed",
          "subscription_contracts/cancel": "cancelled",
          "subscription_contracts/create": "created",
          "subscription_contracts/expire": "expired",
          "subscription_contracts/fail": "failed",
          "subscription_contracts/pause": "paused",
          "subscription_contracts/update": "updated",
        })[t],
      ),
    );
    expect(subscriptionStateOfTopic("orders/create")).toBeUndefined();
  });

  it("link the customer's account page, without a doubled slash", () => {
    expect(subscriptionUrl("https://shop.example.com//")).toBe("https://shop.example.com/account");
    expect(subscriptionUrl("https://shop.example.com")).toBe("https://shop.example.com/account");
  });
});

describe("a contract webhook", () => {
  it("of a new contract: subscription/created and the customer's subscriptions[], remembered", () => {
    const plan = run("subscription_contracts/create", contract());
    expect(plan.objectKey).toBe("subscription:7103183873");
    expect(plan.objectUpdatedAt).toBeNull();
    expect(plan.calls).toEqual([
      { op: "event", type: "subscription", action: "created", body: { referenceId: "1", source: "shopify", id: "7103183873", url: "https://shop.example.com/account", currency: "CAD" } },
      {
        op: "event",
        type: "customer",
        action: "updated",
        body: { referenceId: "1", source: "shopify", id: "1", subscriptions: [{ plan_interval: "week", plan_interval_count: 4, status: "active", currency: "CAD", start_date: AT }] },
      },
    ]);
    expect(plan.nextState).toEqual(state({ startedAt: AT, changes: 1 }));
    expect(plan.occurrence).toBe("status:1:active");
  });

  it("of each status reports the state it reaches, by action or by a custom event beside subscription/updated", () => {
    const cases: Array<[string, string, string, string | null]> = [
      ["pause", "paused", "subscription/updated", "subscription_paused"],
      ["activate", "active", "subscription/updated", "subscription_resumed"],
      ["cancel", "cancelled", "subscription/cancelled", null],
      ["expire", "expired", "subscription/expired", null],
      ["fail", "failed", "subscription/updated", "subscription_failed"],
    ];
    for (const [topic, status, action, custom] of cases) {
      const plan = run(`subscription_contracts/${topic}`, contract({ status }), makeCtx({ prior: state({ status: "other", changes: 3 }) }));
      expect(ops(plan), topic).toEqual(custom ? [action, "event.custom", "customer/updated"] : [action, "customer/updated"]);
      expect(customEvents(plan).map((b) => b.eventName)).toEqual(custom ? [custom] : []);
      expect(plan.occurrence).toBe(`status:4:${status}`);
    }
  });

  it("whose status changed is the state reached, whatever topic reported it; an unknown status keeps the topic's", () => {
    const reached = (topic: string, status: string | null, prior: string | null) =>
      ops(run(`subscription_contracts/${topic}`, contract({ status }), makeCtx({ prior: state({ status: prior }) })));
    expect(reached("update", "paused", "active")).toEqual(["subscription/updated", "event.custom", "customer/updated"]);
    expect(reached("update", "cancelled", "active")).toEqual(["subscription/cancelled", "customer/updated"]);
    expect(reached("activate", "expired", "paused")).toEqual(["subscription/expired", "customer/updated"]);
    expect(reached("pause", "on_hold", "active")).toEqual(["subscription/updated", "event.custom", "customer/updated"]);
    // The status did not change (or is unknown on one side): the topic speaks.
    expect(reached("update", "paused", "paused")).toEqual(["subscription/updated", "customer/updated"]);
    expect(reached("cancel", "active", null)).toEqual(["subscription/cancelled", "customer/updated"]);
    expect(reached("cancel", null, null)).toEqual(["subscription/cancelled", "customer/updated"]);
    // A creation is a creation even when it reports a status the contract had.
    expect(reached("create", "paused", "active")).toEqual(["subscription/created", "customer/updated"]);
  });

  it("of a topic it does not know reports an update", () => {
    const s = subscriptionContractPayload.parse(contract({ status: "paused" }));
    expect(ops(mapSubscription("subscription_contracts/unknown", s, makeCtx({ prior: state({ status: "paused" }) })))).toEqual(["subscription/updated", "customer/updated"]);
  });

  it("tells the custom event the contract, its status and its billing interval", () => {
    const plan = run("subscription_contracts/pause", contract({ status: "paused" }), makeCtx({ settings: { source: "web-shop" } }));
    expect(customEvents(plan)).toEqual([
      { referenceId: "1", source: "web-shop", eventName: "subscription_paused", properties: { subscription_id: "7103183873", status: "paused", plan_interval: "week", plan_interval_count: 4, occurred_at: expect.any(String) } },
    ]);
  });

  it("without a status change is no new occurrence and keeps the change count", () => {
    const plan = run("subscription_contracts/update", contract(), makeCtx({ prior: state({ changes: 2, startedAt: "2026-01-01T00:00:00.000Z" }) }));
    expect(plan.occurrence).toBeUndefined();
    expect(plan.nextState).toMatchObject({ changes: 2, startedAt: "2026-01-01T00:00:00.000Z" });
    const noStatus = run("subscription_contracts/update", contract({ status: null }), makeCtx({ prior: state({ status: "paused", changes: 2 }) }));
    expect(noStatus.nextState).toMatchObject({ status: "paused", changes: 2 });
    expect(noStatus.occurrence).toBeUndefined();
  });

  it("lines become products: ids, names, links, images and prices with their fallbacks", () => {
    const plan = run(
      "subscription_contracts/update",
      contract({
        lines: [
          line({ vendor: "Roastery", variant_image: "https://cdn.example/a.jpg", current_price: { amount: "12.50", currency_code: "CAD" } }),
          line({ product_id: null, title: null, variant_title: "Large", variant_id: null, quantity: 1, current_price: "3.00", variant_image: { src: "https://cdn.example/b.jpg" } }),
          line({ id: null, product_id: null, title: null, variant_title: null, current_price: null, variant_image: { src: null }, quantity: null }),
        ],
      }),
    );
    expect(eventOf(plan, "subscription", "updated").products).toEqual([
      { id: "77", name: "Coffee", url: "https://shop.example.com/variants/78", brand: "Roastery", variant_id: "78", image_url: "https://cdn.example/a.jpg", price: 12.5, quantity: 2 },
      { id: "11", name: "Large", image_url: "https://cdn.example/b.jpg", price: 3, quantity: 1 },
      { id: "line-3", name: "Subscription item", url: "https://shop.example.com/variants/78", variant_id: "78" },
    ]);
  });

  it("bills Σ price × quantity per cycle, exactly; nothing when a line lacks either", () => {
    const amountOf = (lines: Json[], prior: ObjectSyncState | null = null) =>
      (run("subscription_contracts/update", contract({ lines }), makeCtx({ prior })).nextState as SubscriptionSyncState).amount;
    expect(amountOf([line({ current_price: "0.10", quantity: 3 }), line({ current_price: { amount: "0.20" }, quantity: 1 })])).toBe(0.5);
    expect(amountOf([line({ current_price: "1000", quantity: 3 })])).toBe(3000);
    expect(amountOf([line(), line({ current_price: null })])).toBeNull();
    expect(amountOf([line(), line({ quantity: null })])).toBeNull();
    expect(amountOf([line(), line({ current_price: { amount: null } })])).toBeNull();
    expect(amountOf([])).toBeNull();
    // What the payload does not tell, the contract's memory does.
    expect(amountOf([], state({ amount: 42 }))).toBe(42);
    expect(amountOf([line({ current_price: "1", quantity: 1 })], state({ amount: 42 }))).toBe(1);
  });

  it("in yen bills whole yen", () => {
    const plan = run("subscription_contracts/update", contract({ currency_code: "JPY", lines: [line({ current_price: "1500", quantity: 2 })] }));
    expect(subscriptionsOf(plan)[0]).toMatchObject({ plan_amount: 3000, currency: "JPY" });
    expect(eventOf(plan, "subscription", "updated").products[0].price).toBe(1500);
  });

  it("takes its plan from the first line that has one", () => {
    const plan = run(
      "subscription_contracts/update",
      contract({ lines: [line(), line({ selling_plan_name: "Monthly" }), line({ selling_plan_id: 92, selling_plan_name: "Weekly" })] }),
    );
    expect(subscriptionsOf(plan)[0]).toMatchObject({ plan_name: "Monthly" });
    expect(subscriptionsOf(plan)[0]).not.toHaveProperty("plan_id");
    const byId = run("subscription_contracts/update", contract({ lines: [line({ selling_plan_id: 91 })] }), makeCtx({ prior: state({ planName: "Old" }) }));
    expect(subscriptionsOf(byId)[0]).toMatchObject({ plan_id: "91", plan_name: "Old" });
  });

  it("falls back, field by field, on what was remembered of the contract, then the shop", () => {
    const prior = state({ customerId: "9", status: "paused", currency: "EUR", interval: "month", intervalCount: 2, amount: 30, planId: "5", planName: "Plan", startedAt: "2025-01-01T00:00:00.000Z" });
    const bare = { id: 7103183873, status: null, lines: [] };
    const plan = run("subscription_contracts/update", bare, makeCtx({ prior }));
    expect(plan.nextState).toEqual(prior);
    expect(eventOf(plan, "subscription", "updated")).toMatchObject({ referenceId: "9", currency: "EUR" });
    expect(eventOf(plan, "subscription", "updated")).not.toHaveProperty("products");
    const shopCurrency = run("subscription_contracts/update", { ...bare, customer_id: 3 }, makeCtx({ currency: "GBP" }));
    expect(shopCurrency.nextState).toMatchObject({ customerId: "3", currency: "GBP", status: null, interval: null, intervalCount: null, startedAt: null, changes: 0 });
    const none = run("subscription_contracts/update", { ...bare, customer_id: 3 }, makeCtx({ currency: undefined }));
    expect(none.nextState).toMatchObject({ currency: null });
    expect(eventOf(none, "subscription", "updated")).not.toHaveProperty("currency");
  });

  it("dates the start by the contract's creation, else the first planning of a creation", () => {
    const startOf = (topic: string, over: Record<string, Json>, prior: ObjectSyncState | null = null) =>
      (run(`subscription_contracts/${topic}`, contract(over), makeCtx({ prior })).nextState as SubscriptionSyncState).startedAt;
    expect(startOf("create", { created_at: "2026-02-01T00:00:00Z" })).toBe("2026-02-01T00:00:00.000Z");
    expect(startOf("create", { updated_at: "2026-03-01T00:00:00Z" })).toBe("2026-03-01T00:00:00.000Z");
    expect(startOf("update", {})).toBeNull();
    expect(startOf("update", { created_at: "2026-02-01T00:00:00Z" }, state({ startedAt: "2025-12-01T00:00:00.000Z" }))).toBe("2025-12-01T00:00:00.000Z");
  });

  it("dates the end (and the cancellation) when the contract ended, and keeps the first date on a repeat", () => {
    const at = "2026-04-02T00:00:00.000Z";
    const cancelled = run("subscription_contracts/cancel", contract({ status: "cancelled", updated_at: at }), makeCtx({ prior: state() }));
    expect(cancelled.objectUpdatedAt).toBe(at);
    expect(subscriptionsOf(cancelled)[0]).toMatchObject({ status: "cancelled", end_date: at, canceled_at: at });
    const repeat = run("subscription_contracts/cancel", contract({ status: "cancelled" }), makeCtx({ prior: state({ status: "cancelled", endedAt: "2026-01-01T00:00:00.000Z", cancelledAt: "2026-01-02T00:00:00.000Z" }) }));
    expect(repeat.nextState).toMatchObject({ endedAt: "2026-01-01T00:00:00.000Z", cancelledAt: "2026-01-02T00:00:00.000Z" });
    const unknownWhen = run("subscription_contracts/cancel", contract({ status: "cancelled" }), makeCtx({ prior: state({ status: "cancelled" }) }));
    expect(unknownWhen.nextState).toMatchObject({ endedAt: AT, cancelledAt: AT });
    for (const status of ["expired", "failed"]) {
      const ended = run("subscription_contracts/update", contract({ status }), makeCtx({ prior: state() })).nextState;
      expect(ended, status).toMatchObject({ endedAt: AT, cancelledAt: null });
    }
    const resumed = run("subscription_contracts/activate", contract(), makeCtx({ prior: state({ status: "paused", endedAt: AT, cancelledAt: AT }) }));
    expect(resumed.nextState).toMatchObject({ endedAt: null, cancelledAt: null });
    const paused = run("subscription_contracts/pause", contract({ status: "paused" }), makeCtx({ prior: state() }));
    expect(paused.nextState).toMatchObject({ endedAt: null, cancelledAt: null });
  });

  it("naming no customer (now or before) sends nothing, says why, and still remembers the contract", () => {
    const plan = run("subscription_contracts/create", contract({ customer_id: null, admin_graphql_api_customer_id: null }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("subscription contract names no customer");
    expect(plan.objectKey).toBe("subscription:7103183873");
    expect(plan.nextState).toMatchObject({ kind: "subscription", customerId: null, status: "active" });
    const known = run("subscription_contracts/update", contract({ customer_id: null, admin_graphql_api_customer_id: null }), makeCtx({ prior: state({ customerId: "8" }) }));
    expect(eventOf(known, "subscription", "updated").referenceId).toBe("8");
  });
});

describe("the customer's subscriptions[]", () => {
  it("lists every known contract of the customer, shortest (oldest) id first, this one as it is now", () => {
    const others = [
      { id: "100", state: state({ status: "a" }) },
      { id: "9", state: state({ status: "b" }) },
      { id: "11", state: state({ status: "c" }) },
      { id: "7103183873", state: state({ status: "stale" }) },
      { id: "12", state: state({ status: "d" }) },
    ];
    const plan = run("subscription_contracts/update", contract(), makeCtx({ customerSubscriptions: others }));
    expect(subscriptionsOf(plan).map((s) => s.status)).toEqual(["b", "c", "d", "a", "active"]);
    expect(customerSubscriptions(makeCtx({ customerSubscriptions: [others[3], others[2], others[4]] }))?.map((s) => s.status)).toEqual(["c", "d", "stale"]);
  });

  it("orders contracts of one id length by their ids, whatever order they were read in", () => {
    const ids = ["51", "17", "93", "20", "88", "35", "14", "76", "42", "69"];
    const listed = customerSubscriptions(makeCtx({ customerSubscriptions: ids.map((id) => ({ id, state: state({ status: id }) })) }));
    expect(listed?.map((s) => s.status)).toEqual([...ids].sort());
    const reversed = customerSubscriptions(makeCtx({ customerSubscriptions: [...ids].sort().reverse().map((id) => ({ id, state: state({ status: id }) })) }));
    expect(reversed?.map((s) => s.status)).toEqual([...ids].sort());
  });

  it("shows each contract's plan, amount, status and dates, and nothing unknown", () => {
    const full = state({ planId: "91", planName: "Monthly", amount: 25, startedAt: "2026-01-01T00:00:00.000Z", endedAt: "2026-03-01T00:00:00.000Z", cancelledAt: "2026-02-01T00:00:00.000Z", status: "cancelled" });
    expect(customerSubscriptions(makeCtx({ customerSubscriptions: [{ id: "1", state: full }] }))).toEqual([
      {
        plan_id: "91",
        plan_name: "Monthly",
        plan_interval: "week",
        plan_interval_count: 4,
        plan_amount: 25,
        status: "cancelled",
        currency: "CAD",
        start_date: "2026-01-01T00:00:00.000Z",
        end_date: "2026-03-01T00:00:00.000Z",
        canceled_at: "2026-02-01T00:00:00.000Z",
      },
    ]);
    const bare = state({ status: null, currency: null, interval: null, intervalCount: null });
    expect(customerSubscriptions(makeCtx({ customerSubscriptions: [{ id: "1", state: bare }] }))).toEqual([{}]);
  });

  it("is left out when the customer has no known contract", () => {
    expect(customerSubscriptions(makeCtx())).toBeUndefined();
    expect(customerSubscriptions(makeCtx({ customerSubscriptions: [] }))).toBeUndefined();
    expect(customerSubscriptions(makeCtx(), { id: "1", state: state() })).toHaveLength(1);
  });
});

describe("a billing attempt", () => {
  const attempt = (topic: string, over: Record<string, Json> = {}) => ({ ...fixture(`subscription_billing_attempts/${topic}`), ...over });
  const known = makeCtx({ prior: state({ customerId: "1", currency: "EUR" }) });

  it("that succeeded renews the subscription, once per attempt", () => {
    const plan = run("subscription_billing_attempts/success", attempt("success"), known);
    expect(plan).toEqual({
      objectKey: "subscription:3080947634",
      objectUpdatedAt: null,
      calls: [{ op: "event", type: "subscription", action: "renewed", body: { referenceId: "1", source: "shopify", id: "3080947634", url: "https://shop.example.com/account", currency: "EUR" } }],
      nextState: known.prior,
      occurrence: "subscription_billing_attempts/success:9a453d81-d41d-403e-806f-714dee215ff9",
    });
  });

  it("that failed, or awaits the customer's confirmation, is renewal_failed", () => {
    for (const topic of ["failure", "challenged"]) {
      const plan = run(`subscription_billing_attempts/${topic}`, attempt(topic), known);
      expect(ops(plan)).toEqual(["subscription/renewal_failed"]);
      expect(plan.occurrence).toBe(`subscription_billing_attempts/${topic}:9a453d81-d41d-403e-806f-714dee215ff9`);
    }
  });

  it("is told apart by its id, else its idempotency key, else its order, else the time it arrived", () => {
    const occurrence = (over: Record<string, Json>) => run("subscription_billing_attempts/success", attempt("success", over), known).occurrence;
    expect(occurrence({ id: 55 })).toBe("subscription_billing_attempts/success:55");
    expect(occurrence({ idempotency_key: null })).toBe("subscription_billing_attempts/success:1");
    expect(occurrence({ idempotency_key: null, order_id: null, admin_graphql_api_order_id: null })).toBe(`subscription_billing_attempts/success:${AT}`);
  });

  it("is in the contract's currency, else the shop's", () => {
    const plan = run("subscription_billing_attempts/success", attempt("success"), makeCtx({ prior: state({ currency: null }), currency: "GBP" }));
    expect(eventOf(plan, "subscription", "renewed").currency).toBe("GBP");
  });

  it("of a contract never synced (or synced without a customer) is skipped with the reason", () => {
    for (const prior of [null, state({ customerId: null }), { kind: "cart", created: true } as ObjectSyncState]) {
      const plan = run("subscription_billing_attempts/failure", attempt("failure"), makeCtx({ prior }));
      expect(plan).toEqual({
        objectKey: "subscription:2197742298",
        objectUpdatedAt: null,
        calls: [],
        nextState: prior,
        skipped: "the contract was not synced yet: its customer is unknown",
      });
    }
  });
});

describe("a skipped billing cycle", () => {
  const skip = (over: Record<string, Json> = {}) => ({ ...fixture("subscription_billing_cycles/skip"), ...over });
  const known = makeCtx({ prior: state({ customerId: "1" }) });

  it("is a subscription_skipped custom event, one per cycle", () => {
    const plan = run("subscription_billing_cycles/skip", skip(), known);
    expect(plan).toMatchObject({ objectKey: "subscription:9322892687", objectUpdatedAt: null, nextState: known.prior, occurrence: "skip:1" });
    expect(customEvents(plan)).toEqual([
      {
        referenceId: "1",
        source: "shopify",
        eventName: "subscription_skipped",
        properties: { subscription_id: "9322892687", cycle_index: 1, cycle_start_at: "2022-10-01T04:00:00.000Z", cycle_end_at: "2022-11-01T04:00:00.000Z", billing_date: "2022-11-01T04:00:00.000Z" },
      },
    ]);
  });

  it("without an index is told apart by its start, else the time it arrived", () => {
    expect(run("subscription_billing_cycles/skip", skip({ cycle_index: null }), known).occurrence).toBe("skip:2022-10-01T04:00:00.000Z");
    const bare = run("subscription_billing_cycles/skip", skip({ cycle_index: null, cycle_start_at: null, cycle_end_at: null }), known);
    expect(bare.occurrence).toBe(`skip:${AT}`);
    expect(customEvents(bare)[0].properties).toEqual({ subscription_id: "9322892687", billing_date: "2022-11-01T04:00:00.000Z" });
  });

  it("of a contract never synced is skipped with the reason", () => {
    const plan = run("subscription_billing_cycles/skip", skip());
    expect(plan).toEqual({ objectKey: "subscription:9322892687", objectUpdatedAt: null, calls: [], nextState: null, skipped: "the contract was not synced yet: its customer is unknown" });
  });
});
