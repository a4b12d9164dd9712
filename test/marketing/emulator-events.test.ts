/**
 * Issue 45 items 11 and 8: the emulator holds event bodies to §4.5 where the spec is specific
 * (types, ISO 8601 timestamps, ISO 4217 currencies, integers, line items with id and name, address
 * objects) and answers 422 in §7's format; and it stores the time an event occurred as the person
 * event record's `timestamp` (§2.3), which the events list and its date filters use. Bodies are sent
 * raw (`request`) where the client's own validation would stop them before the service.
 */
import { describe, expect, it } from "vitest";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

const post = async (path: string, body: Record<string, unknown>) => {
  const email = uniqueEmail();
  return failure(h.client({ retries: 0 }).request({ method: "POST", path, body: { email, source: "shopify", id: "1", ...body } }));
};

describe("§4.5 field types and formats", () => {
  it.each([
    ["/api/events/order/created", { currency: "usd" }, "currency"],
    ["/api/events/order/created", { currency: "US" }, "currency"],
    ["/api/events/cart/updated", { currency: "eur" }, "currency"],
    ["/api/events/product/updated", { currency: "Eur" }, "currency"],
    ["/api/events/subscription/created", { currency: "gbp" }, "currency"],
    ["/api/events/order/created", { occurred_at: "2024-03-01 10:00:00" }, "occurred_at"],
    ["/api/events/order/created", { occurred_at: "yesterday" }, "occurred_at"],
    ["/api/events/order/created", { occurred_at: "2024-02-30T10:00:00Z" }, "occurred_at"],
    ["/api/events/order/created", { occurred_at: 1709287200 }, "occurred_at"],
    ["/api/events/cart/created", { occurredAt: "01/03/2024" }, "occurredAt"],
    ["/api/events/product/created", { created_at: "2024-03-01T25:00:00Z" }, "created_at"],
    ["/api/events/user/deleted", { deleted_at: "soon" }, "deleted_at"],
    ["/api/events/order/created", { total: "10.00" }, "total"],
    ["/api/events/order/created", { status: 3 }, "status"],
    ["/api/events/order/created", { publicId: true }, "publicId"],
    ["/api/events/cart/created", { total_products: 1.5 }, "total_products"],
    ["/api/events/customer/updated", { purchase_count: "3" }, "purchase_count"],
    ["/api/events/customer/updated", { first_name: null }, "first_name"],
    ["/api/events/order/created", { products: {} }, "products"],
    ["/api/events/order/created", { products: [{ id: 1 }] }, "products.0.name"],
    ["/api/events/order/created", { products: [{ name: "Mug" }] }, "products.0.id"],
    ["/api/events/cart/created", { products: [{ id: 1, name: "Mug", quantity: 1.5 }] }, "products.0.quantity"],
    ["/api/events/subscription/renewed", { products: [{ id: 1, name: "Box", price: "9.00" }] }, "products.0.price"],
    ["/api/events/order/created", { products: [{ id: 1, name: "Mug", variant_id: null }] }, "products.0.variant_id"],
    ["/api/events/order/created", { billing_address: "1 Main St" }, "billing_address"],
    ["/api/events/order/created", { shipping_address: { city: 5 } }, "shipping_address.city"],
    ["/api/events/customer/created", { address: { postal_code: 10115 } }, "address.postal_code"],
    ["/api/events/product/updated", { variants: [{ sku: "A" }] }, "variants.0.id"],
    ["/api/events/product/updated", { variants: [{ id: 1, options: ["S", 2] }] }, "variants.0.options.1"],
    ["/api/events/product/updated", { categories: ["Mugs", 1] }, "categories.1"],
    ["/api/events/product/updated", { price: "9" }, "price"],
    ["/api/events/customer/updated", { user: { created_at: "soon" } }, "user.created_at"],
    ["/api/events/customer/updated", { subscriptions: [{ plan_amount: "9" }] }, "subscriptions.0.plan_amount"],
    ["/api/events/customer/updated", { subscriptions: [{ plan_interval_count: 1.5 }] }, "subscriptions.0.plan_interval_count"],
    ["/api/events/customer/updated", { is_contact: "yes" }, "is_contact"],
  ])("%s %j → 422 on %s", async (path, body, field) => {
    const e = await post(path, body);
    expect(e).toMatchObject({ kind: "validation", status: 422, message: "The given data was invalid." });
    expect(Object.keys(e.errors ?? {})).toContain(field);
    expect((h.emu.requests.at(-1)?.responseBody as { status_code?: number }).status_code).toBe(422);
    expect(h.emu.state.events.length + h.emu.state.unattachedEvents.length).toBe(0);
  });

  it("every field of every type, written as §4.5 asks, is accepted (through the client)", async () => {
    const c = h.client({ retries: 0 });
    const email = uniqueEmail();
    const base = { email, source: "shopify" };
    const address = { label: "Home", first_name: "Ada", last_name: "L", phone: "+44", company: "", address1: "1 St", address2: "", city: "London", state: "", postal_code: "N1", country: "GB" };
    const item = { id: 1, name: "Mug", url: "u", image_url: "i", sku: "S", brand: "B", variant_id: "v", price: 1.5, total: 3, discounts: 0, taxes: 0.2, fees: 0, shipping: 0, quantity: 2 };
    const { sku: _sku, ...subscriptionItem } = item;
    await c.events.cart("created", { ...base, id: "c", occurredAt: "2024-03-01T10:00:00Z", products: [item], total: 3, total_products: 2, url: "u", currency: "USD", modified_at: "2024-03-01T10:00:00+01:00" });
    await c.events.product("updated", {
      ...base, id: 5, modified_at: "2024-03-01T10:00:00Z", created_at: "2024-03-01", name: "Mug", description: "d", url: "u", image_url: "i", sku: "S", barcode: "b",
      vendor: "v", type: "t", brand: "b", public_id: "p", variant_id: "v", currency: "EUR", price: 9, categories: ["Mugs"], tags: ["new"],
      variants: [{ id: "v1", sku: "S1", price: 9, barcode: "b", options: ["Blue"] }],
    });
    await c.events.order("completed", {
      ...base, id: 7, occurred_at: "2024-03-01T10:00:00.123Z", products: [item], currency: "JPY", publicId: "#1001", total: 3, shipping: 0, discounts: 0, taxes: 0, fees: 0,
      status: "paid", url: "u", phone: "+1", billing_address: address, shipping_address: address, payment_gateway: "manual", _ls: "hash",
    });
    await c.events.customer("updated", {
      ...base, id: 8, is_contact: false, first_name: "Ada", last_name: "L", name: "Ada L", customer_email: email, status: "enabled", phone: "+1", url: "u", avatar_url: "a",
      currency: "USD", payment_gateway: "g", crm: "c", created_at: "2024-01-01T00:00:00Z", modified_at: "2024-03-01T00:00:00Z", user_id: 3, public_id: "p", purchase_count: 2,
      purchase_value: 10.5, address, billing_address: address, shipping_address: address,
      user: { id: 1, username: "u", email, first_name: "A", last_name: "L", display_name: "A", role: "r", url: "u", avatar_url: "a", status: "s", created_at: "2024-01-01T00:00:00Z", modified_at: "2024-01-01T00:00:00Z", last_login: "2024-01-01T00:00:00Z" },
      plan: "p", plan_name: "P", plan_interval: "month", plan_id: 1, plan_amount: 9, plan_interval_count: 1,
      subscriptions: [{ plan: "p", plan_name: "P", plan_interval: "month", status: "active", currency: "USD", plan_id: "1", plan_amount: 9, plan_interval_count: 1, start_date: "2024-01-01T00:00:00Z", end_date: "2025-01-01T00:00:00Z", trial_end_date: "2024-01-08T00:00:00Z", canceled_at: "2024-06-01T00:00:00Z" }],
    });
    await c.events.user("deleted", { ...base, id: 9, is_contact: false, username: "u", first_name: "A", last_name: "L", display_name: "A", role: "r", url: "u", avatar_url: "a", status: "s", created_at: "2024-01-01T00:00:00Z", modified_at: "2024-01-01T00:00:00Z", deleted_at: "2024-02-01T00:00:00Z", last_login: "2024-01-01T00:00:00Z" });
    await c.events.subscription("renewal_failed", { ...base, id: 10, url: "u", currency: "CAD", products: [subscriptionItem] });
    await c.events.custom({ ...base, eventName: "quiz_done", properties: { score: 3 } });
    expect(h.emu.requests.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
  });
});

describe("§2.3 a person event's timestamp is when it occurred", () => {
  const unix = (iso: string) => Date.parse(iso) / 1000;

  it("an order of 2024 is listed under 2024 and found by a 2024 date filter, not by one of the receipt day", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const before = Math.floor(Date.now() / 1000);
    const r = await c.events.order("completed", { email, source: "shopify", id: 2024, occurred_at: "2024-03-01T10:00:00-05:00" });
    expect(r.timestamp).toBeGreaterThanOrEqual(before); // the answer's timestamp is the receipt
    const [rec] = (await c.people.events(email)).data;
    expect(rec).toMatchObject({ event: "order_completed", timestamp: unix("2024-03-01T15:00:00Z") });
    expect((await c.people.events(email, { dateFrom: "2024-03-01", dateTo: "2024-03-01" })).data).toHaveLength(1);
    expect((await c.people.events(email, { dateFrom: "2024-01-01", dateTo: "2024-12-31" })).data).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    expect((await c.people.events(email, { dateFrom: today })).data).toHaveLength(0);
    expect((await c.people.events(email, { dateTo: "2024-02-29" })).data).toHaveLength(0);
  });

  it("each type's own time field; custom events by properties.occurredAt; the receipt time when there is none", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const s = { email, source: "shopify" };
    await c.events.cart("abandoned", { ...s, id: "c1", occurredAt: "2024-01-02T00:00:00Z", modified_at: "2023-12-31T00:00:00Z" });
    await c.events.cart("updated", { ...s, id: "c2", modified_at: "2024-01-03T00:00:00Z" });
    await c.events.product("updated", { ...s, id: "p1", modified_at: "2024-01-04T00:00:00Z", created_at: "2020-01-01T00:00:00Z" });
    await c.events.product("created", { ...s, id: "p2", created_at: "2024-01-05T00:00:00Z" });
    await c.events.customer("updated", { ...s, id: "u1", modified_at: "2024-01-06T00:00:00Z" });
    await c.events.custom({ ...s, eventName: "review_left", properties: { occurredAt: "2024-01-07T00:00:00Z" } });
    await c.people.upsert({ email, source: "shopify", events: [{ eventName: "quiz_done", occurredAt: "2024-01-08T00:00:00Z" }] });
    const before = Math.floor(Date.now() / 1000);
    await c.events.product("viewed", { ...s, id: "p3", modified_at: "2020-01-01T00:00:00Z" });
    await c.events.order("created", { ...s, id: "o1" });
    const stamps = Object.fromEntries(h.emu.personEvents(email).map((e) => [`${e.event}:${String(e.properties.id ?? "")}`, e.timestamp]));
    expect(stamps).toMatchObject({
      "cart_abandoned:c1": unix("2024-01-02T00:00:00Z"),
      "cart_updated:c2": unix("2024-01-03T00:00:00Z"),
      "product_updated:p1": unix("2024-01-04T00:00:00Z"),
      "product_created:p2": unix("2024-01-05T00:00:00Z"),
      "customer_updated:u1": unix("2024-01-06T00:00:00Z"),
      "review_left:": unix("2024-01-07T00:00:00Z"),
      "quiz_done:": unix("2024-01-08T00:00:00Z"),
    });
    expect(stamps["product_viewed:p3"]).toBeGreaterThanOrEqual(before);
    expect(stamps["order_created:o1"]).toBeGreaterThanOrEqual(before);
    // newest first, by when each happened
    const listed = (await c.people.events(email, { perPage: 100 })).data.map((e) => e.timestamp);
    expect(listed).toEqual([...listed].sort((a, b) => b - a));
  });
});
