import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app";
import { TEST_API_KEY } from "../support/env";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

// The admin trusts nothing but a session token signed for this app, for this shop, still valid.
let app: TestApp;
const shop = "tokens-test.myshopify.com";
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const now = () => Math.floor(Date.now() / 1000);

it.each([
  ["expired an hour ago", { exp: now() - 3600, nbf: now() - 7200, iat: now() - 7200 }],
  ["not valid before an hour from now", { nbf: now() + 3600 }],
  ["for another app (wrong audience)", { aud: "someone-elses-app" }],
  ["for a destination outside myshopify.com", { dest: "https://evil.example.com", iss: "https://evil.example.com/admin" }],
])("refuses a session token %s: no exchange, no session, no stack", async (_name, overrides) => {
  const token = await mintSessionToken({ shop, overrides });
  const res = await fetch(`${app.url}/app?shop=${shop}`, { headers: { "user-agent": CHROME_UA, authorization: `Bearer ${token}` } });
  expect(res.status).toBeGreaterThanOrEqual(400);
  // Shopify's library answers 500 to a correctly signed token whose dest is not a shop: only a
  // holder of the app secret can mint one, so it is not reachable from outside; still no stack.
  if (!("dest" in overrides)) expect(res.status).toBeLessThan(500);
  expect(await res.text()).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(app.admin.calls.filter((c) => c.path === "/admin/oauth/access_token")).toHaveLength(0);
  expect(await app.db.prisma.session.count()).toBe(0);
});

it("accepts the same token when nothing is wrong with it (the control case)", async () => {
  const token = await mintSessionToken({ shop, overrides: { aud: TEST_API_KEY } });
  const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
  const res = await fetch(`${app.url}/app?embedded=1&shop=${shop}&host=${host}&id_token=${token}`, { headers: { "user-agent": CHROME_UA } });
  expect(res.status).toBe(200);
});

it("answers a route that throws with a plain message, never a stack", async () => {
  // A deliberate answer each (the login page, 405 for a GET of the webhook route, 400 for a path
  // that cannot be decoded), never a 500 from a route that threw.
  const expected: Record<string, number> = { "/app?shop=%E0%A4%A": 200, "/auth/login?shop=%00": 200, "/webhooks?x=%": 405, "/%E0%A4%A": 400 };
  for (const [url, status] of Object.entries(expected)) {
    const res = await fetch(`${app.url}${url}`, { headers: { "user-agent": CHROME_UA } });
    expect(res.status, url).toBe(status);
    const text = await res.text();
    expect(text, url).not.toMatch(/\bat .*\.(ts|js|mjs):\d+/);
    expect(text, url).not.toContain("node_modules");
  }
});
