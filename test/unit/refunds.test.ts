import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { OrderSyncState, SyncPlan } from "~/sync/plan-contract";
import { eventOf, fixture, FIXTURE_DIR, makeCtx, NOW, run, type Json } from "../sync/fixtures";

// refunds/create (app/sync/mappers/refunds.ts) as the marketing service receives it: the custom event
// order_refunded (what went back to the buyer) and order/updated (refunded or partially_refunded),
// with the order's remembered state as the only source of the person and the order total.

const ORDER_ID = "820982911946154500";
const order = (over: Partial<OrderSyncState> = {}): OrderSyncState => ({
  kind: "order",
  email: "jon@example.com",
  customerId: "115310627314723950",
  currency: "USD",
  status: "paid",
  total: "404.95",
  refunded: "0",
  refundIds: [],
  paid: true,
  fulfilled: true,
  completed: true,
  created: true,
  deleted: false,
  ...over,
});

/** Shopify's sample refund: five lines (414.95 USD of goods), 75.00 + 10.00 paid back without a currency. */
const sample = (over: Record<string, Json> = {}): Record<string, Json> => ({ ...fixture("refunds/create"), ...over });
const variant = (file: string): Json => JSON.parse(readFileSync(path.join(FIXTURE_DIR, "variants", file), "utf8"));
const refunded = (plan: SyncPlan): Record<string, Json> => {
  const call = plan.calls[0];
  if (call?.op !== "event.custom") throw new Error(`no custom event first in ${JSON.stringify(plan.calls)}`);
  expect(call.body.eventName).toBe("order_refunded");
  return call.body as Record<string, Json>;
};
const money = (amount: string, code: string, pres = amount, presCode = code) => ({
  shop_money: { amount, currency_code: code },
  presentment_money: { amount: pres, currency_code: presCode },
});
const tx = (amount: string, currency: string | null, over: Record<string, Json> = {}) => ({ kind: "refund", status: "success", amount, currency, ...over });

describe("a refund of Shopify's sample order", () => {
  it("reports the money paid back, each line, the note, and the order as partially refunded", () => {
    const plan = run("refunds/create", sample(), makeCtx({ prior: order() }));
    expect(plan.calls).toHaveLength(2);
    const event = refunded(plan);
    expect(event).toMatchObject({ email: "jon@example.com", source: "shopify" });
    expect(event.properties).toMatchObject({
      order_id: ORDER_ID,
      refund_id: "890088186047892319",
      amount: 85,
      currency: "USD",
      note: "Things were damaged",
      occurred_at: "2022-01-01T00:00:00.000Z",
    });
    expect(event.properties.items).toHaveLength(5);
    expect(event.properties.items[0]).toEqual({
      id: "788032119674292900",
      line_item_id: "487817672276298560",
      name: "Aviator sunglasses",
      sku: "SKU2006-001",
      quantity: 1,
      amount: 89.99,
      taxes: 0,
    });
    // A line whose product is gone is named by its line item.
    expect(event.properties.items[1]).toMatchObject({ id: "789012345678901200", name: "Lens Protection Plan (2 Year)" });
    expect(eventOf(plan, "order", "updated")).toEqual({
      email: "jon@example.com",
      source: "shopify",
      id: ORDER_ID,
      occurred_at: "2022-01-01T00:00:00.000Z",
      status: "partially_refunded",
      currency: "USD",
    });
    expect(plan).toMatchObject({ objectKey: `order:${ORDER_ID}`, objectUpdatedAt: null });
    expect(plan.skipped).toBeUndefined();
    expect(plan.nextState).toEqual(order({ refunded: "85.00", refundIds: ["890088186047892319"], status: "partially_refunded" }));
  });

  it("adds to what was refunded before; reaching or passing the total makes the order refunded", () => {
    const status = (refundedBefore: string) => eventOf(run("refunds/create", sample(), makeCtx({ prior: order({ refunded: refundedBefore }) })), "order", "updated").status;
    expect(status("300.00")).toBe("partially_refunded");
    expect(status("319.95")).toBe("refunded");
    expect(status("330.00")).toBe("refunded");
    const plan = run("refunds/create", sample(), makeCtx({ prior: order({ refunded: "319.95", refundIds: ["1"] }) }));
    expect(plan.nextState).toMatchObject({ refunded: "404.95", refundIds: ["1", "890088186047892319"], status: "refunded" });
  });

  it("of an order whose total is unknown is partially refunded", () => {
    const plan = run("refunds/create", sample(), makeCtx({ prior: order({ total: null, refunded: "500.00" }) }));
    expect(eventOf(plan, "order", "updated").status).toBe("partially_refunded");
  });

  it("names the person by the remembered customer id when no email is known, and uses the shop's source", () => {
    const plan = run("refunds/create", sample(), makeCtx({ prior: order({ email: null }), settings: { source: "pos-east" } }));
    expect(refunded(plan)).toMatchObject({ referenceId: "115310627314723950", source: "pos-east" });
    expect(refunded(plan)).not.toHaveProperty("email");
    expect(eventOf(plan, "order", "updated")).toMatchObject({ referenceId: "115310627314723950", source: "pos-east" });
  });

  it("happened when processed, else when created, else when received; a refund without a note has none", () => {
    const at = (over: Record<string, Json>) => refunded(run("refunds/create", sample(over), makeCtx({ prior: order() }))).properties;
    expect(at({ processed_at: null }).occurred_at).toBe("2022-01-01T00:00:00.000Z");
    expect(at({ processed_at: "2026-04-05T10:00:00Z", created_at: "2026-04-04T10:00:00Z" }).occurred_at).toBe("2026-04-05T10:00:00.000Z");
    const bare = at({ processed_at: null, created_at: null, note: null });
    expect(bare.occurred_at).toBe(NOW.toISOString());
    expect(bare).not.toHaveProperty("note");
  });
});

describe("refunds that send nothing", () => {
  it("a refund delivered again is ignored", () => {
    const prior = order({ refundIds: ["890088186047892319"] });
    expect(run("refunds/create", sample(), makeCtx({ prior }))).toEqual({ objectKey: `order:${ORDER_ID}`, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "refund already synced" });
  });

  it("a refund of an order never synced, or synced without a person, says why", () => {
    const skipped = "refund for an order never synced: no person to attach it to";
    expect(run("refunds/create", sample(), makeCtx())).toMatchObject({ calls: [], nextState: null, skipped });
    expect(run("refunds/create", sample(), makeCtx({ prior: { kind: "cart", created: true } }))).toMatchObject({ calls: [], nextState: null, skipped });
    const nobody = order({ email: null, customerId: null });
    expect(run("refunds/create", sample(), makeCtx({ prior: nobody }))).toMatchObject({ calls: [], nextState: nobody, skipped });
  });

  it("a restock-only refund, or one without a successful refund transaction, moves no money; kind and status in any case do", () => {
    const none = (transactions: Json[]) => run("refunds/create", sample({ transactions }), makeCtx({ prior: order() }));
    for (const transactions of [[], [tx("75.00", null, { kind: null })], [tx("75.00", null, { status: null })], [tx("75.00", null, { kind: "void" })], [tx("75.00", null, { status: "error" })]]) {
      const plan = none(transactions);
      expect(plan.calls, JSON.stringify(transactions)).toEqual([]);
      expect(plan.skipped).toBe("refund returned no money (restock only, or no successful refund transaction)");
      expect(plan.nextState).toEqual(order({ refundIds: ["890088186047892319"] }));
    }
    expect(refunded(none([tx("75.00", null, { kind: "REFUND", status: "Success" })])).properties.amount).toBe(75);
    expect(run("refunds/create", variant("refunds.create.restock-only.json"), makeCtx({ prior: order() })).calls).toEqual([]);
  });
});

describe("the currency of a refund", () => {
  it("is the order's; else the refund lines' shop currency; else the shop's", () => {
    const eurLines = sample().refund_line_items.map((l: Json) => ({ ...l, subtotal_set: money(String(l.subtotal), "EUR") }));
    const cur = (prior: OrderSyncState, over: Record<string, Json>, currency?: string) =>
      eventOf(run("refunds/create", sample(over), makeCtx({ prior, currency })), "order", "updated").currency;
    expect(cur(order({ currency: "USD" }), { transactions: [tx("5.00", "USD")] })).toBe("USD");
    expect(cur(order({ currency: null }), { refund_line_items: eurLines, transactions: [tx("5.00", "EUR")] })).toBe("EUR");
    expect(cur(order({ currency: null }), { refund_line_items: [], transactions: [tx("5.00", "JPY")] }, "JPY")).toBe("JPY");
    const unknown = run("refunds/create", sample({ refund_line_items: [{ id: 1, subtotal: "5.00" }], transactions: [tx("5.00", null)] }), makeCtx({ prior: order({ currency: null }), currency: undefined }));
    expect(eventOf(unknown, "order", "updated")).not.toHaveProperty("currency");
    expect(refunded(unknown).properties).toMatchObject({ amount: 5 });
  });

  it("money paid back without a currency, on lines without money sets, is in the shop currency and counts", () => {
    const lines = [{ id: 1, line_item_id: 2, quantity: 1, subtotal: "19.99", total_tax: "1.00", subtotal_set: null, total_tax_set: null }];
    const plan = run("refunds/create", sample({ refund_line_items: lines, transactions: [tx("20.99", null)] }), makeCtx({ prior: order() }));
    expect(refunded(plan).properties).toMatchObject({ amount: 20.99, currency: "USD", items: [{ id: "2", line_item_id: "2", amount: 19.99, taxes: 1 }] });
    expect(plan.nextState).toMatchObject({ refunded: "20.99" });
    const bare = run("refunds/create", sample({ refund_line_items: [], transactions: [tx("20.00", null)] }), makeCtx({ prior: order() }));
    expect(refunded(bare).properties).toMatchObject({ amount: 20, currency: "USD" });
    expect(bare.nextState).toMatchObject({ refunded: "20.00" });
  });

  it("a line without its line item is named by the refund line", () => {
    const plan = run("refunds/create", sample({ refund_line_items: [{ id: 7, line_item_id: null, line_item: null, quantity: 2, subtotal_set: { shop_money: null, presentment_money: null } }] }), makeCtx({ prior: order() }));
    expect(refunded(plan).properties.items).toEqual([{ id: "7", quantity: 2 }]);
  });

  it("a line item without a name is named by its title", () => {
    const line = sample().refund_line_items[0];
    const plan = run("refunds/create", sample({ refund_line_items: [{ ...line, line_item: { ...line.line_item, name: null, title: "Aviators", variant_id: 31700 } }] }), makeCtx({ prior: order() }));
    expect(refunded(plan).properties.items[0]).toMatchObject({ name: "Aviators", variant_id: "31700" });
  });
});

describe("a refund paid back in the buyer's currency (EUR shop, GBP buyer)", () => {
  const eurOrder = order({ currency: "EUR", total: "100.00" });
  const gbp = (over: Record<string, Json> = {}) => ({ ...variant("refunds.create.presentment-gbp.json"), ...over });
  const paidBack = (body: Json) => {
    const plan = run("refunds/create", body, makeCtx({ prior: eurOrder }));
    return { plan, properties: refunded(plan).properties, status: eventOf(plan, "order", "updated").status };
  };

  it("is reported from the refund's own shop-money lines: 100 EUR, refunded", () => {
    const { plan, properties, status } = paidBack(gbp());
    expect(properties).toMatchObject({ amount: 100, currency: "EUR" });
    expect(status).toBe("refunded");
    expect(plan.nextState).toMatchObject({ refunded: "100.00" });
  });

  it("part of it paid back in EUR and part in GBP is still the lines' 100 EUR", () => {
    expect(paidBack(gbp({ transactions: [tx("10.00", "EUR"), tx("77.41", "GBP")] })).properties).toMatchObject({ amount: 100, currency: "EUR" });
  });

  it("lines without shop-money sets count by their legacy amounts", () => {
    const line = gbp().refund_line_items[0];
    const legacy = { ...line, subtotal_set: { shop_money: null, presentment_money: line.subtotal_set.presentment_money }, total_tax_set: null, subtotal: "50.00", total_tax: "9.50" };
    expect(paidBack(gbp({ refund_line_items: [legacy] })).properties).toMatchObject({ amount: 59.5, currency: "EUR", items: [{ amount: 50, taxes: 9.5 }] });
  });

  it("refunded shipping adds, a shipping line without its tax adds its subtotal, and any shortfall is taken off", () => {
    const shipping = [{ subtotal_amount_set: money("4.20", "EUR", "3.61", "GBP"), tax_amount_set: money("0.80", "EUR", "0.69", "GBP") }, { subtotal_amount_set: money("1.00", "EUR"), tax_amount_set: null }];
    const shortfall = { kind: "refund_discrepancy", amount: "10.00", tax_amount: "0.00", amount_set: money("10.00", "EUR"), tax_amount_set: money("0.00", "EUR") };
    const shippingAdjustment = { kind: "shipping_refund", amount: "-6.00", tax_amount: "0.00", amount_set: money("-6.00", "EUR"), tax_amount_set: null };
    expect(paidBack(gbp({ refund_shipping_lines: shipping })).properties.amount).toBe(106);
    // With shipping lines, the shipping adjustment repeats them; any other adjustment still counts.
    expect(paidBack(gbp({ refund_shipping_lines: shipping, order_adjustments: [shippingAdjustment, shortfall] })).properties.amount).toBe(96);
    // Without shipping lines, the shipping adjustment is the shipping refunded.
    expect(paidBack(gbp({ order_adjustments: [shippingAdjustment] })).properties.amount).toBe(106);
    // Adjustments without money sets count by their legacy amounts.
    const legacyShortfall = { kind: "refund_discrepancy", amount: "10.00", tax_amount: "1.00", amount_set: null, tax_amount_set: null };
    const { properties, status } = paidBack(gbp({ order_adjustments: [legacyShortfall] }));
    expect(properties.amount).toBe(89);
    expect(status).toBe("partially_refunded");
  });

  it("with no breakdown in EUR is reported in GBP as paid back, leaving the EUR total alone", () => {
    const freeGift = [{ id: 5, line_item_id: 6, quantity: 1, subtotal_set: money("0.00", "EUR", "0.00", "GBP") }];
    const { plan, properties, status } = paidBack(gbp({ refund_line_items: freeGift, transactions: [tx("3.00", null), tx("5.00", "GBP")] }));
    expect(properties).toMatchObject({ amount: 8, currency: "GBP" });
    expect(status).toBe("partially_refunded");
    expect(plan.nextState).toMatchObject({ refunded: "0.00", status: "partially_refunded" });
  });

  it("with no breakdown and money paid back in two foreign currencies, reports nothing it cannot add up", () => {
    const { properties } = paidBack(gbp({ refund_line_items: [], transactions: [tx("5.00", "GBP"), tx("6.00", "CHF")] }));
    expect(properties).toMatchObject({ amount: 0, currency: "EUR" });
  });
});

describe("a refund of a test order", () => {
  it("sends nothing, whether the order is known as a test order or only the refund's transactions say so", () => {
    const known = run("refunds/create", sample(), makeCtx({ prior: order({ test: true }) }));
    expect(known.calls).toEqual([]);
    expect(known.skipped).toBe("test order");
    expect(known.nextState).toMatchObject({ refundIds: [expect.any(String)] });
    const byGateway = run("refunds/create", sample({ transactions: [tx("10.00", "USD", { test: true })] }), makeCtx({ prior: order() }));
    expect(byGateway.calls).toEqual([]);
    expect(byGateway.skipped).toBe("test order");
    // A real refund of the same order is sent.
    expect(run("refunds/create", sample({ transactions: [tx("10.00", "USD", { test: false })] }), makeCtx({ prior: order() })).calls).toHaveLength(2);
  });
});
