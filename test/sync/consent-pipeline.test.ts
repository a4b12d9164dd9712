/**
 * Consent changes of an existing contact, end to end: signed webhooks → pipeline → emulator, in
 * double_opt_in mode. §3.2 sends a confirmation email only when a person is created, so a
 * re-subscriber's contact is created anew (docs/customers-and-consent.md).
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `consent-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

describeEachDatabase("consent of an existing contact (double_opt_in)", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const deliver = (shop: string, topic: string, body: object) => h.deliver({ topic, shop, body });
  /** A shop in double opt-in mode (new shops keep Shopify's consent by default). */
  async function connectDoubleOptIn(shop: string, settings: object = {}) {
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "double_opt_in", ...settings } } });
  }
  const consent = (customerId: string, email: string, state: string, at: string, optInLevel = "single_opt_in") => ({
    customer_id: Number(customerId),
    email_address: email,
    email_marketing_consent: { state, opt_in_level: optInLevel, consent_updated_at: at },
  });
  const statusOf = (email: string) => h.emulator.person(email)?.statusDetails;
  const confirmations = (email: string) => h.emulator.sentEmails.filter((e) => e.kind === "confirmation" && e.to.includes(email));

  /** The person clicks the link of the service's confirmation email. */
  async function personConfirms(email: string) {
    const res = await fetch(`${h.emulator.url}/api/people`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.emulator.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email, source: "confirmation-link", skipDoubleOptIn: true, statusDetails: "confirmed" }),
    });
    expect(res.ok).toBe(true);
  }

  /** Subscribes, confirms through the service's email, then unsubscribes in Shopify. */
  async function subscribedThenUnsubscribed(shop: string, id: string) {
    const email = `customer${id}@example.com`;
    await deliver(shop, "customers/create", customerBody({ id, consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    expect(statusOf(email)).toBe("unconfirmed");
    expect(confirmations(email)).toHaveLength(1);
    await personConfirms(email);
    expect(statusOf(email)).toBe("confirmed");
    await deliver(shop, "customers_email_marketing_consent/update", consent(id, email, "unsubscribed", "2026-04-02T09:00:00Z"));
    expect(statusOf(email)).toBe("unsubscribed");
    return email;
  }

  it("a re-subscribe with a newer consent time re-creates the contact, so the service emails a confirmation", async () => {
    const shop = newShop();
    await connectDoubleOptIn(shop);
    h.startWorkers();
    const email = await subscribedThenUnsubscribed(shop, "9101");

    await deliver(shop, "customers_email_marketing_consent/update", consent("9101", email, "subscribed", "2026-04-03T09:00:00Z"));
    // Single opt-in in Shopify: not confirmed (the merchant asked for double opt-in), no longer
    // unsubscribed, and this time the person gets an email to confirm with.
    expect(statusOf(email)).toBe("unconfirmed");
    expect(confirmations(email)).toHaveLength(2);
    expect(h.emulator.requests.filter((r) => r.path.startsWith("/api/people")).slice(-2).map((r) => r.method)).toEqual(["DELETE", "POST"]);
    const last = h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST").at(-1)?.body;
    expect(last).toMatchObject({ email, customFields: { referenceId: "9101" } });
    expect(last).not.toHaveProperty("skipDoubleOptIn"); // the account's double opt-in is not bypassed
    expect(last).not.toHaveProperty("statusDetails");

    // A later profile update leaves that status alone.
    await deliver(shop, "customers/update", customerBody({ id: "9101", firstName: "Ada2", consent: "subscribed", updatedAt: "2026-04-04T09:00:00Z", consentUpdatedAt: "2026-04-03T09:00:00Z" }));
    expect(h.emulator.person(email)?.customFields.firstName).toBe("Ada2");
    expect(statusOf(email)).toBe("unconfirmed");
  });

  it("a re-subscribe Shopify confirmed by its own double opt-in (confirmed_opt_in) is confirmed", async () => {
    const shop = newShop();
    await connectDoubleOptIn(shop);
    h.startWorkers();
    const email = await subscribedThenUnsubscribed(shop, "9102");

    await deliver(shop, "customers_email_marketing_consent/update", consent("9102", email, "subscribed", "2026-04-03T09:00:00Z", "confirmed_opt_in"));
    expect(statusOf(email)).toBe("confirmed");
    expect(confirmations(email)).toHaveLength(1); // only the one from the contact's creation
  });

  it("a re-subscribe older than the unsubscribe changes nothing", async () => {
    const shop = newShop();
    await connectDoubleOptIn(shop);
    h.startWorkers();
    const email = await subscribedThenUnsubscribed(shop, "9103");

    await deliver(shop, "customers_email_marketing_consent/update", consent("9103", email, "subscribed", "2026-04-01T12:00:00Z", "confirmed_opt_in"));
    expect(statusOf(email)).toBe("unsubscribed");
  });

  it("syncNonSubscribers: a non-subscriber who subscribes through Shopify's double opt-in becomes confirmed", async () => {
    const shop = newShop();
    await connectDoubleOptIn(shop, { syncNonSubscribers: true });
    h.startWorkers();
    const email = "customer9104@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "9104", consent: "not_subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    expect(statusOf(email)).toBe("unconfirmed");
    expect(confirmations(email)).toHaveLength(0);

    await deliver(shop, "customers_email_marketing_consent/update", consent("9104", email, "subscribed", "2026-04-02T09:00:00Z", "confirmed_opt_in"));
    expect(statusOf(email)).toBe("confirmed");
  });
});
