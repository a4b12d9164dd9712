/**
 * Golden tests over EVERY documented fixture: each plans without error, every call is accepted by
 * serviceCallSchema, and the values a merchant would notice are what we expect.
 */
import { describe, expect, it } from "vitest";
import { planWebhook } from "../../app/sync/plan-webhook";
import type { ObjectSyncState } from "../../app/sync/plan-contract";
import { eventOf, expectValidCalls, fixture, listFixtures, makeCtx, ops, run, type Json } from "./fixtures";

/** Prior order state so topics whose payload names no person (refund, edit, delete) can map. */
const orderPrior = (): ObjectSyncState => ({
  kind: "order",
  email: "jon@example.com",
  customerId: "115310627314723954",
  currency: "USD",
  status: "paid",
  total: "404.95",
  refunded: "0",
  refundIds: [],
  paid: true,
  fulfilled: false,
  completed: false,
  created: true,
  deleted: false,
});

/** Expected result per fixture topic: the operations planned. */
const EXPECTED_OPS: Record<string, string[]> = {
  "app/scopes_update": [],
  "app/uninstalled": [],
  "bulk_operations/finish": [],
  // Not subscribed: Shopify's 2026-04 cart payload names no person (app/sync/README.md).
  "carts/create": [],
  "carts/update": [],
  "checkouts/create": ["cart/updated"],
  "checkouts/delete": [],
  "checkouts/update": ["cart/updated"],
  "customers/create": ["customer/created"],
  "customers/data_request": [],
  "customers/delete": ["customer/deleted"],
  // A disabled account is not a deleted one.
  "customers/disable": ["user/updated"],
  "customers/enable": ["user/created"],
  "customers/merge": [],
  // Sales totals on the customer event; tags of a customer never seen wait for its contact.
  "customers/purchasing_summary": ["customer/updated"],
  "customer.tags_added": [],
  "customer.tags_removed": [],
  // No segment is mirrored by default; a mirrored one's tag waits for the contact (test/sync/segments.test.ts).
  "customer.joined_segment": [],
  "customer.left_segment": [],
  "customers/redact": [],
  "customers/update": ["customer/updated"],
  "customers_email_marketing_consent/update": [],
  "fulfillments/create": [],
  "fulfillments/update": [],
  // Shopify's order samples are test orders (`test: true`): nothing is sent (REAL_ORDER_OPS below).
  "orders/cancelled": [],
  "orders/create": [],
  "orders/delete": [],
  "orders/edited": [],
  "orders/fulfilled": [],
  "orders/paid": [],
  "orders/partially_fulfilled": [],
  "orders/updated": [],
  "products/create": ["product/created"],
  "products/delete": ["product/deleted"],
  "products/update": ["product/updated"],
  "refunds/create": [],
  "shop/redact": [],
  // Contracts seen for the first time: their state (a custom event where the subscription endpoint
  // has no action) and the customer's subscriptions[]. Billing attempts and skipped cycles of a
  // contract never seen name no customer.
  "subscription_billing_attempts/challenged": [],
  "subscription_billing_attempts/failure": [],
  "subscription_billing_attempts/success": [],
  "subscription_billing_cycles/skip": [],
  "subscription_contracts/activate": ["subscription/updated", "event.custom", "customer/updated"],
  "subscription_contracts/cancel": ["subscription/cancelled", "customer/updated"],
  "subscription_contracts/create": ["subscription/created", "customer/updated"],
  "subscription_contracts/expire": ["subscription/expired", "customer/updated"],
  "subscription_contracts/fail": ["subscription/updated", "event.custom", "customer/updated"],
  "subscription_contracts/pause": ["subscription/updated", "event.custom", "customer/updated"],
  "subscription_contracts/update": ["subscription/updated", "customer/updated"],
};

/** The same order samples as real orders (`test: false`). */
const REAL_ORDER_OPS: Record<string, string[]> = {
  "orders/cancelled": ["order/updated"],
  "orders/create": ["order/created"],
  // First seen through paid/fulfilled (they can overtake orders/create): announced as created.
  "orders/fulfilled": ["order/created"],
  "orders/paid": ["order/created"],
  "orders/partially_fulfilled": ["order/created"],
  "orders/updated": ["order/updated"],
};
const realOrder = (topic: string) => Object.assign(fixture(topic), { test: false });

describe("every fixture, no prior state, default settings", () => {
  for (const [topic, expected] of Object.entries(REAL_ORDER_OPS)) {
    it(`${topic} as a real order → ${JSON.stringify(expected)}; as Shopify's test sample → skipped as a test order`, () => {
      expect(ops(run(topic, realOrder(topic)))).toEqual(expected);
      expect(run(topic, fixture(topic)).skipped).toBe("test order");
    });
  }

  it("covers every fixture file", () => {
    expect(listFixtures().map((f) => f.topic).sort()).toEqual(Object.keys(EXPECTED_OPS).sort());
  });

  for (const { topic } of listFixtures()) {
    it(`${topic} → ${JSON.stringify(EXPECTED_OPS[topic])}`, () => {
      const plan = run(topic, fixture(topic));
      expect(ops(plan)).toEqual(EXPECTED_OPS[topic]);
      if (plan.calls.length === 0) expect(plan.skipped).toBeTruthy();
      for (const call of plan.calls) {
        const body = call.op === "person.delete" ? {} : (call.body as Record<string, unknown>);
        if (call.op !== "person.delete") expect(body.source).toBe("shopify");
      }
    });
  }

  it("each fixture also plans from its raw JSON text", () => {
    for (const { topic, file } of listFixtures()) {
      const fromText = planWebhook(topic, JSON.stringify(fixture(topic)), makeCtx());
      expectValidCalls(fromText);
      expect(fromText.calls.length, file).toBe(EXPECTED_OPS[topic]?.length);
    }
  });
});

describe("golden values", () => {
  it("customers/create: ids come from the gid, not the rounded number", () => {
    const plan = run("customers/create", fixture("customers/create"));
    expect(plan.objectKey).toBe("customer:706405506930370084");
    const body = eventOf(plan, "customer", "created");
    expect(body).toMatchObject({
      email: "bob@biller.com",
      id: "706405506930370084",
      is_contact: false,
      first_name: "Bob",
      last_name: "Biller",
      name: "Bob Biller",
      customer_email: "bob@biller.com",
      currency: "USD",
      address: { address1: "151 O'Connor Street", city: "Ottawa", state: "ON", postal_code: "K2P 2L8", country: "CA" },
    });
    // Sample has no consent object: a non-subscriber is not pushed as a contact by default.
    expect(plan.skipped).toMatch(/non-subscribers/);
  });

  it("orders/create: totals, addresses, gateway, public id, url", () => {
    const plan = run("orders/create", realOrder("orders/create"));
    expect(plan.objectKey).toBe("order:820982911946154508");
    expect(plan.objectUpdatedAt).toBe("2022-01-01T00:00:00.000Z");
    const body = eventOf(plan, "order", "created");
    expect(body).toMatchObject({
      email: "jon@example.com",
      id: "820982911946154508",
      publicId: "#9999",
      currency: "USD",
      // Shopify's current_* totals (the order as it stands); this sample's differ from its total_price.
      total: 414.95,
      shipping: 0,
      discounts: 0,
      taxes: 0,
      status: "cancelled",
      url: "https://jsmith.myshopify.com/548380009/orders/123456abcd/authenticate?key=abcdefg",
      payment_gateway: "visa",
      occurred_at: "2022-01-01T00:00:00.000Z",
      billing_address: {
        first_name: "Steve",
        last_name: "Shipper",
        phone: "555-555-SHIP",
        company: "Shipping Company",
        address1: "123 Shipping Street",
        city: "Shippington",
        state: "Kentucky",
        postal_code: "40003",
        country: "United States",
      },
    });
    expect(body.products).toHaveLength(5);
    expect(body.products[0]).toEqual({
      id: "788032119674292900",
      name: "Aviator sunglasses",
      sku: "SKU2006-001",
      price: 89.99,
      quantity: 1,
      total: 89.99,
      discounts: 0,
    });
    // A custom line item without product falls back to its own (gid) id.
    expect(body.products[1].id).toBe("789012345678901234");
    // Cancelled + voided: never completed.
    expect(ops(plan)).toEqual(["order/created"]);
  });

  it("checkouts/create: cart/updated with recovery url, exact totals, abandonment scheduled", () => {
    const plan = run("checkouts/create", fixture("checkouts/create"));
    expect(plan.objectKey).toBe("checkout:123123123");
    const body = eventOf(plan, "cart", "updated");
    expect(body).toMatchObject({
      email: "example@email.com",
      id: "eeafa272cebfd4b22385bc4b645e762c",
      url: "https://checkout.local/548380009/checkouts/123123123/recover?key=example-secret-token",
      // The lines after their discounts (199 + 199), as a cart webhook's total: tax and shipping
      // (total_price 421.88) are not part of a cart's total.
      total: 398,
      total_products: 2,
      currency: "USD",
    });
    expect(body.products[0]).toMatchObject({ id: "632910392", variant_id: "808950810", price: 199, total: 199, taxes: 11.94 });
    expect(plan.abandonment).toMatchObject({ action: "schedule", key: "123123123" });
  });

  it("checkouts/delete cancels by the tokens it has", () => {
    const plan = run("checkouts/delete", fixture("checkouts/delete"));
    expect(plan.abandonment).toEqual({ action: "cancel", keys: ["eeafa272cebfd4b22385bc4b645e762c", "981820079255243500"] });
  });

  it("products/create: plain description, storefront url, tags, min price, variants", () => {
    const body = eventOf(run("products/create", fixture("products/create")), "product", "created");
    expect(body).toEqual({
      referenceId: "shop:acme.myshopify.com",
      source: "shopify",
      id: "788032119674292922",
      name: "Example T-Shirt",
      description: "An example T-Shirt",
      url: "https://shop.example.com/products/example-t-shirt",
      vendor: "Acme",
      brand: "Acme",
      public_id: "example-t-shirt",
      type: "Shirts",
      tags: ["example", "mens", "t-shirt"],
      categories: ["Shirts"],
      price: 19.99,
      currency: "USD",
      variants: [
        { id: "642667041472713922", price: 19.99, options: ["Small"] },
        { id: "757650484644203962", price: 19.99, options: ["Medium"] },
      ],
      modified_at: "2022-01-01T00:00:00.000Z",
    });
  });

  it("refunds/create with the order's prior state: order_refunded + order/updated", () => {
    const plan = run("refunds/create", fixture("refunds/create"), makeCtx({ prior: orderPrior() }));
    expect(ops(plan)).toEqual(["event.custom", "order/updated"]);
    const custom = plan.calls[0];
    if (custom.op !== "event.custom") throw new Error("expected custom event");
    expect(custom.body).toMatchObject({
      email: "jon@example.com",
      eventName: "order_refunded",
      properties: { order_id: "820982911946154500", refund_id: "890088186047892319", amount: 85, currency: "USD" },
    });
    const items = (custom.body.properties as Json).items;
    expect(items).toHaveLength(5);
    expect(items[0]).toMatchObject({ id: "788032119674292900", name: "Aviator sunglasses", quantity: 1, amount: 89.99 });
    expect(eventOf(plan, "order", "updated")).toMatchObject({ id: "820982911946154500", status: "partially_refunded" });
    expect(plan.nextState).toMatchObject({ refunded: "85.00", refundIds: ["890088186047892319"] });
  });

  it("orders/edited and orders/delete with prior state", () => {
    const edited = run("orders/edited", fixture("orders/edited"), makeCtx({ prior: orderPrior() }));
    expect(eventOf(edited, "order", "updated")).toMatchObject({ id: "820982911946154500", email: "jon@example.com", status: "paid" });
    const deleted = run("orders/delete", fixture("orders/delete"), makeCtx({ prior: orderPrior() }));
    expect(eventOf(deleted, "order", "deleted")).toEqual({
      email: "jon@example.com",
      source: "shopify",
      id: "820982911946154500",
      occurred_at: "2026-05-01T12:00:00.000Z",
    });
  });

  it("subscription_contracts/create: person by customer gid, currency", () => {
    const plan = run("subscription_contracts/create", fixture("subscription_contracts/create"));
    expect(plan.objectKey).toBe("subscription:7103183873");
    expect(eventOf(plan, "subscription", "created")).toEqual({
      referenceId: "1",
      source: "shopify",
      id: "7103183873",
      url: "https://shop.example.com/account",
      currency: "CAD",
    });
  });
});
