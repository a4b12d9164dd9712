import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseShopifyJson } from "../../app/sync/json";
import { InvalidPayloadError, planWebhook } from "../../app/sync/plan-webhook";
import {
  eventOf,
  fixture,
  FIXTURE_DIR,
  makeCtx,
  manyLines,
  nullOut,
  orderBody,
  orderLine,
  ops,
  run,
  runSequence,
  withCurrency,
  type Json,
} from "./fixtures";

describe("order completion rule", () => {
  const paid = orderBody({ financial_status: "paid", updated_at: "2026-04-01T11:00:00Z" });
  const fulfilled = orderBody({ financial_status: "paid", fulfillment_status: "fulfilled", updated_at: "2026-04-02T09:00:00Z" });

  it("paid_and_fulfilled (default): completed once, when both are true", () => {
    const plans = runSequence([
      { topic: "orders/create", body: orderBody() },
      { topic: "orders/paid", body: paid },
      { topic: "orders/updated", body: paid },
      { topic: "orders/fulfilled", body: fulfilled },
      { topic: "orders/updated", body: fulfilled },
    ]);
    expect(plans.map(ops)).toEqual([
      ["order/created"],
      ["order/updated"],
      [], // identical order/updated after orders/paid is dropped
      ["order/updated", "order/completed"],
      [],
    ]);
    expect(eventOf(plans[3], "order", "completed")).toMatchObject({ id: "4242", status: "completed", total: 59.97, occurred_at: "2026-04-02T09:00:00.000Z" });
    expect(plans[4].nextState).toMatchObject({ paid: true, fulfilled: true, completed: true });
  });

  it("paid: completes on payment", () => {
    const ctx = makeCtx({ settings: { orderCompletedOn: "paid" } });
    const [, p] = runSequence([{ topic: "orders/create", body: orderBody() }, { topic: "orders/paid", body: paid }], ctx);
    expect(ops(p)).toEqual(["order/updated", "order/completed"]);
  });

  it("fulfilled: completes on fulfilment even if unpaid", () => {
    const ctx = makeCtx({ settings: { orderCompletedOn: "fulfilled" } });
    const unpaidFulfilled = orderBody({ fulfillment_status: "fulfilled" });
    expect(ops(run("orders/fulfilled", unpaidFulfilled, ctx))).toEqual(["order/created", "order/completed"]);
  });

  it("paid flag is sticky: fulfilled after a partial refund still completes", () => {
    const [, later] = runSequence([
      { topic: "orders/paid", body: paid },
      { topic: "orders/fulfilled", body: orderBody({ financial_status: "partially_refunded", fulfillment_status: "fulfilled", updated_at: "2026-04-03T09:00:00Z" }) },
    ]);
    expect(ops(later)).toContain("order/completed");
  });

  it("cancelled, voided or refunded orders never complete", () => {
    expect(ops(run("orders/fulfilled", orderBody({ financial_status: "refunded", fulfillment_status: "fulfilled" })))).toEqual(["order/created"]);
    expect(ops(run("orders/cancelled", { ...fulfilled, cancelled_at: "2026-04-03T00:00:00Z" }))).toEqual(["order/updated"]);
  });

  it("orders/create already paid and fulfilled (POS) → created + completed", () => {
    expect(ops(run("orders/create", fulfilled))).toEqual(["order/created", "order/completed"]);
  });

  it("a historical order first seen complete via orders/updated is not completed now (nor later)", () => {
    const done = orderBody({ financial_status: "paid", fulfillment_status: "fulfilled", tags: "archived" });
    const [first, second] = runSequence([
      { topic: "orders/updated", body: done },
      { topic: "orders/fulfilled", body: { ...done, fulfillment_status: "fulfilled", phone: "+15550100" } },
    ]);
    expect(ops(first)).toEqual(["order/updated"]);
    expect(first.skipped).toMatch(/already complete/);
    expect(ops(second)).toEqual(["order/updated"]);
    expect(eventOf(second, "order", "updated").phone).toBe("+15550100");
  });

  it("digital-only orders count as fulfilled once paid", () => {
    const digital = orderBody({ financial_status: "paid", line_items: [orderLine(1, "5.00", 1, { requires_shipping: false })], total_price: "5.00" });
    expect(ops(run("orders/paid", digital))).toEqual(["order/created", "order/completed"]);
  });

  it("orders/paid overtaking orders/create announces the order once", () => {
    const [first, second, third] = runSequence([
      { topic: "orders/paid", body: paid },
      { topic: "orders/create", body: orderBody() },
      { topic: "orders/updated", body: orderBody({ financial_status: "paid", note: "gift" }) },
    ]);
    expect(ops(first)).toEqual(["order/created"]);
    expect(ops(second)).not.toContain("order/created");
    expect(ops(third)).not.toContain("order/created");
  });

  it("orders/cancelled sends status cancelled", () => {
    const body = eventOf(run("orders/cancelled", orderBody({ cancelled_at: "2026-04-03T00:00:00Z" })), "order", "updated");
    expect(body.status).toBe("cancelled");
    expect(body.occurred_at).toBe("2026-04-03T00:00:00.000Z");
  });
});

describe("order variations", () => {
  it("exact money: 19.99 × 3 = 59.97, totals and discounts per line", () => {
    const body = eventOf(
      run(
        "orders/create",
        orderBody({
          line_items: [
            orderLine(1, "19.99", 3),
            orderLine(2, "0.10", 3, { discount_allocations: [{ amount: "0.05" }], tax_lines: [{ price: "0.01" }, { price: "0.02" }] }),
          ],
          total_price: "60.22",
        }),
      ),
      "order",
      "created",
    );
    expect(body.products[0]).toMatchObject({ price: 19.99, quantity: 3, total: 59.97, discounts: 0 });
    expect(body.products[1]).toMatchObject({ price: 0.1, quantity: 3, total: 0.25, discounts: 0.05, taxes: 0.03 });
    expect(body.total).toBe(60.22);
  });

  it("zero-decimal currency JPY: '1500' → 1500, '1500.00' → 1500", () => {
    const jpy = withCurrency(orderBody({ line_items: [orderLine(1, "1500", 2)], total_price: "3000.00", total_tax: "0", total_discounts: "0" }), "JPY");
    const body = eventOf(run("orders/create", jpy), "order", "created");
    expect(body).toMatchObject({ currency: "JPY", total: 3000 });
    expect(body.products[0]).toMatchObject({ price: 1500, total: 3000 });
  });

  it("multi-currency: the shop-currency amounts with the order currency (EUR)", () => {
    const order = withCurrency(Object.assign(fixture("orders/create"), { test: false }), "EUR");
    order.presentment_currency = "CHF";
    const body = eventOf(run("orders/create", order), "order", "created");
    expect(body.currency).toBe("EUR");
    expect(body.total).toBe(414.95); // the sample's current_total_price
  });

  it("three-decimal currency KWD", () => {
    const body = eventOf(run("orders/create", withCurrency(orderBody({ line_items: [orderLine(1, "1.255", 2)], total_price: "2.510" }), "KWD")), "order", "created");
    expect(body.products[0].total).toBe(2.51);
  });

  it("guest order without customer: identified by email", () => {
    const body = eventOf(run("orders/create", orderBody({ customer: null })), "order", "created");
    expect(body.email).toBe("ann@example.com");
    expect(body.referenceId).toBeUndefined();
  });

  it("missing email: identified by the customer id (referenceId), never a number", () => {
    const plan = run("orders/create", orderBody({ email: null, contact_email: null, customer: { id: 99, email: null } }));
    const body = eventOf(plan, "order", "created");
    expect(body.referenceId).toBe("99");
    expect(body.email).toBeUndefined();
  });

  it("invalid email falls back to referenceId", () => {
    const plan = run("orders/create", orderBody({ email: "not an email", customer: { id: 99, email: "also@bad" } }));
    expect(eventOf(plan, "order", "created").referenceId).toBe("99");
  });

  it("no email and no customer: skipped, but abandonment still cancelled", () => {
    const plan = run("orders/create", orderBody({ email: null, customer: null, checkout_token: "chk1", cart_token: "cart1" }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toMatch(/neither an email nor a customer/);
    expect(plan.abandonment).toEqual({ action: "cancel", keys: ["chk1", "cart1"] });
  });

  it("nulls everywhere the schema allows them", () => {
    const messy = nullOut(Object.assign(fixture("orders/create"), { test: false }), [
      "billing_address",
      "shipping_address",
      "phone",
      "order_status_url",
      "total_shipping_price_set",
      "total_tax",
      "total_discounts",
      "payment_gateway_names",
      "note_attributes",
      "shipping_lines",
      "name",
      "tags",
    ]);
    messy.line_items[0].sku = null;
    messy.line_items[0].tax_lines = null;
    messy.line_items[0].discount_allocations = null;
    const body = eventOf(run("orders/create", messy), "order", "created");
    expect(body.billing_address).toBeUndefined();
    expect(body.payment_gateway).toBeUndefined();
    expect(body.publicId).toBe("1234");
    expect(body.products[0].sku).toBeUndefined();
  });

  it("huge ids beyond 2^53 given as raw JSON text stay exact", () => {
    const raw = `{"id": 9007199254740993123, "email": "big@example.com", "name": "#1", "total_price": "1.00",
      "line_items": [{"id": 12345678901234567890, "product_id": 98765432109876543210, "variant_id": 11111111111111111111,
      "name": "Big", "price": "1.00", "quantity": 1}],
      "customer": {"id": 18446744073709551615, "email": null}}`;
    const body = parseShopifyJson(raw);
    const plan = run("orders/create", body);
    expect(plan.objectKey).toBe("order:9007199254740993123");
    const event = eventOf(plan, "order", "created");
    expect(event.id).toBe("9007199254740993123");
    expect(event.products[0]).toMatchObject({ id: "98765432109876543210", variant_id: "11111111111111111111" });
    expect(plan.nextState).toMatchObject({ customerId: "18446744073709551615" });
    // planWebhook also accepts the raw text directly.
    expect(planWebhook("orders/create", raw, makeCtx()).objectKey).toBe("order:9007199254740993123");
  });

  it("250 line items: all mapped, sum exact (250 × 19.99 = 4997.50)", () => {
    const plan = run("orders/create", orderBody({ line_items: manyLines(250), total_price: null }));
    const body = eventOf(plan, "order", "created");
    expect(body.products).toHaveLength(250);
    expect(body.total).toBe(4997.5);
  });

  it("revenue hash from note_attributes `_ls`", () => {
    const body = eventOf(
      run("orders/create", orderBody({ note_attributes: [{ name: "gift", value: "yes" }, { name: "_ls", value: " abc123 " }] })),
      "order",
      "created",
    );
    expect(body._ls).toBe("abc123");
  });

  it("checkout and cart tokens cancel abandonment alongside the order event", () => {
    const plan = run("orders/create", orderBody({ checkout_token: "chk1", cart_token: "cart1" }));
    expect(ops(plan)).toEqual(["order/created"]);
    expect(plan.abandonment).toEqual({ action: "cancel", keys: ["chk1", "cart1"] });
  });

  it("a body that does not validate throws InvalidPayloadError with zod issues", () => {
    try {
      planWebhook("orders/create", { id: 1, total_price: "12,50" }, makeCtx());
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidPayloadError);
      expect((e as InvalidPayloadError).issues[0].path).toEqual(["total_price"]);
    }
    expect(() => planWebhook("orders/create", null, makeCtx())).toThrow(InvalidPayloadError);
    expect(() => planWebhook("orders/create", { email: "x@y.com" }, makeCtx())).toThrow(/id is required/);
  });

  it("a deleted order ignores late updates", () => {
    const [, del, late] = runSequence([
      { topic: "orders/create", body: orderBody() },
      { topic: "orders/delete", body: { id: 4242 } },
      { topic: "orders/updated", body: orderBody() },
    ]);
    expect(ops(del)).toEqual(["order/deleted"]);
    expect(eventOf(del, "order", "deleted").email).toBe("ann@example.com");
    expect(late.calls).toEqual([]);
  });
});

describe("refunds", () => {
  it("partial then full refund; duplicate delivery ignored", () => {
    const refund = (id: number, amount: string) => ({
      id,
      order_id: 4242,
      created_at: "2026-04-05T00:00:00Z",
      refund_line_items: [{ id: id + 1, line_item_id: 1001, quantity: 1, subtotal: amount, total_tax: "0.00", line_item: orderLine(1, "19.99", 3) }],
      transactions: [{ id: id + 2, kind: "refund", status: "success", amount, currency: "USD" }],
    });
    const plans = runSequence([
      { topic: "orders/create", body: orderBody() },
      { topic: "refunds/create", body: refund(1, "19.99") },
      { topic: "refunds/create", body: refund(1, "19.99") },
      { topic: "refunds/create", body: refund(2, "39.98") },
    ]);
    expect(eventOf(plans[1], "order", "updated").status).toBe("partially_refunded");
    const custom = plans[1].calls[0];
    expect(custom.op === "event.custom" && custom.body.properties).toMatchObject({ order_id: "4242", refund_id: "1", amount: 19.99, currency: "USD" });
    expect(plans[2].calls).toEqual([]);
    expect(eventOf(plans[3], "order", "updated").status).toBe("refunded");
    expect(plans[3].nextState).toMatchObject({ refunded: "59.97" });
  });

  it("a refund without a successful money transaction reports nothing and adds nothing; the later money refund counts once", () => {
    const prior = run("orders/create", Object.assign(fixture("orders/create"), { test: false })).nextState;
    for (const transactions of [[], [{ kind: "refund", status: "failure", amount: "75.00" }], [{ kind: "refund", status: "pending", amount: "75.00" }], [{ kind: "sale", status: "success", amount: "75.00" }]]) {
      const plan = run("refunds/create", { ...fixture("refunds/create"), transactions }, makeCtx({ prior }));
      expect(plan.calls).toEqual([]);
      expect(plan.skipped).toMatch(/no money/);
      expect(plan.nextState).toMatchObject({ refunded: "0", refundIds: ["890088186047892319"] });
    }
    const plans = runSequence([
      { topic: "orders/create", body: orderBody() },
      { topic: "refunds/create", body: { id: 1, order_id: 4242, refund_line_items: [{ id: 2, line_item_id: 1001, quantity: 3, subtotal: "59.97", total_tax: "0.00" }], transactions: [] } },
      { topic: "refunds/create", body: { id: 3, order_id: 4242, transactions: [{ id: 4, kind: "refund", status: "success", amount: "59.97", currency: "USD" }] } },
    ]);
    expect(plans[1].calls).toEqual([]);
    expect(plans[1].nextState).toMatchObject({ refunded: "0", refundIds: ["1"] });
    const custom = plans[2].calls[0];
    expect(custom.op === "event.custom" && custom.body.properties).toMatchObject({ refund_id: "3", amount: 59.97, currency: "USD" });
    expect(eventOf(plans[2], "order", "updated").status).toBe("refunded");
    expect(plans[2].nextState).toMatchObject({ refunded: "59.97" });
  });

  describe("money in the shop currency, never the buyer's", () => {
    const variant = (file: string): Json => JSON.parse(readFileSync(path.join(FIXTURE_DIR, "variants", file), "utf8"));
    const eurOrder = orderBody({ id: 31000, currency: "EUR", presentment_currency: "GBP", financial_status: "paid", total_price: "100.00", line_items: [orderLine(1, "84.03", 1)] });
    const refundOf = (body: Json) => {
      const [, plan] = runSequence([{ topic: "orders/create", body: eurOrder }, { topic: "refunds/create", body }]);
      const custom = plan.calls[0];
      return { plan, properties: (custom.op === "event.custom" ? custom.body.properties : {}) as Json };
    };

    it("a full refund paid back in GBP is 100 EUR, refunded, with the lines in EUR", () => {
      const { plan, properties } = refundOf(variant("refunds.create.presentment-gbp.json"));
      expect(properties).toMatchObject({ amount: 100, currency: "EUR", items: [{ line_item_id: "31001", amount: 84.03, taxes: 15.97 }] });
      expect(eventOf(plan, "order", "updated")).toMatchObject({ status: "refunded", currency: "EUR" });
      expect(plan.nextState).toMatchObject({ refunded: "100.00" });
    });

    it("a transaction without a currency is read in the refund's presentment currency", () => {
      const body = variant("refunds.create.presentment-gbp.json");
      body.transactions[0].currency = null;
      expect(refundOf(body).properties).toMatchObject({ amount: 100, currency: "EUR" });
    });

    it("shipping (a shipping line, or else a shipping adjustment) and a refund short of the lines are counted in EUR", () => {
      const eur = (shop: string, pres: string) => ({ shop_money: { amount: shop, currency_code: "EUR" }, presentment_money: { amount: pres, currency_code: "GBP" } });
      const base = variant("refunds.create.presentment-gbp.json");
      const shippingLine = { ...base, refund_shipping_lines: [{ subtotal_amount_set: eur("4.20", "3.61"), tax_amount_set: eur("0.80", "0.69") }], order_adjustments: [{ kind: "shipping_refund", amount: "-4.20", tax_amount: "-0.80", amount_set: eur("-4.20", "-3.61"), tax_amount_set: eur("-0.80", "-0.69") }] };
      expect(refundOf(shippingLine).properties.amount).toBe(105);
      const adjustmentOnly = { ...shippingLine, refund_shipping_lines: [] };
      expect(refundOf(adjustmentOnly).properties.amount).toBe(105);
      const short = { ...base, order_adjustments: [{ kind: "refund_discrepancy", amount: "10.00", tax_amount: "0.00", amount_set: eur("10.00", "8.60"), tax_amount_set: eur("0.00", "0.00") }] };
      const { plan, properties } = refundOf(short);
      expect(properties.amount).toBe(90);
      expect(eventOf(plan, "order", "updated").status).toBe("partially_refunded");
    });

    it("money paid back in GBP with no breakdown in EUR is reported in GBP, not as nothing, and leaves the EUR total alone", () => {
      const body = { id: 77, order_id: 31000, refund_line_items: [], refund_shipping_lines: [], order_adjustments: [], transactions: [{ kind: "refund", status: "success", amount: "25.00", currency: "GBP" }] };
      const { plan, properties } = refundOf(body);
      expect(properties).toMatchObject({ amount: 25, currency: "GBP" });
      expect(eventOf(plan, "order", "updated")).toMatchObject({ status: "partially_refunded", currency: "EUR" });
      expect(plan.nextState).toMatchObject({ refunded: "0.00", refundIds: ["77"] });
    });

    it("refunds in the shop currency are the transactions as paid (USD order, USD refund)", () => {
      const [, plan] = runSequence([
        { topic: "orders/create", body: orderBody() },
        { topic: "refunds/create", body: { id: 9, order_id: 4242, refund_line_items: [{ id: 10, line_item_id: 1001, quantity: 1, subtotal: "19.99", total_tax: "0.00" }], transactions: [{ kind: "refund", status: "success", amount: "15.00", currency: "USD" }] } },
      ]);
      const custom = plan.calls[0];
      expect(custom.op === "event.custom" && custom.body.properties).toMatchObject({ amount: 15, currency: "USD" });
    });
  });
});
