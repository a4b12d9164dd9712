import { describe, expect, it } from "vitest";
import type { ServiceCall } from "../../app/services/marketing/schemas";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

async function person(email = uniqueEmail(), extra: Record<string, unknown> = {}) {
  await h.client().people.upsert({ email, source: "shopify", ...extra });
  return email;
}

describe("POST /api/events (custom)", () => {
  it("stores the event on the person, triggers automations, answers {success, timestamp}", async () => {
    const email = await person();
    const r = await h.client().events.custom({ email, source: "shopify", eventName: "wishlist_added", properties: { sku: "A1" } });
    expect(r.success).toBe(true);
    expect(Math.abs(r.timestamp - Date.now() / 1000)).toBeLessThan(60);
    const stored = (await h.client().people.events(email)).data;
    expect(stored).toEqual([{ timestamp: expect.any(Number), event: "wishlist_added", properties: { sku: "A1" } }]);
    // §4.5: `source` is a common field, not one of the event's properties
    expect(h.emu.personEvents(email)[0]).toMatchObject({ source: "shopify", properties: { sku: "A1" } });
    expect(h.emu.automations.map((a) => [a.event, a.email])).toEqual([["wishlist_added", email]]);
  });

  it("silent: stored but no automation; test: nothing stored at all", async () => {
    const email = await person();
    const c = h.client();
    await c.events.custom({ email, source: "shopify", eventName: "quiet", silent: true });
    await c.events.custom({ email, source: "shopify", eventName: "dry_run", test: true });
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["quiet"]);
    expect(h.emu.automations).toEqual([]);
    expect(h.emu.state.unattachedEvents).toEqual([]);
  });

  it("attaches by referenceId (number cast to string) and by the uuid of an earlier people response", async () => {
    const c = h.client();
    const email = uniqueEmail();
    const p = await c.people.upsert({ email, source: "shopify", customFields: { referenceId: "4242" }, events: [{ eventName: "signup" }] });
    await c.events.custom({ referenceId: 4242, source: "shopify", eventName: "by_ref" });
    await c.events.custom({ uuid: p.eventUuid!, source: "shopify", eventName: "by_uuid" });
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["signup", "by_ref", "by_uuid"]);
  });

  it("an unknown person is not created: the event is kept unattached", async () => {
    const email = uniqueEmail("ghost");
    await h.client().events.custom({ email, source: "shopify", eventName: "pageView" });
    expect(h.emu.person(email)).toBeUndefined();
    expect(h.emu.state.unattachedEvents.map((e) => [e.event, e.handle.email])).toEqual([["pageView", email]]);
  });

  it("invalid bodies: local errors name the field; the service answers 422 `The given data was invalid.`", async () => {
    const c = h.client();
    const local = await failure(c.events.custom({ source: "shopify", eventName: "x" } as never));
    expect(local).toMatchObject({ kind: "validation", local: true, status: 0 });
    expect(local.errors!.email).toEqual(["The email field is required when reference id is not present."]);
    expect(local.message).toContain("email");
    expect(h.emu.requests).toHaveLength(0);

    const server = await failure(c.request({ method: "POST", path: "/api/events", body: { email: "a@b.example" } }));
    expect(server).toMatchObject({ kind: "validation", status: 422, message: "The given data was invalid." });
    expect(Object.keys(server.errors!).sort()).toEqual(["eventName", "source"]);
    const noEmail = await failure(c.request({ method: "POST", path: "/api/events/cart/created", body: { source: "s" } }));
    expect(noEmail.errors!.email).toEqual(["The email field is required when reference id is not present."]);
    expect(noEmail.errors).toHaveProperty("id");
  });
});

describe("typed event endpoints", () => {
  const line = { id: 11, name: "Mug", price: 9.5, quantity: 2, sku: "MUG-1" };

  it("cart / product / order / subscription are stored as <type>_<action>", async () => {
    const email = await person();
    const c = h.client();
    await c.events.cart("abandoned", { email, source: "shopify", id: "c1", products: [line], total: 19, currency: "EUR", url: "https://shop/cart" });
    await c.events.product("viewed", { email, source: "shopify", id: 5, name: "Mug", price: 9.5, variants: [{ id: "v1", options: ["Blue"] }] });
    await c.events.order("completed", {
      email,
      source: "shopify",
      id: 1001,
      products: [line],
      total: 19,
      billing_address: { city: "Paris", country: "FR" },
      occurred_at: "2025-01-01T10:00:00+01:00",
    });
    await c.events.subscription("renewal_failed", { email, source: "shopify", id: "s1", products: [{ id: 1, name: "Box" }] });
    const names = (await c.people.events(email, { perPage: 100 })).data.map((e) => e.event).sort();
    expect(names).toEqual(["cart_abandoned", "order_completed", "product_viewed", "subscription_renewal_failed"]);
    const order = (await c.people.events(email, { event: "order_completed" })).data[0]!;
    expect(order.properties).toMatchObject({ id: 1001, total: 19, billing_address: { city: "Paris" } });
    expect(h.emu.requests.map((r) => r.path)).toEqual(
      expect.arrayContaining(["/api/events/cart/abandoned", "/api/events/product/viewed", "/api/events/order/completed", "/api/events/subscription/renewal_failed"]),
    );
  });

  it("customer is_contact creates a contact mapping names and phone, following double opt-in", async () => {
    const email = uniqueEmail("cust");
    await h.client().events.customer("created", { email, source: "shopify", id: 77, is_contact: true, first_name: "Grace", last_name: "Hopper", phone: "+15550001" });
    const p = await h.client().people.get(email);
    expect(p.customFields).toMatchObject({ firstName: "Grace", lastName: "Hopper", phoneNumber: "+15550001", source: "shopify" });
    expect(p.statusDetails).toBe("unconfirmed");
    expect(h.emu.sentEmails.filter((m) => m.kind === "confirmation").map((m) => m.to)).toEqual([[email]]);
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["customer_created"]);
  });

  it("user is_contact on an existing contact changes only given fields and keeps the first source", async () => {
    const email = await person(uniqueEmail(), { customFields: { firstName: "Old", lastName: "Keep" } });
    await h.client().events.user("updated", { email, source: "wordpress", id: "u1", is_contact: true, first_name: "New" });
    const p = await h.client().people.get(email);
    expect(p.customFields).toMatchObject({ firstName: "New", lastName: "Keep", source: "shopify" });
    expect(h.emu.sentEmails.filter((m) => m.kind === "confirmation")).toHaveLength(1); // only the original one
  });

  it("without is_contact a customer event does not create a contact", async () => {
    const email = uniqueEmail();
    await h.client().events.customer("created", { email, source: "shopify", id: 1 });
    expect(h.emu.person(email)).toBeUndefined();
  });

  it("an action not allowed for the type and a missing id fail locally", async () => {
    const c = h.client();
    const badAction = await failure(c.events.cart("completed" as never, { email: "a@b.example", source: "s", id: 1 }));
    expect(badAction.errors).toHaveProperty("action");
    const noId = await failure(c.events.order("created", { email: "a@b.example", source: "s" } as never));
    expect(noId.errors).toHaveProperty("id");
    const badLine = await failure(c.events.cart("created", { email: "a@b.example", source: "s", id: 1, products: [{ id: 1 } as never] }));
    expect(badLine.errors).toHaveProperty("products.0.name");
    expect(h.emu.requests).toHaveLength(0);
  });
});

describe("perform(ServiceCall)", () => {
  it("dispatches upsert, typed event, custom event and delete", async () => {
    const c = h.client();
    const email = uniqueEmail();
    const calls: ServiceCall[] = [
      { op: "person.upsert", body: { email, source: "shopify", tags: { buyer: true } } },
      { op: "event", type: "order", action: "created", body: { email, source: "shopify", id: 9 } },
      { op: "event.custom", body: { email, source: "shopify", eventName: "review_left" } },
    ];
    for (const call of calls) await c.perform(call);
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["order_created", "review_left"]);
    expect(h.emu.person(email)?.tags).toEqual(["buyer"]);
    await c.perform({ op: "person.delete", idOrEmail: email });
    expect(h.emu.person(email)).toBeUndefined();
  });

  it("rejects a body that does not match its event type before sending", async () => {
    const e = await failure(
      h.client().perform({ op: "event", type: "cart", action: "viewed", body: { email: "a@b.example", source: "s", id: 1 } } as never),
    );
    expect(e).toMatchObject({ kind: "validation", local: true });
    expect(e.errors).toHaveProperty("action");
    expect(h.emu.requests).toHaveLength(0);
  });
});
