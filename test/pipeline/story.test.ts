import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { orderBody } from "../sync/fixtures";

// End to end: signed webhooks → app → queue → mappers → worker → emulator. The emulator's
// recorded calls and the person's event list must tell the customer's story, exactly.
let h: PipelineHarness;
const shop = "story.myshopify.com";

beforeAll(async () => {
  h = await startPipelineHarness();
  await h.connect(shop);
  // This story is told in double opt-in mode (new shops keep Shopify's consent by default).
  await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "double_opt_in" } } });
  h.startWorkers();
});
afterAll(() => h.close());

const deliver = (topic: string, body: object) => h.deliver({ topic, shop, body });

const calls = (pathPrefix: string) => h.emulator.requests.filter((r) => r.method === "POST" && r.path.startsWith(pathPrefix));
const consent = (customerId: number, email: string, state: string, at: string) => ({
  customer_id: customerId,
  email_address: email,
  email_marketing_consent: { state, opt_in_level: "single_opt_in", consent_updated_at: at },
});

describe("a customer's story", () => {
  const ann = "ann@example.com";
  const annNew = "ann.new@example.com";
  const annOrder = (over: Record<string, unknown>) =>
    orderBody({ email: annNew, customer: { id: 99, email: annNew }, checkout_token: "chk-ann", ...over });

  it("signs up without consent: a customer event, no contact, no email", async () => {
    await deliver("customers/create", customerBody({ id: "99", email: ann, consent: "not_subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    expect(calls("/api/people")).toHaveLength(0);
    expect(calls("/api/events/customer/created")).toHaveLength(1);
    expect(h.emulator.person(ann)).toBeUndefined();
    expect(h.emulator.sentEmails).toHaveLength(0);
  });

  it("consents: becomes a contact and gets the service's double opt-in email once", async () => {
    await deliver("customers_email_marketing_consent/update", consent(99, ann, "subscribed", "2026-04-01T09:05:00Z"));
    expect(h.emulator.person(ann)?.statusDetails).toBe("unconfirmed");
    expect(h.emulator.sentEmails.filter((e) => e.kind === "confirmation" && e.to.includes(ann))).toHaveLength(1);
  });

  it("edits the email: the contact is renamed, keeping its history", async () => {
    const before = h.emulator.person(ann)!;
    await deliver("customers/update", customerBody({ id: "99", email: annNew, consent: "subscribed", updatedAt: "2026-04-01T09:10:00Z", consentUpdatedAt: "2026-04-01T09:05:00Z" }));
    expect(calls("/api/people").at(-1)?.body).toMatchObject({ email: ann, emailChange: annNew });
    expect(h.emulator.person(ann)).toBeUndefined();
    expect(h.emulator.person(annNew)?.id).toBe(before.id);
    expect(h.emulator.sentEmails.filter((e) => e.kind === "confirmation")).toHaveLength(1); // no second opt-in email
  });

  it("orders, pays and is shipped: created, updated, completed once", async () => {
    await deliver("orders/create", annOrder({}));
    await deliver("orders/paid", annOrder({ financial_status: "paid", updated_at: "2026-04-01T10:05:00Z" }));
    await deliver("orders/fulfilled", annOrder({ financial_status: "paid", fulfillment_status: "fulfilled", updated_at: "2026-04-01T10:10:00Z" }));
    await deliver("orders/updated", annOrder({ financial_status: "paid", fulfillment_status: "fulfilled", updated_at: "2026-04-01T10:10:00Z" }));
    expect(calls("/api/events/order/created")).toHaveLength(1);
    expect(calls("/api/events/order/completed")).toHaveLength(1);
    expect(calls("/api/events/order/created")[0].body).toMatchObject({
      email: annNew,
      id: "4242",
      publicId: "#1001",
      total: 59.97,
      currency: "USD",
      products: [{ name: "Item 1", price: 19.99, quantity: 3, total: 59.97 }],
    });
  });

  it("gets a refund: an order_refunded event and an order update", async () => {
    const refund = JSON.parse(fixture("refunds/create"));
    await deliver("refunds/create", { ...refund, order_id: 4242 });
    const refunded = calls("/api/events").filter((r) => r.path === "/api/events").at(-1);
    expect(refunded?.body).toMatchObject({ email: annNew, eventName: "order_refunded" });
    expect(calls("/api/events/order/updated").at(-1)?.body).toMatchObject({ id: "4242", status: expect.stringMatching(/refunded/) });
  });

  it("unsubscribes: the contact is unsubscribed, and older data never re-subscribes it", async () => {
    await deliver("customers_email_marketing_consent/update", consent(99, annNew, "unsubscribed", "2026-04-02T09:00:00Z"));
    expect(h.emulator.person(annNew)?.statusDetails).toBe("unsubscribed");
    // A late, older delivery that still says "subscribed".
    await deliver("customers_email_marketing_consent/update", consent(99, annNew, "subscribed", "2026-04-01T09:05:00Z"));
    expect(h.emulator.person(annNew)?.statusDetails).toBe("unsubscribed");
  });

  it("tells the whole story in the person's event list", () => {
    const names = h.emulator.personEvents(annNew).map((e) => e.event);
    expect(names).toEqual(
      expect.arrayContaining(["customer_updated", "order_created", "order_updated", "order_completed", "order_refunded"]),
    );
    expect(names.filter((n) => n === "order_completed")).toHaveLength(1);
    expect(names.indexOf("order_created")).toBeLessThan(names.indexOf("order_completed"));
  });

  it("never sends an opt-in email to someone who did not opt in", async () => {
    await deliver("customers/create", customerBody({ id: "100", email: "bob@example.com", consent: "not_subscribed" }));
    await deliver("customers/update", customerBody({ id: "100", email: "bob@example.com", consent: "not_subscribed", updatedAt: "2026-04-03T00:00:00Z", firstName: "Bob" }));
    expect(h.emulator.sentEmails.flatMap((e) => e.to)).not.toContain("bob@example.com");
    expect(h.emulator.person("bob@example.com")).toBeUndefined();
  });
});

describe("abandoned checkouts", () => {
  const checkout = (token: string, email: string, over: Record<string, unknown> = {}) => ({
    ...JSON.parse(fixture("checkouts/create")),
    token,
    cart_token: `cart-${token}`,
    email,
    completed_at: null,
    ...over,
  });
  /** A cart of one line at `price`: a cart's total is its lines (tax and shipping are not in it). */
  const lines = (price: string) => [{ ...JSON.parse(fixture("checkouts/create")).line_items[0], price, line_price: price, quantity: 1 }];
  const makeDue = (token: string) =>
    h.app.db.prisma.abandonmentTimer.update({
      where: { shop_checkoutToken: { shop, checkoutToken: token } },
      data: { dueAt: new Date(Date.now() - 1_000) },
    });
  const abandoned = (cartId: string) =>
    calls("/api/events/cart/abandoned").filter((r) => (r.body as { id?: string }).id === cartId);

  it("a checkout left without an order gets exactly one cart/abandoned after the delay", async () => {
    await deliver("checkouts/create", checkout("chk-left", "carl@example.com"));
    const timer = await h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop, checkoutToken: "chk-left" } });
    const delayMinutes = (timer.dueAt.getTime() - Date.now()) / 60_000;
    expect(delayMinutes).toBeGreaterThan(58); // the default 60 minutes
    expect(delayMinutes).toBeLessThanOrEqual(60);
    expect(abandoned("cart-chk-left")).toHaveLength(0);

    await makeDue("chk-left");
    await h.settle();
    expect(abandoned("cart-chk-left")).toHaveLength(1);
    expect(abandoned("cart-chk-left")[0].body).toMatchObject({ email: "carl@example.com" });

    await deliver("checkouts/update", checkout("chk-left", "carl@example.com", { updated_at: "2030-01-01T00:00:00Z" }));
    await h.app.db.prisma.abandonmentTimer.updateMany({ where: { shop }, data: { dueAt: new Date(Date.now() - 1_000) } });
    await h.settle();
    expect(abandoned("cart-chk-left")).toHaveLength(1);
  });

  it("a changed cart restarts the timer", async () => {
    await deliver("checkouts/create", checkout("chk-change", "dina@example.com"));
    await h.app.db.prisma.abandonmentTimer.update({
      where: { shop_checkoutToken: { shop, checkoutToken: "chk-change" } },
      data: { dueAt: new Date(Date.now() + 5 * 60_000) },
    });
    const changed = checkout("chk-change", "dina@example.com", { updated_at: "2030-02-01T00:00:00Z", line_items: lines("999.00") });
    await deliver("checkouts/update", changed);
    const timer = await h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop, checkoutToken: "chk-change" } });
    expect((timer.dueAt.getTime() - Date.now()) / 60_000).toBeGreaterThan(58);
  });

  it("an order that arrives late, after the delay, still cancels it", async () => {
    await deliver("checkouts/create", checkout("chk-bought", "erin@example.com"));
    await h.stopWorkers();
    await makeDue("chk-bought");
    expect(
      (await h.send({ topic: "orders/create", shop, body: orderBody({ id: 5151, admin_graphql_api_id: "gid://shopify/Order/5151", email: "erin@example.com", checkout_token: "chk-bought", cart_token: "cart-chk-bought" }) })).status,
    ).toBe(200);
    h.startWorkers();
    await h.settle();
    expect(abandoned("cart-chk-bought")).toHaveLength(0);
    const timer = await h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop, checkoutToken: "chk-bought" } });
    expect(timer.status).toBe("cancelled");
  });
});

describe("merchant settings", () => {
  const trusting = "trusting.myshopify.com";

  it("trusting Shopify's opt-in confirms the contact without a double opt-in email, and deletion deletes it", async () => {
    await h.connect(trusting);
    await h.app.db.prisma.shop.update({
      where: { domain: trusting },
      data: { settings: { optInMode: "trust_shopify", deleteContactOnCustomerDelete: true } },
    });
    const email = "fran@example.com";
    const send = async (topic: string, body: object) => {
      expect((await h.send({ topic, shop: trusting, body })).status).toBe(200);
      await h.settle();
    };
    await send("customers/create", customerBody({ id: "555", email, consent: "subscribed" }));
    expect(h.emulator.person(email)?.statusDetails).toBe("confirmed");
    expect(h.emulator.sentEmails.flatMap((e) => e.to)).not.toContain(email);

    await send("customers/delete", { id: 555, admin_graphql_api_id: "gid://shopify/Customer/555" });
    expect(h.emulator.person(email)).toBeUndefined();
  });
});
