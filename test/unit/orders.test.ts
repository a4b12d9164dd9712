import { describe, expect, it } from "vitest";
import type { OrderSyncState } from "~/sync/plan-contract";
import type { ShopSettings } from "~/sync/settings";
import { eventOf, fixture, makeCtx, NOW, orderBody, orderLine, ops, run, type Json } from "../sync/fixtures";

// Order webhooks (app/sync/mappers/orders.ts) as the marketing service receives them: the order
// events, the state remembered for the next delivery, and the note a merchant sees when nothing is sent.

const known = (over: Partial<OrderSyncState> = {}): OrderSyncState => ({
  kind: "order",
  email: "ann@example.com",
  customerId: "99",
  currency: "USD",
  status: "pending",
  total: "59.97",
  refunded: "0",
  refundIds: [],
  paid: false,
  fulfilled: false,
  completed: false,
  created: true,
  deleted: false,
  ...over,
});

const created = (over: Record<string, Json>) => eventOf(run("orders/create", orderBody(over)), "order", "created");

describe("the order status the service receives", () => {
  it("cancelled first, then refund states, then fulfilment, then payment (case as Shopify sends it or not)", () => {
    const cases: Array<[Record<string, Json>, string]> = [
      [{ financial_status: "paid", fulfillment_status: "fulfilled", cancelled_at: "2026-04-03T00:00:00Z" }, "cancelled"],
      [{ financial_status: "REFUNDED", fulfillment_status: "fulfilled" }, "refunded"],
      [{ financial_status: "Partially_Refunded", fulfillment_status: "fulfilled" }, "partially_refunded"],
      [{ financial_status: "voided", fulfillment_status: "fulfilled" }, "voided"],
      [{ financial_status: "paid", fulfillment_status: "FULFILLED" }, "fulfilled"],
      [{ financial_status: "paid", fulfillment_status: "Partial" }, "partially_fulfilled"],
      [{ financial_status: "Authorized", fulfillment_status: "restocked" }, "authorized"],
      [{ financial_status: null, fulfillment_status: null }, "pending"],
    ];
    for (const [over, status] of cases) expect(created(over).status, JSON.stringify(over)).toBe(status);
  });

  it("orders/cancelled says cancelled even before Shopify stamps cancelled_at, at the time of the update", () => {
    const body = eventOf(run("orders/cancelled", orderBody({ financial_status: "paid", updated_at: "2026-04-04T08:00:00Z" })), "order", "updated");
    expect(body).toMatchObject({ status: "cancelled", occurred_at: "2026-04-04T08:00:00.000Z" });
  });

  it("orders/updated of a cancelled order happened when it was updated, not when it was cancelled", () => {
    const plan = run("orders/updated", orderBody({ cancelled_at: "2026-04-03T00:00:00Z", updated_at: "2026-04-05T00:00:00Z" }), makeCtx({ prior: known() }));
    expect(eventOf(plan, "order", "updated")).toMatchObject({ status: "cancelled", occurred_at: "2026-04-05T00:00:00.000Z" });
  });

  it("without any time, an update or a cancellation happened when it was received", () => {
    for (const topic of ["orders/updated", "orders/cancelled"]) {
      const plan = run(topic, orderBody({ updated_at: null, cancelled_at: null }), makeCtx({ prior: known() }));
      expect(eventOf(plan, "order", "updated").occurred_at).toBe(NOW.toISOString());
    }
  });
});

describe("when an order completes (settings.orderCompletedOn)", () => {
  const completes = (rule: ShopSettings["orderCompletedOn"], over: Record<string, Json>, topic = "orders/updated", prior: OrderSyncState | null = known()) =>
    ops(run(topic, orderBody(over), makeCtx({ prior, settings: { orderCompletedOn: rule } }))).includes("order/completed");
  const paidOnly = { financial_status: "paid" };
  const fulfilledOnly = { financial_status: "pending", fulfillment_status: "fulfilled" };
  const both = { financial_status: "paid", fulfillment_status: "fulfilled" };

  it("each rule needs exactly what it names", () => {
    expect([completes("paid", paidOnly), completes("paid", fulfilledOnly)]).toEqual([true, false]);
    expect([completes("fulfilled", paidOnly), completes("fulfilled", fulfilledOnly)]).toEqual([false, true]);
    expect([completes("paid_and_fulfilled", paidOnly), completes("paid_and_fulfilled", fulfilledOnly), completes("paid_and_fulfilled", both)]).toEqual([false, false, true]);
  });

  it("payment counts in any case Shopify spells it, and a partially refunded order was paid", () => {
    expect(completes("paid", { financial_status: "PAID" })).toBe(true);
    expect(completes("paid", { financial_status: "partially_refunded" })).toBe(true);
    expect(completes("paid", { financial_status: "authorized" })).toBe(false);
    expect(completes("paid", { financial_status: null })).toBe(false);
  });

  it("a refunded order is remembered as paid but never completes; nor does a voided one", () => {
    const plan = run("orders/updated", orderBody({ financial_status: "refunded" }), makeCtx({ prior: known(), settings: { orderCompletedOn: "paid" } }));
    expect(ops(plan)).toEqual(["order/updated"]);
    expect(plan.nextState).toMatchObject({ paid: true, completed: false });
    expect(completes("fulfilled", { financial_status: "voided", fulfillment_status: "fulfilled" })).toBe(false);
    expect(completes("fulfilled", { financial_status: "REFUNDED", fulfillment_status: "fulfilled" })).toBe(false);
  });

  it("a cancelled order never completes, even paid and fulfilled on orders/create", () => {
    expect(completes("paid_and_fulfilled", { ...both, cancelled_at: "2026-04-03T00:00:00Z" }, "orders/create", null)).toBe(false);
  });

  it("fulfilment counts in any case, or when no line needs shipping; a partial fulfilment does not", () => {
    const digital = (...shipping: Array<boolean | null>) => ({ line_items: shipping.map((s, i) => orderLine(i + 1, "5.00", 1, { requires_shipping: s })) });
    expect(completes("fulfilled", { fulfillment_status: "FULFILLED" })).toBe(true);
    expect(completes("fulfilled", { fulfillment_status: "partial" })).toBe(false);
    expect(completes("fulfilled", digital(false, false))).toBe(true);
    expect(completes("fulfilled", digital(false, true))).toBe(false);
    expect(completes("fulfilled", digital(false, null))).toBe(false);
    expect(completes("fulfilled", { line_items: [] })).toBe(false);
  });

  it("payment and fulfilment are remembered across deliveries, and an order completes only once", () => {
    const plan = run("orders/fulfilled", orderBody(fulfilledOnly), makeCtx({ prior: known({ paid: true }) }));
    expect(ops(plan)).toEqual(["order/updated", "order/completed"]);
    expect(eventOf(plan, "order", "completed")).toMatchObject({ status: "completed", occurred_at: "2026-04-01T10:00:00.000Z", email: "ann@example.com" });
    expect(plan.nextState).toMatchObject({ paid: true, fulfilled: true, completed: true, created: true });
    expect(plan.skipped).toBeUndefined();
    const again = run("orders/updated", orderBody({ ...both, note: "again" }), makeCtx({ prior: known({ paid: true, fulfilled: true, completed: true }) }));
    expect(ops(again)).toEqual(["order/updated"]);
    expect(again.nextState).toMatchObject({ completed: true });
  });

  it("completion without updated_at happened when it was received", () => {
    const plan = run("orders/paid", orderBody({ ...both, updated_at: null }), makeCtx({ prior: known() }));
    expect(eventOf(plan, "order", "completed").occurred_at).toBe(NOW.toISOString());
  });

  it("an order first seen complete through orders/updated or orders/cancelled is remembered complete, with a note, and not completed", () => {
    for (const topic of ["orders/updated", "orders/cancelled"]) {
      const plan = run(topic, orderBody({ ...both, cancelled_at: null }), makeCtx());
      expect(ops(plan), topic).toEqual(["order/updated"]);
      expect(plan.skipped).toBe("order was already complete when first seen: order/completed not sent");
      expect(plan.nextState).toMatchObject({ completed: true, created: false });
    }
  });
});

describe("which delivery announces the order", () => {
  it("orders/create, or orders/paid or orders/fulfilled arriving first; orders/updated and orders/cancelled do not", () => {
    for (const topic of ["orders/create", "orders/paid", "orders/fulfilled"]) {
      const plan = run(topic, orderBody(), makeCtx());
      expect(ops(plan), topic).toEqual(["order/created"]);
      expect(plan.nextState, topic).toMatchObject({ created: true });
    }
    for (const topic of ["orders/updated", "orders/cancelled"]) {
      const plan = run(topic, orderBody(), makeCtx());
      expect(ops(plan), topic).toEqual(["order/updated"]);
      expect(plan.nextState, topic).toMatchObject({ created: false });
    }
  });

  it("a late orders/create still announces an order only seen through updates, but never twice", () => {
    expect(ops(run("orders/create", orderBody(), makeCtx({ prior: known({ created: false }) })))).toEqual(["order/created"]);
    expect(ops(run("orders/create", orderBody(), makeCtx({ prior: known() })))).toEqual(["order/updated"]);
    expect(ops(run("orders/paid", orderBody(), makeCtx({ prior: known({ created: false }) })))).toEqual(["order/updated"]);
  });

  it("order/created happened when the order was created, else processed, else when received", () => {
    expect(created({}).occurred_at).toBe("2026-04-01T10:00:00.000Z");
    expect(created({ created_at: null, processed_at: "2026-04-01T09:00:00Z" }).occurred_at).toBe("2026-04-01T09:00:00.000Z");
    expect(created({ created_at: null, processed_at: null }).occurred_at).toBe(NOW.toISOString());
  });
});

describe("who the order belongs to", () => {
  it("the order's email, else the contact email, else the customer's, else the one remembered", () => {
    expect(created({ email: " Ann@Example.COM " }).email).toBe("ann@example.com");
    expect(created({ email: null, contact_email: "cara@example.com" }).email).toBe("cara@example.com");
    expect(created({ email: null, contact_email: null, customer: { id: 99, email: "cust@example.com" } }).email).toBe("cust@example.com");
    const remembered = run("orders/updated", orderBody({ email: null, customer: null }), makeCtx({ prior: known({ email: "old@example.com" }) }));
    expect(eventOf(remembered, "order", "updated").email).toBe("old@example.com");
  });

  it("without any email, the customer id, else the one remembered", () => {
    const plan = run("orders/updated", orderBody({ email: null, customer: null }), makeCtx({ prior: known({ email: null, customerId: "55" }) }));
    expect(eventOf(plan, "order", "updated")).toMatchObject({ referenceId: "55" });
    expect(plan.nextState).toMatchObject({ email: null, customerId: "55" });
  });

  it("an order of nobody sends nothing but remembers payment, fulfilment, status, currency and total for later", () => {
    const plan = run("orders/paid", orderBody({ email: null, customer: null, financial_status: "paid", currency: "EUR", total_price: "12.00" }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("order has neither an email nor a customer: no person to attach it to");
    expect(plan.objectKey).toBe("order:4242");
    expect(plan.objectUpdatedAt).toBe("2026-04-01T10:00:00.000Z");
    expect(plan.nextState).toEqual({
      kind: "order",
      email: null,
      customerId: null,
      currency: "EUR",
      status: "paid",
      total: "12.00",
      refunded: "0",
      refundIds: [],
      paid: true,
      fulfilled: false,
      completed: false,
      created: false,
      deleted: false,
      // Its name, for the admin's rows of its refunds.
      name: "#1001",
    });
    expect(plan.abandonment).toBeUndefined();
  });

  it("a delivery without total or currency keeps the ones remembered", () => {
    const plan = run("orders/updated", orderBody({ total_price: null, currency: null }), makeCtx({ currency: undefined, prior: known({ currency: "EUR", total: "80.00" }) }));
    expect(plan.nextState).toMatchObject({ currency: "EUR", total: "80.00" });
  });
});

describe("the order body", () => {
  it("the public id is the order name, else its number, else absent", () => {
    expect(created({ name: "#1001" }).publicId).toBe("#1001");
    expect(created({ name: null, order_number: 1234 }).publicId).toBe("1234");
    expect(created({ name: null, order_number: null })).not.toHaveProperty("publicId");
  });

  it("shipping is the shop-money shipping total, else the shipping lines still on the order at their discounted price", () => {
    const lines = [
      { price: "10.00", discounted_price: "8.00", is_removed: false },
      { price: "5.00", discounted_price: "5.00", is_removed: true },
      { price: "3.00", discounted_price: null },
    ];
    expect(created({ total_shipping_price_set: { shop_money: { amount: "7.50", currency_code: "USD" } }, shipping_lines: lines }).shipping).toBe(7.5);
    expect(created({ total_shipping_price_set: { shop_money: null }, shipping_lines: lines }).shipping).toBe(11);
    expect(created({ shipping_lines: [{ price: "5.00", is_removed: true }] })).not.toHaveProperty("shipping");
    expect(created({ shipping_lines: [] })).not.toHaveProperty("shipping");
  });

  it("fees are the current additional fees, else the original ones; discounts and taxes as given", () => {
    const set = (amount: string) => ({ shop_money: { amount, currency_code: "USD" } });
    expect(created({ current_total_additional_fees_set: set("2.00"), original_total_additional_fees_set: set("3.00") }).fees).toBe(2);
    expect(created({ current_total_additional_fees_set: null, original_total_additional_fees_set: set("3.00") }).fees).toBe(3);
    expect(created({ current_total_additional_fees_set: { shop_money: null }, original_total_additional_fees_set: set("3.00") }).fees).toBe(3);
    expect(created({ original_total_additional_fees_set: { shop_money: null } })).not.toHaveProperty("fees");
    const plain = created({ total_discounts: "4.50", total_tax: "1.25" });
    expect(plain).not.toHaveProperty("fees");
    expect(plain).toMatchObject({ discounts: 4.5, taxes: 1.25, total: 59.97 });
  });

  it("the phone is the order's, else the billing address's; the gateway is the first one named", () => {
    const billing = { ...fixture("customers/create").default_address, phone: "+15550111" };
    expect(created({ phone: "+15550100", billing_address: billing }).phone).toBe("+15550100");
    const fromBilling = created({ phone: null, billing_address: billing, payment_gateway_names: ["", " ", "visa", "bogus"] });
    expect(fromBilling).toMatchObject({ phone: "+15550111", payment_gateway: "visa", billing_address: { phone: "+15550111" } });
    expect(created({ phone: null, billing_address: null })).not.toHaveProperty("phone");
  });

  it("Shopify's sample order: its status page, addresses, gateway, shipping and shop currency", () => {
    const order = Object.assign(fixture("orders/create"), { test: false });
    const body = eventOf(run("orders/create", { ...order, cancelled_at: null, financial_status: "paid" }), "order", "created");
    expect(body).toMatchObject({
      email: "jon@example.com",
      id: "820982911946154508",
      publicId: "#9999",
      currency: "USD",
      // Shopify's current_* totals (the order as it stands); this sample's differ from its total_price.
      total: 414.95,
      discounts: 0,
      taxes: 0,
      shipping: 0,
      status: "paid",
      url: order.order_status_url,
      payment_gateway: "visa",
      source: "shopify",
    });
    expect(body.shipping_address).toBeDefined();
    expect(body.billing_address).toBeDefined();
  });

  it("the source is the shop's setting", () => {
    expect(eventOf(run("orders/create", orderBody(), makeCtx({ settings: { source: "pos-east" } })), "order", "created").source).toBe("pos-east");
  });
});

describe("abandonment timers an order stops", () => {
  it("its checkout and cart tokens, each once; none when it has no token", () => {
    expect(run("orders/create", orderBody({ checkout_token: "t1", cart_token: "t1" })).abandonment).toEqual({ action: "cancel", keys: ["t1"] });
    expect(run("orders/create", orderBody({ checkout_token: null, cart_token: "c1" })).abandonment).toEqual({ action: "cancel", keys: ["c1"] });
    expect(run("orders/create", orderBody({ checkout_token: " ", cart_token: null }))).not.toHaveProperty("abandonment");
  });

  it("even for an order deleted before, which sends nothing else", () => {
    const prior = known({ deleted: true });
    const plan = run("orders/updated", orderBody({ checkout_token: "t1" }), makeCtx({ prior }));
    expect(plan).toEqual({
      objectKey: "order:4242",
      objectUpdatedAt: "2026-04-01T10:00:00.000Z",
      calls: [],
      nextState: prior,
      skipped: "order was deleted",
      abandonment: { action: "cancel", keys: ["t1"] },
    });
  });
});

describe("orders/delete", () => {
  it("sends order/deleted for the person remembered, by customer id when there was no email", () => {
    const plan = run("orders/delete", { id: 4242 }, makeCtx({ prior: known({ email: null }) }));
    expect(plan.calls).toEqual([{ op: "event", type: "order", action: "deleted", body: { referenceId: "99", source: "shopify", id: "4242", occurred_at: NOW.toISOString() } }]);
    expect(plan).toMatchObject({ objectKey: "order:4242", objectUpdatedAt: null, nextState: known({ email: null, deleted: true }) });
    expect(plan.skipped).toBeUndefined();
  });

  it("of an order never synced sends nothing, says why, and remembers the deletion", () => {
    const plan = run("orders/delete", { id: 4242 }, makeCtx({ prior: { kind: "cart", created: true } }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("order never synced: no person to attach the deletion to");
    expect(plan.nextState).toEqual({ ...known({ email: null, customerId: null, currency: null, status: null, total: null, created: false }), deleted: true });
  });

  it("twice sends nothing the second time", () => {
    const plan = run("orders/delete", { id: 4242 }, makeCtx({ prior: known({ deleted: true }) }));
    expect(plan).toMatchObject({ calls: [], skipped: "already deleted", nextState: known({ deleted: true }), objectUpdatedAt: null });
  });
});

describe("orders/edited", () => {
  const edit = (over: Record<string, Json> = {}) => {
    const p = fixture("orders/edited");
    return { order_edit: { ...p.order_edit, ...over } };
  };
  const orderId = "820982911946154500";

  it("sends a light order/updated with the remembered status and currency, when the edit was committed", () => {
    const prior = known({ status: "paid", currency: "EUR" });
    const plan = run("orders/edited", edit({ committed_at: "2026-04-02T10:00:00Z", created_at: "2026-04-02T09:00:00Z" }), makeCtx({ prior }));
    expect(plan.calls).toEqual([
      { op: "event", type: "order", action: "updated", body: { email: "ann@example.com", source: "shopify", id: orderId, occurred_at: "2026-04-02T10:00:00.000Z", status: "paid", currency: "EUR" } },
    ]);
    expect(plan).toMatchObject({ objectKey: `order:${orderId}`, objectUpdatedAt: null, nextState: prior });
  });

  it("an edit not yet committed happened when it was made, else when received; unknown status and currency are left out", () => {
    const prior = known({ email: null, status: null, currency: null });
    const made = eventOf(run("orders/edited", edit({ committed_at: null, created_at: "2026-04-02T09:00:00Z" }), makeCtx({ prior })), "order", "updated");
    expect(made).toEqual({ referenceId: "99", source: "shopify", id: orderId, occurred_at: "2026-04-02T09:00:00.000Z" });
    expect(eventOf(run("orders/edited", edit({ committed_at: null, created_at: null }), makeCtx({ prior })), "order", "updated").occurred_at).toBe(NOW.toISOString());
  });

  it("of an order never synced, synced without a person, or deleted sends nothing and says why", () => {
    const never = run("orders/edited", edit(), makeCtx());
    expect(never).toMatchObject({ calls: [], nextState: null, skipped: "order never synced: no person to attach the edit to", objectKey: `order:${orderId}` });
    const nobody = known({ email: null, customerId: null });
    expect(run("orders/edited", edit(), makeCtx({ prior: nobody }))).toMatchObject({ calls: [], nextState: nobody, skipped: "order never synced: no person to attach the edit to" });
    const deleted = known({ deleted: true });
    expect(run("orders/edited", edit(), makeCtx({ prior: deleted }))).toMatchObject({ calls: [], nextState: deleted, skipped: "order was deleted", objectUpdatedAt: null });
  });
});

describe("an order after an edit", () => {
  it("sends current quantities, the line's discounts and taxes of what is left, and Shopify's current totals", () => {
    const edited = orderBody({
      line_items: [
        orderLine(1, "10.00", 4, { current_quantity: 1, discount_allocations: [{ amount: "4.00" }], tax_lines: [{ price: "2.00" }] }),
        orderLine(2, "5.00", 1, { current_quantity: 0 }),
      ],
      total_price: "43.00",
      current_total_price: "9.50",
      total_discounts: "4.00",
      current_total_discounts: "1.00",
      total_tax: "2.00",
      current_total_tax: "0.50",
    });
    const body = eventOf(run("orders/create", edited), "order", "created");
    expect(body.products).toEqual([expect.objectContaining({ id: "5001", quantity: 1, total: 9, discounts: 1, taxes: 0.5 })]);
    expect(body).toMatchObject({ total: 9.5, discounts: 1, taxes: 0.5 });
  });
});

describe("a test order (Shopify's test gateway) after it is known as one", () => {
  it("its deletion and its edit send nothing and say it is a test order", () => {
    const prior = run("orders/create", { ...fixture("orders/create"), test: true }).nextState;
    expect(prior).toMatchObject({ test: true, email: expect.any(String) });
    const deleted = run("orders/delete", fixture("orders/delete"), makeCtx({ prior }));
    expect(deleted.calls).toEqual([]);
    expect(deleted.skipped).toBe("test order");
    const edited = run("orders/edited", fixture("orders/edited"), makeCtx({ prior }));
    expect(edited.calls).toEqual([]);
    expect(edited.skipped).toBe("test order");
  });
});

describe("a refund through the test gateway", () => {
  it("of an order never synced sends nothing and says it is a test order's", () => {
    const body = fixture("refunds/create");
    body.transactions = body.transactions.map((t: Json) => ({ ...t, test: true }));
    const plan = run("refunds/create", body);
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("test order");
    expect(plan.nextState).toBeNull();
  });

  it("only when every transaction is a test: one real transaction makes it a real refund", () => {
    const body = fixture("refunds/create");
    body.transactions = [{ ...body.transactions[0], test: true }, { ...body.transactions[1], test: false }];
    expect(run("refunds/create", body).skipped).not.toBe("test order");
  });
});
