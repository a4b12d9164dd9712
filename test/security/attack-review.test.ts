import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectShop } from "~/backfill/connect.server";
import { loadData, routeData } from "../admin/support";
import { install, until } from "../backfill/helpers";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";
import { fixture } from "../support/webhooks";
import { orderBody } from "../sync/fixtures";
import { postProxyEvent, productViewed, signedProxyQuery } from "../storefront/support";

// The attack review of issue #34, each finding replayed against the running app over HTTP.
describe("attack review", () => {
  let h: PipelineHarness;

  beforeAll(async () => {
    h = await startPipelineHarness();
    h.startWorkers();
  }, 120_000);
  afterAll(() => h.close());

  const shopRow = (shop: string) => h.app.db.prisma.shop.findUnique({ where: { domain: shop } });
  const lastDelivery = (shop: string, topic: string) =>
    h.app.db.prisma.webhookDelivery.findFirst({ where: { shop, topic }, orderBy: { receivedAt: "desc" } });

  describe("1. a storefront visitor cannot write into a customer's record", () => {
    const shop = "visitor-attack.myshopify.com";
    const victim = { id: "4242", email: "victim.customer@example.com" };

    it("a visitorId equal to a customer's id files the event on a visitor reference, not on the customer", async () => {
      await h.connect(shop);
      await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { storefrontEvents: true } } });
      await h.deliver({ topic: "customers/create", shop, body: customerBody(victim) });
      expect(h.emulator.person(victim.email)).toBeDefined();

      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), { ...productViewed(victim.id), url: "https://evil.example.com/phish" });
      expect(res.status).toBe(202);
      await h.settle();
      const sent = h.emulator.requests.filter((r) => r.path === "/api/events/product/viewed").map((r) => r.body as { referenceId?: string });
      expect(sent.map((b) => b.referenceId)).toEqual([`visitor:${victim.id}`]);
      expect(h.emulator.personEvents(victim.email).map((e) => e.event)).not.toContain("product_viewed");
    });
  });

  describe("3. lifecycle deliveries act only as Shopify confirms them", () => {
    const live = "live-shop.myshopify.com";
    const leaving = "leaving-shop.myshopify.com";

    beforeAll(async () => {
      await install(h, live);
      await install(h, leaving);
    });

    it("a captured app/uninstalled replayed with a fresh X-Shopify-Triggered-At leaves a live shop installed; a replayed shop/redact purges nothing", async () => {
      const captured = { id: 1, myshopify_domain: live, domain: null };
      await h.deliver({ topic: "app/uninstalled", shop: live, body: captured, triggeredAt: new Date(Date.now() + 60_000).toISOString() });
      expect(await lastDelivery(live, "app/uninstalled")).toMatchObject({ outcome: "ignored" });
      expect((await shopRow(live))?.uninstalledAt).toBeNull();
      expect(await h.app.db.prisma.session.count({ where: { shop: live } })).toBeGreaterThan(0);

      await h.deliver({ topic: "shop/redact", shop: live, body: { shop_id: 1, shop_domain: live } });
      expect((await shopRow(live))?.serviceKeyEnc).toBeTruthy();
    });

    it("app/scopes_update records the scopes Shopify reports for the shop, not what a replayed body claims", async () => {
      h.app.admin.grantScopes(live, ["read_customers", "read_orders"]);
      const replayed = { id: 1, shop_id: "gid://shopify/Shop/999", previous: [], current: ["read_products"], updated_at: "2026-01-01T00:00:00Z" };
      await h.deliver({ topic: "app/scopes_update", shop: live, body: replayed });
      expect((await shopRow(live))?.scopes).toBe("read_customers,read_orders");
    });

    it("Shopify's 2026-04 app/uninstalled sample (both domains null) uninstalls a shop whose token Shopify revoked", async () => {
      h.app.admin.uninstall(leaving);
      const res = await h.send({ topic: "app/uninstalled", shop: leaving, body: fixture("app/uninstalled") });
      expect(res.status).toBe(200);
      await h.settle();
      expect(await lastDelivery(leaving, "app/uninstalled")).toMatchObject({ outcome: "handled" });
      expect((await shopRow(leaving))?.uninstalledAt).not.toBeNull();
      expect(await h.app.db.prisma.session.count({ where: { shop: leaving } })).toBe(0);
    });
  });

  describe("4. customers/redact erases every mention and deletes the contact by default", () => {
    const shop = "erasure.myshopify.com";
    const customer = { id: "60616061", email: "erase.everything@example.com" };
    const orderId = "820982911946154508";

    /**
     * Every text a row of the shop holds, in any table: the oracle (not the redaction's matcher).
     * The service deletion itself carries the address until it is sent (retention removes it).
     */
    async function everythingStored(): Promise<string> {
      const rows = await h.app.db.sql.query<{ t: string }>(
        `SELECT "rawBody" AS t FROM "WebhookDelivery" WHERE shop = $1
         UNION ALL SELECT call::text FROM "OutboundCall" WHERE shop = $1 AND call->>'op' IS DISTINCT FROM 'person.delete'
         UNION ALL SELECT "objectKey" || state::text FROM "ObjectState" WHERE shop = $1
         UNION ALL SELECT snapshot::text FROM "AbandonmentTimer" WHERE shop = $1
         UNION ALL SELECT "orderId" FROM "CompletedCheckout" WHERE shop = $1`,
        [shop],
      );
      return rows.map((r) => r.t).join("\n");
    }

    it("removes refunds naming the order by number, after the export listed them; deletes the service contact with no setting on", async () => {
      await install(h, shop);
      await h.deliver({ topic: "customers/create", shop, body: customerBody(customer) });
      await h.deliver({
        topic: "orders/create",
        shop,
        body: orderBody({
          id: orderId,
          admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
          email: customer.email,
          customer: { id: Number(customer.id), admin_graphql_api_id: `gid://shopify/Customer/${customer.id}`, email: customer.email },
        }),
      });
      // Shopify's refunds/create names the order by a bare number only.
      const refund = fixture("refunds/create").replace(/"order_id":\s*\d+/g, `"order_id": ${orderId}`);
      await h.deliver({ topic: "refunds/create", shop, body: refund });
      expect(await everythingStored()).toContain(orderId);

      const dataRequest = { shop_id: 1, shop_domain: shop, customer: { id: Number(customer.id), email: customer.email }, orders_requested: [orderId], data_request: { id: 1 } };
      await h.deliver({ topic: "customers/data_request", shop, body: dataRequest });
      const request = await lastDelivery(shop, "customers/data_request");
      const exported = await fetch(`${h.app.url}/app/privacy-export?shop=${shop}&id=${request!.id}`, {
        headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await mintSessionToken({ shop })}` },
      });
      expect(exported.status).toBe(200);
      const data = (await exported.json()) as { webhookDeliveries: { topic: string }[] };
      expect(data.webhookDeliveries.map((d) => d.topic)).toContain("refunds/create");

      const redact = `{"shop_id":1,"shop_domain":"${shop}","customer":{"id":${customer.id},"email":"${customer.email}"},"orders_to_redact":[${orderId}]}`;
      await h.deliver({ topic: "customers/redact", shop, body: redact });
      await until("the contact's deletion", async () => h.emulator.person(customer.email) === undefined);
      const left = await everythingStored();
      for (const mention of [orderId, customer.id, customer.email]) expect(left).not.toContain(mention);
    });

    it("a history import whose export predates the erasure does not record the customer again", async () => {
      const importRow = (eventId: string, body: object) =>
        h.app.db.sql.query(
          `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source)
           VALUES (gen_random_uuid()::text, $1, 'customers/update', $2, $2, $3, 'backfill') ON CONFLICT (shop, topic, "eventId") DO NOTHING`,
          [shop, eventId, JSON.stringify(body)],
        );
      await importRow("backfill:old:erased", { id: Number(customer.id), admin_graphql_api_id: `gid://shopify/Customer/${customer.id}`, email: customer.email });
      await importRow("backfill:old:other", { id: 6062, admin_graphql_api_id: "gid://shopify/Customer/6062", email: "still.here@example.com" });
      await h.settle();
      const left = await everythingStored();
      expect(left).not.toContain(customer.email);
      expect(left).toContain("still.here@example.com");
    });

    it("the Privacy page shows the merchant's choice, and keeping the contact is a choice made there", async () => {
      const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
      const page = async () =>
        (await fetch(`${h.app.url}/app/privacy?embedded=1&shop=${shop}&host=${host}&id_token=${await mintSessionToken({ shop })}`, { headers: { "user-agent": CHROME_UA } })).text();
      expect(await page()).toContain('data-erasure-choice="delete"');
      const saved = await fetch(`${h.app.url}/app/privacy.data`, {
        method: "POST",
        headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await mintSessionToken({ shop })}`, "content-type": "application/x-www-form-urlencoded" },
        body: "eraseContactOnRedact=false",
      });
      expect(saved.status).toBe(200);
      expect(await page()).toContain('data-erasure-choice="keep"');

      const kept = { id: "6063", email: "kept.contact@example.com" };
      await h.deliver({ topic: "customers/create", shop, body: customerBody(kept) });
      await h.deliver({ topic: "customers/redact", shop, body: { shop_id: 1, shop_domain: shop, customer: { id: Number(kept.id), email: kept.email }, orders_to_redact: [] } });
      expect((await lastDelivery(shop, "customers/redact"))?.outcomeDetail).toMatch(/service contact kept/);
      expect(h.emulator.person(kept.email)).toBeDefined();
    });
  });

  describe("6. hand-off links from the service", () => {
    const shop = "handoff.myshopify.com";
    let hostile: Server;

    afterAll(() => new Promise<void>((resolve) => hostile.close(() => resolve())));

    it("a javascript: preview link from the service is never rendered", async () => {
      // A service (or a man in the middle of a plain-HTTP one) that answers templates with script links.
      hostile = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", async () => {
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === "string" && !["host", "content-length", "connection"].includes(e[0])),
          );
          const answer = await fetch(`${h.emulator.url}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
          const text = (await answer.text()).replace(/"previewUrl":\s*"[^"]*"/g, '"previewUrl":"javascript:alert(document.domain)"');
          res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
          res.end(text);
        });
      });
      await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve));
      await install(h, shop);
      await connectShop(shop, { apiKey: h.emulator.apiKey, baseUrl: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`, importHistory: false });

      const data = await routeData<{ templates: { previewUrl: string | null }[] }>(await loadData(h.app.url, shop, "/app/templates"), "routes/app.templates");
      expect(data.templates.length).toBeGreaterThan(0);
      expect(data.templates.map((t) => t.previewUrl)).toEqual(data.templates.map(() => null));
    });
  });

  describe("7. /auth/exit-iframe", () => {
    const shop = "exit.myshopify.com";
    const exit = (target: string) =>
      fetch(`${h.app.url}/auth/exit-iframe?shop=${shop}&host=${Buffer.from(`${shop}/admin`).toString("base64url")}&exitIframe=${encodeURIComponent(target)}`, {
        headers: { "user-agent": CHROME_UA },
        redirect: "manual",
      });

    it("refuses a target outside the app and the shop's admin", async () => {
      for (const target of ["https://evil.example.com", "//evil.example.com/x", "javascript:alert(1)", "https://exit.myshopify.com.evil.example.com/", "https://admin.shopify.com.evil.example.com/"]) {
        const res = await exit(target);
        expect(res.status, target).toBe(400);
        expect(await res.text()).not.toContain("evil");
      }
    });

    // (The library's own relative /auth target needs an https app URL, which tests do not have.)
    it("still renders an exit to Shopify's admin (the shop's own myshopify admin needs its session token: test/security/edge-probes.test.ts)", async () => {
      expect((await exit("https://admin.shopify.com/store/exit/apps")).status).toBe(200);
    });
  });

  describe("8. smaller findings", () => {
    it("the app proxy refuses a repeated reserved parameter (shop=B&shop=A), which the signature check and the app read differently", async () => {
      // A genuine signed request for the attacker's own shop, with the victim's shop put in front:
      // Shopify's library verifies the last value, the app would act on the first.
      const genuine = signedProxyQuery({ shop: "proxy-attacker.myshopify.com" });
      const params = new URLSearchParams([["shop", "proxy-victim.myshopify.com"], ...genuine.entries()]);
      const res = await postProxyEvent(h.app.url, params, productViewed("v-dup"));
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "Repeated query parameter shop" });
    });

    it("a signed body naming its shop is refused under another shop's header, whatever the topic", async () => {
      const victim = "body-victim.myshopify.com";
      await h.connect(victim);
      const body = { ...customerBody({ id: "8181" }), shop_domain: "body-attacker.myshopify.com" };
      const res = await h.send({ topic: "customers/update", shop: victim, body });
      expect(res.status).toBe(400);
      expect(await res.text()).toBe("Body names another shop than the header");
    });
  });
});
