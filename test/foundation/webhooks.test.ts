import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRemixOnlyServer, startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";
import { readBodyLimited } from "~/server/body.server";
import { fixture, sendWebhook } from "../support/webhooks";

const shop = "hmac-test.myshopify.com";

// Two ways in, one behaviour: the production server answers POST /webhooks in front of Remix
// (app/server/http.server.ts); a server that hosts only the Remix build (the Shopify CLI's dev
// server) reaches the Remix route. Both hand the request to app/webhooks/ingest.server.ts.
const TRANSPORTS = ["production server", "Remix route alone"] as const;

describeEachDatabase("webhook endpoint", (database) => {
  describe.each(TRANSPORTS)("%s", (via) => {
    let app: TestApp;
    let remixOnly: Awaited<ReturnType<typeof startRemixOnlyServer>> | undefined;
    beforeAll(async () => {
      app = await startTestApp({ database });
      if (via === "Remix route alone") {
        remixOnly = await startRemixOnlyServer();
        app = { ...app, url: remixOnly.url };
      }
      // Deliveries are accepted only for installed shops.
      await app.db.prisma.shop.createMany({ data: [shop, "big.myshopify.com", "recorded.myshopify.com"].map((domain) => ({ domain })) });
    });
    afterAll(async () => {
      await remixOnly?.close();
      await app.close();
    });

    it("answers 200 to a delivery signed with the app secret", async () => {
      const res = await sendWebhook(app.url, { topic: "customers/create", shop, body: fixture("customers/create") });
      expect(res.status).toBe(200);
    });

    it("answers 401 to a delivery signed with another secret", async () => {
      const res = await sendWebhook(app.url, {
        topic: "customers/create",
        shop,
        body: fixture("customers/create"),
        secret: "not-the-app-secret",
      });
      expect(res.status).toBe(401);
    });

    it("answers 401 when the body was changed after signing", async () => {
      const body = fixture("orders/create");
      const { webhookHeaders } = await import("../support/webhooks");
      const headers = webhookHeaders({ topic: "orders/create", shop, body });
      const res = await fetch(`${app.url}/webhooks`, { method: "POST", headers, body: body.replace("USD", "EUR") });
      expect(res.status).toBe(401);
    });

    it.each(["x-shopify-topic", "x-shopify-hmac-sha256", "x-shopify-shop-domain", "x-shopify-webhook-id"])(
      "answers 400 when %s is missing",
      async (name) => {
        const res = await sendWebhook(app.url, {
          topic: "customers/create",
          shop,
          body: fixture("customers/create"),
          headers: { [name]: undefined },
        });
        expect(res.status).toBe(400);
        expect(await res.text()).toContain(name);
      }
    );

    it("answers 405 to a GET", async () => {
      const res = await fetch(`${app.url}/webhooks`);
      expect(res.status).toBe(405);
    });

    it("answers 413 to a body over 2 MiB and records nothing", async () => {
      const huge = JSON.stringify({ id: 1, note: "x".repeat(3 * 1024 * 1024) });
      const res = await sendWebhook(app.url, { topic: "orders/create", shop: "big.myshopify.com", body: huge });
      expect(res.status).toBe(413);
      expect(await app.db.prisma.webhookDelivery.count({ where: { shop: "big.myshopify.com" } })).toBe(0);
    });

    it("answers 413 to a body streamed past 2 MiB with no declared length, and records nothing", async () => {
      const huge = JSON.stringify({ id: 2, note: "y".repeat(3 * 1024 * 1024) });
      const { webhookHeaders } = await import("../support/webhooks");
      const headers = webhookHeaders({ topic: "orders/create", shop: "big.myshopify.com", body: huge });
      const bytes = new TextEncoder().encode(huge);
      // Chunked: the limit is found while reading, not from content-length.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
          controller.close();
        },
      });
      const res = await fetch(`${app.url}/webhooks`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.text()).toBe("Payload too large");
      expect(await app.db.prisma.webhookDelivery.count({ where: { shop: "big.myshopify.com" } })).toBe(0);
    });

    it("records a good delivery before answering", async () => {
      const res = await sendWebhook(app.url, {
        topic: "orders/create",
        shop: "recorded.myshopify.com",
        body: fixture("orders/create"),
        eventId: "e-1",
      });
      expect(res.status).toBe(200);
      const [row] = await app.db.prisma.webhookDelivery.findMany({ where: { shop: "recorded.myshopify.com" } });
      expect(row).toMatchObject({ topic: "orders/create", eventId: "e-1", status: "queued" });
      expect(row.rawBody).toBe(fixture("orders/create"));
    });

    it("answers 200 to privacy requests for a shop it does not know and stores nothing about that shop; 404 to its app/uninstalled", async () => {
      const stranger = "never-installed.myshopify.com";
      const requests = [
        ["customers/redact", { shop_id: 1, shop_domain: stranger, customer: { id: 5, email: "a@example.com" }, orders_to_redact: [7] }],
        ["customers/data_request", { shop_id: 1, shop_domain: stranger, customer: { id: 5 }, orders_requested: [7] }],
        ["shop/redact", { shop_id: 1, shop_domain: stranger }],
      ] as const;
      for (const [topic, body] of requests) {
        // Shopify's retry (same event) gets the same answer: nothing makes it retry for days.
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await sendWebhook(app.url, { topic, shop: stranger, body, eventId: `privacy-${topic}` });
          expect(res.status, topic).toBe(200);
        }
      }
      const lifecycle = await sendWebhook(app.url, { topic: "app/uninstalled", shop: stranger, body: { id: 1, myshopify_domain: stranger } });
      expect(lifecycle.status).toBe(404);
      expect(await app.db.prisma.webhookDelivery.count({ where: { shop: stranger } })).toBe(0);
      expect(await app.db.prisma.syncCounter.count({ where: { shop: stranger } })).toBe(0);
      expect(await app.db.prisma.shop.count({ where: { domain: stranger } })).toBe(0);
    });

    it("stores bodies and headers exactly, whatever quotes, backslashes and SQL they hold, and counts a repeat once", async () => {
      const hostile = [
        String.raw`{"note":"it's","q":"''","b":"\\","bq":"\\'","sql":"'); DELETE FROM \"Shop\"; --"}`,
        String.raw`{"dollar":"$1 $$ $q$","e":"E'\\x41'","emoji":"Zoë 美咲 🎉","nl":"a\\nb"}`,
      ];
      for (const [i, body] of hostile.entries()) {
        JSON.parse(body);
        const eventId = `it's-${i}\\`;
        expect((await sendWebhook(app.url, { topic: "customers/update", shop: "recorded.myshopify.com", body, eventId })).status).toBe(200);
        expect((await sendWebhook(app.url, { topic: "customers/update", shop: "recorded.myshopify.com", body, eventId })).status).toBe(200);
        const rows = await app.db.prisma.webhookDelivery.findMany({ where: { shop: "recorded.myshopify.com", eventId } });
        expect(rows.map((r) => r.rawBody)).toEqual([body]);
      }
      expect(await app.db.prisma.shop.count({ where: { domain: "recorded.myshopify.com" } })).toBe(1);
      const counter = await app.db.prisma.syncCounter.findUniqueOrThrow({ where: { shop_kind: { shop: "recorded.myshopify.com", kind: "customer" } } });
      expect(counter).toMatchObject({ received: 2, duplicates: 2 });
    });
  });
});

// What lets the 413 go out on the connection instead of a reset: the body is neither cancelled
// nor left locked (the server may still drain or discard it).
describe("request bodies read up to a limit", () => {
  const streamOf = (chunks: number, size: number) => {
    const seen = { pulled: 0, cancelled: false };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (seen.pulled++ >= chunks) controller.close();
        else controller.enqueue(new Uint8Array(size));
      },
      cancel() {
        seen.cancelled = true;
      },
    }, { highWaterMark: 0 }); // nothing pulled until someone reads
    return { stream, seen };
  };
  const requestWith = (stream: ReadableStream<Uint8Array>, declared?: number) =>
    ({ headers: new Headers(declared === undefined ? {} : { "content-length": String(declared) }), body: stream }) as unknown as Request;

  it("refuses a body declared too long without opening it", async () => {
    const { stream, seen } = streamOf(4, 1024);
    expect(await readBodyLimited(requestWith(stream, 10_000), 4096)).toEqual({ ok: false, refusal: "too-large" });
    expect(stream.locked).toBe(false);
    expect(seen.pulled).toBe(0);
  });

  it("stops reading a streamed body at the limit, and leaves it uncancelled and unlocked", async () => {
    const { stream, seen } = streamOf(100, 1024);
    expect(await readBodyLimited(requestWith(stream), 4096)).toEqual({ ok: false, refusal: "too-large" });
    expect(stream.locked).toBe(false);
    expect(seen.cancelled).toBe(false);
    expect(seen.pulled).toBeLessThan(10);
  });

  it("returns a body within the limit whole", async () => {
    const { stream } = streamOf(3, 1024);
    const read = await readBodyLimited(requestWith(stream), 4096);
    expect(read.ok && read.body.byteLength).toBe(3072);
  });
});
