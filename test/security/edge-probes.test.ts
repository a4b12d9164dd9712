import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtApp } from "../support/app";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";
import { postProxyEvent, productViewed, signedProxyQuery } from "../storefront/support";

// Issue 48, items 6, 7 and 8, over HTTP against the production build.
let h: PipelineHarness;

beforeAll(async () => {
  h = await startPipelineHarness();
}, 120_000);
afterAll(() => h.close());

describe("6. the header deadline, /readyz and /metrics", () => {
  // First in the file: the server has just started, so Node's old 30 s check would come late.
  it("a connection that never finishes its headers is answered 408 and closed within the 10 s header deadline and the 1 s check", async () => {
    const { port } = new URL(h.app.url);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => undefined);
    const started = Date.now();
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString("latin1")));
    socket.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ");
    await new Promise<void>((resolve) => socket.on("close", () => resolve()));
    const elapsed = Date.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(elapsed).toBeGreaterThanOrEqual(9_500);
    // 10 s + the 1 s check, with room for a busy machine; Node's default 30 s check gave 22–40 s.
    expect(elapsed).toBeLessThan(20_000);
  }, 60_000);

  it("/readyz says the database is unreachable without naming its address", async () => {
    const app = await builtApp();
    const unreachable = app.openDatabase({ kind: "postgres", url: "postgresql://postgres@127.0.0.1:15432/postgres" });
    app.installDatabase(unreachable);
    try {
      const res = await fetch(`${h.app.url}/readyz`);
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ ready: false, checks: { database: "unreachable" } });
      expect(text).not.toMatch(/127\.0\.0\.1|15432|ECONNREFUSED/);
    } finally {
      app.installDatabase(h.app.db);
      await unreachable.close().catch(() => undefined);
    }
  }, 60_000);

  it("/metrics without METRICS_TOKEN answers a direct local connection, and refuses one carrying any proxy header", async () => {
    expect((await fetch(`${h.app.url}/metrics`)).status).toBe(200);
    const proxied: Record<string, string>[] = [
      { "x-real-ip": "203.0.113.7" },
      { "x-forwarded-for": "203.0.113.7" },
      { forwarded: "for=203.0.113.7" },
      { "x-forwarded-host": "app.example.com" },
      { "x-forwarded-proto": "https" },
      { via: "1.1 nginx" },
      { "true-client-ip": "203.0.113.7" },
      { "cf-connecting-ip": "203.0.113.7" },
    ];
    for (const headers of proxied) expect((await fetch(`${h.app.url}/metrics`, { headers })).status, JSON.stringify(headers)).toBe(403);
  });
});

describe("7. /auth/exit-iframe goes only to the app, Shopify's admin, or the authenticated shop's admin", () => {
  const shop = "edge-exit.myshopify.com";
  const exit = (target: string, idToken?: string, asShop = shop) => {
    const params = new URLSearchParams({ shop: asShop, host: Buffer.from(`${asShop}/admin`).toString("base64url"), exitIframe: target });
    if (idToken) params.set("id_token", idToken);
    return fetch(`${h.app.url}/auth/exit-iframe?${params}`, { headers: { "user-agent": CHROME_UA }, redirect: "manual" });
  };

  it("refuses a host that only begins like Shopify's admin, and any store's myshopify domain the request is not authenticated for", async () => {
    const token = await mintSessionToken({ shop });
    const refused: [string, string | undefined, string?][] = [
      ["https://admin.shopify.com.evil.example.com/", undefined],
      ["https://admin.shopify.com.evil.example.com/", token],
      // The shop parameter names the target's own store, but nothing proves the request comes from it.
      ["https://attacker-store.myshopify.com/admin", undefined, "attacker-store.myshopify.com"],
      // Authenticated, but for another store than the target's.
      ["https://attacker-store.myshopify.com/admin", token],
      ["https://attacker-store.myshopify.com/admin", token, "attacker-store.myshopify.com"],
      // A token signed with another secret proves nothing.
      [`https://${shop}/admin`, await mintSessionToken({ shop, secret: "another-apps-secret-0123456789" })],
      [`https://${shop}/admin`, undefined],
    ];
    for (const [target, idToken, asShop] of refused) {
      const res = await exit(target, idToken, asShop);
      expect(res.status, `${target} ${idToken ? "with" : "without"} token`).toBe(400);
      expect(await res.text()).not.toContain(new URL(target).hostname);
    }
  });

  it("renders an exit to Shopify's admin, and to the admin of the shop a valid session token names", async () => {
    const token = await mintSessionToken({ shop });
    expect((await exit("https://admin.shopify.com/store/edge-exit/apps")).status).toBe(200);
    const own = await exit(`https://${shop}/admin/apps`, token);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain(`https://${shop}/admin/apps`);
  });
});

describe("8. storefront events carry http(s) URLs only", () => {
  const shop = "edge-urls.myshopify.com";

  beforeAll(async () => {
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { storefrontEvents: true } } });
  });

  const queued = () => h.app.db.prisma.outboundCall.count({ where: { shop } });

  it("refuses javascript: and data: page and image URLs (400), and queues nothing for the service", async () => {
    const before = await queued();
    const hostile = [
      { ...productViewed("v-js"), url: "javascript:alert(document.cookie)" },
      { ...productViewed("v-data"), url: "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==" },
      { ...productViewed("v-img"), product: { ...productViewed().product, imageUrl: "javascript:alert(1)" } },
      { ...productViewed("v-purl"), product: { ...productViewed().product, url: "data:,x" } },
    ];
    for (const event of hostile) {
      const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), event);
      expect(res.status, JSON.stringify(event)).toBe(400);
    }
    expect(await queued()).toBe(before);
    // An https page is still accepted.
    expect((await postProxyEvent(h.app.url, signedProxyQuery({ shop }), productViewed("v-ok"))).status).toBe(202);
    expect(await queued()).toBeGreaterThan(before);
  });
});
