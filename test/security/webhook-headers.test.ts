import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app";
import { customerBody } from "../support/pipeline";
import { orderBody } from "../sync/fixtures";
import { TEST_API_SECRET } from "../support/env";
import { fixture, sendWebhook, webhookHeaders } from "../support/webhooks";

// Only the body is signed: every header can be forged. These deliveries carry genuine signatures.
const PREVIOUS_SECRET = "the-previous-app-secret-42";
const victim = "victim.myshopify.com";
const attacker = "attacker.myshopify.com";
const gone = "gone.myshopify.com";

describe("webhook headers are not trusted", () => {
  const via = "production server";
  let app: TestApp;
  const stored = () => app.db.prisma.webhookDelivery.count();

  beforeAll(async () => {
    app = await startTestApp({ env: { SHOPIFY_API_SECRET_PREVIOUS: PREVIOUS_SECRET } });
    await app.db.prisma.shop.createMany({ data: [{ domain: victim }, { domain: attacker }, { domain: gone, uninstalledAt: new Date() }] });
    await app.db.prisma.session.create({ data: { id: `offline_${victim}`, shop: victim, state: "", accessToken: "" } });
  });
  afterAll(() => app.close());

  it(`refuses the replay of a genuine signed body as another shop's app/uninstalled or customers/redact (${via})`, async () => {
    // Genuine deliveries of the attacker's own shop, re-sent with the victim's domain in the header.
    const uninstall = JSON.stringify({ id: 1, myshopify_domain: attacker, domain: "attacker.example" });
    const redact = JSON.stringify({ shop_id: 1, shop_domain: attacker, customer: { id: 5, email: "a@example.com" } });
    const before = await stored();
    for (const [topic, body] of [
      ["app/uninstalled", uninstall],
      ["customers/redact", redact],
      ["shop/redact", JSON.stringify({ shop_id: 1, shop_domain: attacker })],
      // Every shop the body names must be the header's: one field naming the victim does not vouch for the other.
      ["app/uninstalled", JSON.stringify({ id: 1, myshopify_domain: victim, domain: attacker })],
    ]) {
      const res = await sendWebhook(app.url, { topic, shop: victim, body });
      expect(res.status, topic).toBe(400);
      expect(await res.text()).toMatch(/Body (names another shop|does not name the shop)/);
    }
    expect(await stored()).toBe(before);
    expect((await app.db.prisma.shop.findUnique({ where: { domain: victim } }))?.uninstalledAt).toBeNull();
    expect(await app.db.prisma.session.count({ where: { shop: victim } })).toBe(1);
  });

  it(`refuses an order's signed body replayed as customers/delete (${via})`, async () => {
    const res = await sendWebhook(app.url, { topic: "customers/delete", shop: victim, body: orderBody({ id: 99 }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("Body is not a customer");
  });

  it(`refuses a privacy request's signed body replayed under the other privacy topic (${via})`, async () => {
    const dataRequest = { shop_id: 1, shop_domain: victim, customer: { id: 5, email: "a@example.com" }, orders_requested: [7], data_request: { id: 9 } };
    const redaction = { shop_id: 1, shop_domain: victim, customer: { id: 5, email: "a@example.com" }, orders_to_redact: [7] };
    const before = await stored();
    const asRedact = await sendWebhook(app.url, { topic: "customers/redact", shop: victim, body: dataRequest });
    expect(asRedact.status).toBe(400);
    expect(await asRedact.text()).toBe("Body is not a customers/redact request (it carries data_request)");
    const asRequest = await sendWebhook(app.url, { topic: "customers/data_request", shop: victim, body: redaction });
    expect(asRequest.status).toBe(400);
    expect(await asRequest.text()).toBe("Body is not a customers/data_request request (it carries orders_to_redact)");
    expect(await stored()).toBe(before);
    // Each body under its own topic is taken.
    expect((await sendWebhook(app.url, { topic: "customers/data_request", shop: victim, body: dataRequest })).status).toBe(200);
    expect((await sendWebhook(app.url, { topic: "customers/redact", shop: victim, body: redaction })).status).toBe(200);
  });

  it(`refuses a live customer's signed record replayed as customers/delete, and takes the documented deletion (${via})`, async () => {
    const res = await sendWebhook(app.url, { topic: "customers/delete", shop: victim, body: customerBody({ id: "5" }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("Body is a customer record, not a deletion");
    expect((await sendWebhook(app.url, { topic: "customers/delete", shop: victim, body: fixture("customers/delete") })).status).toBe(200);
  });

  it(`accepts the same requests when body and header agree (${via})`, async () => {
    const res = await sendWebhook(app.url, { topic: "customers/redact", shop: victim, body: { shop_id: 1, shop_domain: victim, customer: { id: 5 } } });
    expect(res.status).toBe(200);
  });

  it.each([
    ["a domain outside myshopify.com", { "x-shopify-shop-domain": "evil.example.com" }, 400],
    ["a domain with a path", { "x-shopify-shop-domain": "victim.myshopify.com/../x" }, 400],
    ["an upper-case domain", { "x-shopify-shop-domain": "VICTIM.myshopify.com" }, 400],
    ["a topic the app does not subscribe to", { "x-shopify-topic": "themes/publish" }, 400],
    ["a 5,000-character shop domain", { "x-shopify-shop-domain": `${"a".repeat(5000)}.myshopify.com` }, 400],
    ["a 5,000-character webhook id", { "x-shopify-webhook-id": "w".repeat(5000) }, 400],
    ["a 5,000-character event id", { "x-shopify-event-id": "e".repeat(5000) }, 400],
    ["a 5,000-character HMAC", { "x-shopify-hmac-sha256": "h".repeat(5000) }, 400],
    ["a shop that never installed the app", { "x-shopify-shop-domain": "stranger.myshopify.com" }, 404],
    ["a sync topic for an uninstalled shop", { "x-shopify-shop-domain": gone }, 404],
  ])(`answers 4xx to %s and stores nothing (${via})`, async (_name, headers, status) => {
    const before = await stored();
    const res = await sendWebhook(app.url, { topic: "customers/create", shop: victim, body: customerBody({}), headers });
    expect(res.status).toBe(status);
    expect(await stored()).toBe(before);
  });

  it.each(["+275760-09-13T00:00:00Z", "-000001-01-01T00:00:00Z", "1e20", "0000-01-01", "é"])(`records a delivery with a triggered-at of %s as untimed, never a 5xx (${via})`, async (value) => {
    const res = await sendWebhook(app.url, { topic: "customers/create", shop: victim, body: customerBody({}), triggeredAt: value });
    expect(res.status).toBe(200);
  });

  it(`accepts a compliance request for an uninstalled shop (Shopify sends them after an uninstall) (${via})`, async () => {
    const res = await sendWebhook(app.url, { topic: "shop/redact", shop: gone, body: { shop_id: 1, shop_domain: gone } });
    expect(res.status).toBe(200);
    expect(await app.db.prisma.webhookDelivery.count({ where: { shop: gone, topic: "shop/redact" } })).toBe(1);
  });

  it(`accepts the previous app secret during a rotation, and no other (${via})`, async () => {
    const body = customerBody({});
    expect((await sendWebhook(app.url, { topic: "customers/create", shop: victim, body, secret: PREVIOUS_SECRET })).status).toBe(200);
    expect((await sendWebhook(app.url, { topic: "customers/create", shop: victim, body, secret: "some-other-secret-123" })).status).toBe(401);
  });

  it(`computes the HMAC over the bytes received: a signed body that is not UTF-8 is refused as such, not as forged (${via})`, async () => {
    const bytes = Buffer.concat([Buffer.from('{"id":1,"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const headers = webhookHeaders({ topic: "customers/create", shop: victim, body: "" });
    headers["x-shopify-hmac-sha256"] = createHmac("sha256", TEST_API_SECRET).update(bytes).digest("base64");
    const res = await fetch(`${app.url}/webhooks`, { method: "POST", headers, body: bytes });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("Body is not UTF-8");
  });

  it(`keeps multi-byte text exactly as signed (${via})`, async () => {
    const body = JSON.stringify({ ...customerBody({}), first_name: "Zoë 😀 \u2028" });
    const res = await sendWebhook(app.url, { topic: "customers/create", shop: victim, body, eventId: `utf8-${via}` });
    expect(res.status).toBe(200);
    const row = await app.db.prisma.webhookDelivery.findFirst({ where: { eventId: `utf8-${via}` } });
    expect(row?.rawBody).toBe(body);
  });
});
