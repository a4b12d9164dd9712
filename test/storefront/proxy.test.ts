import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { cartEvent, postProxyEvent, productViewed, signedProxyQuery } from "./support";

describeEachDatabase("app proxy: storefront events", (database) => {
  let h: PipelineHarness;
  const shop = "proxy-shop.myshopify.com";
  const calls = () => h.app.db.prisma.outboundCall.count({ where: { shop } });
  const sentTo = (path: string) => h.emulator.requests.filter((r) => r.method === "POST" && r.path === path);

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    await recordInstall(shop, "read_customers");
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { storefrontEvents: true } } });
    h.startWorkers();
  });
  afterAll(() => h.close());

  describe("a signed event is delivered to the service", () => {
    it("product viewed by a visitor the tracker knows → product/viewed with the visitor id", async () => {
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), productViewed("vid-123"));
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ queued: true, event: "product_viewed" });
      await h.settle();
      const [sent] = sentTo("/api/events/product/viewed");
      expect(sent.body).toMatchObject({ referenceId: "visitor:vid-123", source: "shopify", id: "8001", name: "Red scarf", price: 25, currency: "USD" });
      expect(sent.status).toBe(200);
    });

    it("a logged-in customer (signed by Shopify) is attached by the email the customer webhooks recorded, never one from the body", async () => {
      await h.send({ topic: "customers/create", shop, body: customerBody({ id: "555", email: "logged.in@example.com" }) });
      await h.settle();
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop, loggedInCustomerId: "555" }), productViewed("vid-9"));
      expect(res.status).toBe(202);
      await h.settle();
      expect(h.emulator.personEvents("logged.in@example.com").map((e) => e.event)).toContain("product_viewed");
      // An email in the body is no field of the event: refused.
      const forged = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), { ...productViewed("vid-9"), email: "victim@example.com" });
      expect(forged.status).toBe(400);
    });

    it("a logged-in customer the webhooks never told us about falls back to the tracker's visitor id", async () => {
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop, loggedInCustomerId: "777" }), productViewed("vid-777"));
      expect(res.status).toBe(202);
      await h.settle();
      expect(sentTo("/api/events/product/viewed").at(-1)?.body).toMatchObject({ referenceId: "visitor:vid-777" });
      expect((await fetch(`${h.app.url}/proxy/events?${signedProxyQuery({ shop })}`)).status).toBe(405);
    });

    it("a logged-in customer deleted since is not attached by the email the webhooks recorded: the event falls back to the tracker's visitor id", async () => {
      await h.send({ topic: "customers/create", shop, body: customerBody({ id: "556", email: "deleted.since@example.com" }) });
      await h.settle();
      await h.send({ topic: "customers/delete", shop, body: { id: 556 } });
      await h.settle();
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop, loggedInCustomerId: "556" }), productViewed("vid-556"));
      expect(res.status).toBe(202);
      await h.settle();
      const sent = sentTo("/api/events/product/viewed").at(-1)?.body;
      expect(sent).toMatchObject({ referenceId: "visitor:vid-556" });
      expect(JSON.stringify(sent)).not.toContain("deleted.since");
    });

    it("cart events: the first for a cart is cart/created, the next cart/updated; the cart key never leaves", async () => {
      const q = () => signedProxyQuery({ shop });
      expect((await postProxyEvent(h.app.url, q(), cartEvent("product_added_to_cart", "vid-cart", "tok-1"))).status).toBe(202);
      await h.settle();
      expect((await postProxyEvent(h.app.url, q(), cartEvent("cart_viewed", "vid-cart", "tok-1", 2))).status).toBe(202);
      await h.settle();
      const created = sentTo("/api/events/cart/created");
      const updated = sentTo("/api/events/cart/updated");
      expect(created.map((r) => (r.body as { id: string }).id)).toEqual(["tok-1"]);
      expect(updated.map((r) => (r.body as { id: string }).id)).toEqual(["tok-1"]);
      expect(updated[0].body).toMatchObject({ referenceId: "visitor:vid-cart", total_products: 2, total: 50, products: [{ id: "8001", quantity: 2 }] });
      expect(JSON.stringify(h.emulator.requests)).not.toContain("secret-cart-key");
    });

    it("a signup (the loader's visitor_identified) → a silent storefront_identified event on the email typed, naming the tracker's visitor", async () => {
      const q = () => signedProxyQuery({ shop });
      const signup = { event: "visitor_identified", visitorId: "vid-signup", form: "newsletter", email: "signup@example.com", phone: "+1 555 555 0100" };
      const res = await postProxyEvent(h.app.url, q(), signup);
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ queued: true, event: "visitor_identified" });
      await h.settle();
      const sent = sentTo("/api/events").filter((r) => (r.body as { eventName?: string }).eventName === "storefront_identified");
      expect(sent.map((r) => r.body)).toEqual([
        {
          email: "signup@example.com",
          source: "shopify",
          silent: true,
          eventName: "storefront_identified",
          properties: { visitorReference: "visitor:vid-signup", form: "newsletter", email: "signup@example.com", phone: "+1 555 555 0100" },
        },
      ]);
      // A phone alone: on the tracker's visitor. Neither, a bad email, no visitor id, another form: refused.
      expect((await postProxyEvent(h.app.url, q(), { event: "visitor_identified", visitorId: "vid-phone", form: "contact", phone: "+44 20 7946 0000" })).status).toBe(202);
      await h.settle();
      expect(sentTo("/api/events").at(-1)?.body).toMatchObject({ referenceId: "visitor:vid-phone", silent: true, properties: { phone: "+44 20 7946 0000" } });
      const before = await calls();
      for (const bad of [
        { event: "visitor_identified", visitorId: "v", form: "newsletter" },
        { event: "visitor_identified", visitorId: "v", form: "newsletter", email: "not-an-email" },
        { event: "visitor_identified", visitorId: "v", form: "newsletter", phone: "call me" },
        { event: "visitor_identified", form: "newsletter", email: "a@example.com" },
        { event: "visitor_identified", visitorId: "v", form: "login", email: "a@example.com" },
      ]) {
        expect((await postProxyEvent(h.app.url, q(), bad)).status).toBe(400);
      }
      expect(await calls()).toBe(before);
    });

    it("an anonymous visitor with no identity is counted, not sent", async () => {
      const before = await calls();
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), productViewed());
      expect(await res.json()).toEqual({ queued: false, reason: "anonymous" });
      expect(await calls()).toBe(before);
      const state = await h.app.db.prisma.storefrontState.findUnique({ where: { shop } });
      expect(state?.eventsAnonymous).toBe(1);
    });

    it("a shop that is not connected, or has storefront events off, queues nothing", async () => {
      const other = "proxy-unconnected.myshopify.com";
      await recordInstall(other, "read_customers");
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop: other }), productViewed("vid-x"));
      expect(await res.json()).toEqual({ queued: false, reason: "not_connected" });
      expect(await h.app.db.prisma.outboundCall.count({ where: { shop: other } })).toBe(0);

      // Connected, the merchant has storefront events off: the gate, not the connection, refuses.
      const off = "proxy-events-off.myshopify.com";
      await recordInstall(off, "read_customers");
      await h.connect(off);
      await h.app.db.prisma.shop.update({ where: { domain: off }, data: { settings: { storefrontEvents: false } } });
      const refused = await postProxyEvent(h.app.url, signedProxyQuery({ shop: off }), productViewed("vid-off"));
      expect(refused.status).toBe(202);
      expect(await refused.json()).toEqual({ queued: false, reason: "disabled" });
      await h.settle();
      expect(await h.app.db.prisma.outboundCall.count({ where: { shop: off } })).toBe(0);
    });
  });

  describe("hostile senders", () => {
    it("no signature, a wrong one, another secret's, a stale timestamp → 401, nothing queued", async () => {
      const before = await calls();
      const good = signedProxyQuery({ shop });
      const missing = new URLSearchParams(good);
      missing.delete("signature");
      const wrong = new URLSearchParams(good);
      wrong.set("signature", "0".repeat(64));
      for (const query of [missing, wrong, signedProxyQuery({ shop, secret: "not-our-secret" }), signedProxyQuery({ shop, timestamp: Math.floor(Date.now() / 1000) - 600 })]) {
        const res = await postProxyEvent(h.app.url, query, productViewed("vid-123"));
        expect(res.status).toBe(401);
      }
      expect(await calls()).toBe(before);
    });

    it("a replayed signature with other params (another customer, another shop) → 401", async () => {
      const good = signedProxyQuery({ shop });
      const otherCustomer = new URLSearchParams(good);
      otherCustomer.set("logged_in_customer_id", "555");
      const otherShop = new URLSearchParams(good);
      otherShop.set("shop", "someone-else.myshopify.com");
      const extra = new URLSearchParams(good);
      extra.append("debug", "1");
      for (const query of [otherCustomer, otherShop, extra]) {
        expect((await postProxyEvent(h.app.url, query, productViewed("vid-123"))).status).toBe(401);
      }
    });

    it("oversized, malformed or invalid bodies → 400 and nothing enqueued", async () => {
      const before = await calls();
      const huge = { ...productViewed("vid-big"), product: { ...productViewed().product, title: "x".repeat(20_000) } };
      const bodies: unknown[] = [
        JSON.stringify(huge),
        "x".repeat(2_000_000),
        "{not json",
        { event: "order_paid", visitorId: "v" },
        { event: "product_viewed", visitorId: "v" },
        { ...productViewed("v"), product: { id: "1", price: "free" } },
        { ...cartEvent("cart_viewed", "v", "t"), cart: { lines: Array.from({ length: 101 }, () => ({ productId: "1", title: "a", quantity: 1 })) } },
      ];
      for (const body of bodies) {
        const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), body as string);
        expect(res.status, String(body).slice(0, 40)).toBe(400);
        expect((await res.json()) as object).toHaveProperty("error");
      }
      expect(await calls()).toBe(before);
    });

    it("a huge body streamed without Content-Length is cut off at the bound → 400, nothing enqueued", async () => {
      const before = await calls();
      const chunk = Buffer.from(`{"event":"product_viewed","visitorId":"v","product":{"id":"1","title":"${"x".repeat(1000)}`);
      let sent = 0;
      // node:http with no Content-Length: the body goes chunked, as a sender hiding its size would.
      const status = await new Promise<number | "reset">((resolve) => {
        let answered = false;
        const req = request(`${h.app.url}/proxy/events?${signedProxyQuery({ shop })}`, { method: "POST", headers: { "content-type": "application/json" } });
        req.on("response", (res) => {
          answered = true;
          resolve(res.statusCode ?? 0);
          res.resume();
          req.destroy();
        });
        // Past the bound the app stops reading and drops the connection: the sender may see the
        // 400 or only the reset, depending on how much it had in flight.
        req.on("error", () => {
          if (!answered) resolve("reset");
          answered = true;
        });
        const pump = () => {
          while (!answered && sent < 5_000_000) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once("drain", pump);
          }
          if (!answered) req.end();
        };
        pump();
      });
      expect([400, "reset"]).toContain(status);
      expect(sent).toBeLessThan(5_000_000); // the app stopped reading long before the end
      expect(await calls()).toBe(before);
    });

    it("a flood from one visitor → 429 with Retry-After; other visitors are not held back", async () => {
      const before = await calls();
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 70; i++) {
        const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), productViewed("flooder"));
        statuses.push(res.status);
        if (res.status === 429) retryAfter = res.headers.get("retry-after");
        await res.arrayBuffer();
      }
      const limited = statuses.filter((s) => s === 429).length;
      // 30 per visitor per minute: 70 requests cover at most two windows.
      expect(limited).toBeGreaterThanOrEqual(10);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      expect(await calls()).toBe(before + (70 - limited));
      expect((await postProxyEvent(h.app.url, signedProxyQuery({ shop }), productViewed("someone-else"))).status).toBe(202);
      const state = await h.app.db.prisma.storefrontState.findUnique({ where: { shop } });
      expect(state?.eventsRateLimited).toBe(limited);
    });
  });
});
