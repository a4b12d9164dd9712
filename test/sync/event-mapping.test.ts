/**
 * docs/event-mapping.md is true: its tables are what scripts/event-mapping.ts renders, they list
 * exactly the fields the service schemas accept, and the mappers send exactly the fields the tables
 * call sent (over every Shopify sample and a few richer variations).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { customEventSchema, eventBodySchemas, addressSchema, customerSubscriptionSchema, lineItemSchema } from "../../app/services/marketing/schemas";
import {
  ADDRESS_TABLE,
  COMMON_FIELDS,
  CUSTOMER_SUBSCRIPTION_TABLE,
  EVENT_TABLES,
  GENERATED_START,
  LINE_ITEM_TABLE,
  renderEventMapping,
  type FieldTable,
} from "../../app/sync/event-mapping";
import { mapAbandonedCheckout } from "../../app/sync/plan-webhook";
import type { ObjectSyncState, SyncPlan } from "../../app/sync/plan-contract";
import { fixture, listFixtures, makeCtx, orderBody, orderLine, run, type Json } from "./fixtures";

const doc = readFileSync(path.resolve(import.meta.dirname, "../../docs/event-mapping.md"), "utf8");
const COMMON = Object.keys(customEventSchema.shape).filter((k) => k !== "eventName" && k !== "properties");
const fieldsOf = (t: FieldTable) => t.rows.map((r) => r.field).sort();
const sentOf = (t: FieldTable) => t.rows.filter((r) => r.source !== null).map((r) => r.field).sort();

describe("docs/event-mapping.md", () => {
  it("holds the tables scripts/event-mapping.ts writes (run `npm run docs:event-mapping` after a change)", () => {
    expect(doc.slice(doc.indexOf(GENERATED_START)).trimEnd()).toBe(renderEventMapping().trimEnd());
  });

  it("lists exactly the fields the service accepts, per event and nested object", () => {
    expect(fieldsOf(COMMON_FIELDS)).toEqual([...COMMON].sort());
    for (const [type, table] of Object.entries(EVENT_TABLES)) {
      const accepted = Object.keys(eventBodySchemas[type as keyof typeof EVENT_TABLES].shape).filter((k) => !COMMON.includes(k));
      expect(fieldsOf(table), type).toEqual(accepted.sort());
    }
    expect(fieldsOf(LINE_ITEM_TABLE)).toEqual(Object.keys(lineItemSchema.shape).sort());
    expect(fieldsOf(ADDRESS_TABLE)).toEqual(Object.keys(addressSchema.shape).sort());
    expect(fieldsOf(CUSTOMER_SUBSCRIPTION_TABLE)).toEqual(Object.keys(customerSubscriptionSchema.shape).sort());
  });
});

/** Every plan of the samples, with the priors and variations that make each field appear. */
function corpus(): SyncPlan[] {
  const plans: SyncPlan[] = [];
  const contractPrior: ObjectSyncState = {
    kind: "subscription",
    customerId: "1",
    status: "active",
    currency: "CAD",
    interval: "week",
    intervalCount: 4,
    amount: 25,
    planId: "91",
    planName: "Every 4 weeks",
    startedAt: "2026-01-01T00:00:00.000Z",
    endedAt: null,
    cancelledAt: null,
    changes: 1,
  };
  const orderPrior: ObjectSyncState = {
    kind: "order", email: "jon@example.com", customerId: "1", currency: "USD", status: "paid", total: "404.95", refunded: "0",
    refundIds: [], paid: true, fulfilled: false, completed: false, created: true, deleted: false,
  };
  for (const { topic } of listFixtures()) {
    const prior = topic.startsWith("subscription_") ? contractPrior : topic.startsWith("refunds/") || topic.startsWith("orders/") ? orderPrior : null;
    // Shopify's order samples are test orders, which send nothing: read as real ones.
    const body = topic.startsWith("orders/") ? Object.assign(fixture(topic), { test: false }) : fixture(topic);
    plans.push(run(topic, body, makeCtx({ prior })));
    plans.push(run(topic, body));
  }
  // A single-variant product (sku, barcode, variant_id at the top).
  const product = fixture("products/create");
  product.variants = [{ ...product.variants[0], sku: "TS-1", barcode: "0123456789012" }];
  plans.push(run("products/create", { ...product, created_at: "2026-01-01T00:00:00Z", image: { src: "https://cdn.example/p.png" } }));
  // An order with every money field, vendor, image and the tracker's hash.
  plans.push(
    run(
      "orders/create",
      orderBody({
        line_items: [orderLine(1, "19.99", 3, { vendor: "Roastery", image_url: "https://cdn.example/x.png", tax_lines: [{ price: "1.00" }] })],
        current_total_additional_fees_set: { shop_money: { amount: "2.00", currency_code: "USD" } },
        total_shipping_price_set: { shop_money: { amount: "5.00", currency_code: "USD" } },
        note_attributes: [{ name: "_ls", value: "hash" }],
        payment_gateway_names: ["shopify_payments"],
        order_status_url: "https://shop.example.com/orders/1",
        phone: "+15550000000",
        billing_address: fixture("customers/create").default_address,
        shipping_address: fixture("customers/create").default_address,
      }),
    ),
  );
  // A checkout line with discounts and an image; the timer's cart/abandoned.
  const checkout = fixture("checkouts/create");
  checkout.line_items[0].discount_allocations = [{ amount: "10.00" }];
  checkout.line_items[0].image_url = "https://cdn.example/y.png";
  const planned = run("checkouts/create", checkout);
  plans.push(planned);
  if (planned.abandonment?.action === "schedule") {
    plans.push({ ...planned, calls: [mapAbandonedCheckout(JSON.parse(JSON.stringify(planned.abandonment.snapshot)), makeCtx())] });
  }
  // A customer with spend, and one with contracts.
  const address = { ...fixture("customers/create").default_address, address2: "Suite 2" };
  plans.push(
    run("customers/update", { ...fixture("customers/update"), orders_count: 3, total_spent: "12.00", currency: "USD", phone: "+15550000000", default_address: address }),
  );
  // A contract with lines and a selling plan, then cancelled.
  const lines = [
    {
      id: 1, title: "Coffee", product_id: 77, variant_id: 78, vendor: "Roastery", quantity: 2,
      current_price: { amount: "12.50", currency_code: "CAD" }, variant_image: { src: "https://cdn.example/c.png" },
      selling_plan_id: 91, selling_plan_name: "Every 4 weeks",
    },
  ];
  plans.push(run("subscription_contracts/update", { ...fixture("subscription_contracts/update"), lines, created_at: "2026-01-01T00:00:00Z" }));
  plans.push(run("subscription_contracts/cancel", { ...fixture("subscription_contracts/cancel"), lines }, makeCtx({ prior: contractPrior })));
  return plans;
}

describe("the mappers send what the tables say", () => {
  // Each test builds the corpus itself: code run while the file loads counts for no test, and
  // StrykerJS would then run every test for each mutant of every mapper (npm run test:mutation).
  const bodies = (plans: SyncPlan[], type: string) =>
    plans.flatMap((p) => p.calls.flatMap((c) => (c.op === "event" && c.type === type ? [c.body as Record<string, Json>] : [])));
  const keys = (objects: Record<string, Json>[]) => [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();
  const allBodies = () => {
    const plans = corpus();
    return Object.keys(EVENT_TABLES).flatMap((type) => bodies(plans, type));
  };

  for (const [type, table] of Object.entries(EVENT_TABLES)) {
    it(`${type} events: every field the table calls sent, and no other`, () => {
      expect(keys(bodies(corpus(), type)).filter((k) => !COMMON.includes(k))).toEqual(sentOf(table));
    });
  }

  it("line items: every field the table calls sent, and no other", () => {
    expect(keys(allBodies().flatMap((b) => (Array.isArray(b.products) ? b.products : [])))).toEqual(sentOf(LINE_ITEM_TABLE));
  });

  it("addresses: every field the table calls sent, and no other", () => {
    const addresses = allBodies().flatMap((b) => [b.address, b.billing_address, b.shipping_address].filter((a) => a && typeof a === "object"));
    expect(keys(addresses)).toEqual(sentOf(ADDRESS_TABLE));
  });

  it("customer subscriptions: every field the table calls sent, and no other", () => {
    expect(keys(bodies(corpus(), "customer").flatMap((b) => b.subscriptions ?? []))).toEqual(sentOf(CUSTOMER_SUBSCRIPTION_TABLE));
  });
});
