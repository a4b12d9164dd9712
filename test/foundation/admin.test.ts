import { afterAll, beforeAll, expect, it } from "vitest";
import { openToken } from "~/shopify/session-storage.server";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

describeEachDatabase("embedded admin", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  async function openAdmin(shop: string, idToken: string): Promise<Response> {
    const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
    const url = `${app.url}/app?embedded=1&shop=${shop}&host=${host}&id_token=${idToken}`;
    return fetch(url, { headers: { "user-agent": CHROME_UA }, redirect: "manual" });
  }

  it("renders the index page for a valid session token", async () => {
    const shop = "render-test.myshopify.com";
    const res = await openAdmin(shop, await mintSessionToken({ shop }));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("Marketing Sync");
    expect(html).toContain("Not connected");
    expect(html).toContain(shop);
  });

  it("answers 401 to a session token signed with another secret", async () => {
    const shop = "forged-test.myshopify.com";
    const forged = await mintSessionToken({ shop, secret: "someone-elses-secret-123" });
    const res = await fetch(`${app.url}/app?shop=${shop}`, {
      headers: { "user-agent": CHROME_UA, authorization: `Bearer ${forged}` },
    });
    expect(res.status).toBe(401);
    expect(app.admin.calls.filter((c) => c.shop === shop)).toHaveLength(0);
    expect(await app.db.prisma.session.count({ where: { shop } })).toBe(0);
  });

  it("exchanges the token on the first load and stores the offline session", async () => {
    const shop = "install-test.myshopify.com";
    app.admin.addShop({ domain: shop, currencyCode: "EUR", primaryDomainUrl: "https://www.install-test.example/" });
    const res = await openAdmin(shop, await mintSessionToken({ shop }));
    expect(res.status).toBe(200);

    const exchanges = app.admin.calls.filter((c) => c.shop === shop && c.path === "/admin/oauth/access_token");
    expect(exchanges.length).toBeGreaterThanOrEqual(1);
    expect(exchanges[0].body).toMatchObject({ grant_type: "urn:ietf:params:oauth:grant-type:token-exchange" });

    const session = await app.db.prisma.session.findUnique({ where: { id: `offline_${shop}` } });
    // Both loaders of the first page may exchange at once; whichever session is stored must work.
    expect(app.admin.issued.has(openToken(session?.accessToken ?? null, shop) ?? "")).toBe(true); // sealed at rest
    expect(session?.isOnline).toBe(false);
    // The install also records what product URLs and prices need from the shop.
    expect(await app.db.prisma.shop.findUnique({ where: { domain: shop } })).toMatchObject({
      uninstalledAt: null,
      storefrontUrl: "https://www.install-test.example",
      currency: "EUR",
    });

    // A second load reuses the stored session: no new exchange.
    const again = await openAdmin(shop, await mintSessionToken({ shop }));
    expect(again.status).toBe(200);
    expect(app.admin.calls.filter((c) => c.shop === shop && c.path === "/admin/oauth/access_token")).toHaveLength(exchanges.length);
  });

  it("answers 410 to bots, as Shopify's library does", async () => {
    const shop = "bot-test.myshopify.com";
    const res = await fetch(`${app.url}/app?embedded=1&shop=${shop}`, { headers: { "user-agent": "Googlebot/2.1" } });
    expect(res.status).toBe(410);
  });
});
