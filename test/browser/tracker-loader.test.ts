// The tracker loader copies the revenue hash (_ls) into the cart's attributes so the order carries
// it: once per hash and cart, not once per tab session. After an order Shopify starts a new cart;
// the visitor's next cart in the same tab gets the hash too, so the second order of the visit is
// credited to the campaign as well. It writes only to a cart that exists or is being made: on
// Shopify, /cart/update.js without a cart creates one (and a carts/create webhook) for a visitor
// who never adds anything.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { trackerMetafieldValue } from "~/storefront/tracker.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { launchChromium } from "./support";
import { renderEmbed, THEME_EXTENSION } from "../storefront/render";

const PRIVACY_STUB = `<script>
  window.Shopify = { routes: { root: "/" }, loadFeatures: function (f, cb) { setTimeout(function () {
    window.Shopify.customerPrivacy = { analyticsProcessingAllowed: function () { return true; }, marketingAllowed: function () { return true; } }; cb(null); }, 0); } };
</script>`;

let emulator: Emulator;
let server: Server;
let origin: string;
let browser: Browser;
let embed = "";
let nextCart = 1;
/** Every /cart/update.js: the cart (from Shopify's `cart` cookie) and its new attributes. */
const updates: { cart: string | null; body: unknown }[] = [];
const cartOf = (cookie: string | undefined) => /(?:^|; )cart=([^;]*)/.exec(cookie ?? "")?.[1] ?? null;
/** The cart requests in the order the storefront got them, by visitor (the tracker's `_mk_vid`, else "-"). */
const cartLog: string[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, trackerScripts: true });
  const client = createMarketingClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, retries: 0 });
  const tracker = await client.websiteTracker("modern");
  embed = await renderEmbed({ type: "json", value: JSON.stringify(trackerMetafieldValue({ mode: "modern", snippet: tracker.snippet }, emulator.apiKey)) }, "/assets/");
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://storefront");
    let cart = cartOf(req.headers.cookie);
    const setCart: string[] = [];
    if (url.pathname === "/assets/tracker-loader.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(readFileSync(path.join(THEME_EXTENSION, "assets/tracker-loader.js")));
    } else if (url.pathname === "/cart/update.js" && req.method === "POST") {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
      req.on("end", () => {
        cartLog.push(cart ? `update ${cart}` : "update without a cart");
        if (!cart) setCart.push(`cart=${(cart = `c${nextCart++}`)}; Path=/`); // Shopify creates the cart
        updates.push({ cart, body: JSON.parse(raw) });
        res.writeHead(200, { "content-type": "application/json", "set-cookie": setCart });
        res.end(JSON.stringify({ token: cart }));
      });
    } else if (url.pathname === "/cart/add.js" && req.method === "POST") {
      // The theme's AJAX add: Shopify makes the cart if there was none.
      if (!cart) setCart.push(`cart=${(cart = `c${nextCart++}`)}; Path=/`);
      cartLog.push(`add ${cart}`);
      res.writeHead(200, { "content-type": "application/json", "set-cookie": setCart });
      res.end(JSON.stringify({ id: 1, quantity: 1 }));
    } else if (url.pathname === "/cart/add") {
      if (!cart) setCart.push(`cart=${(cart = `c${nextCart++}`)}; Path=/`);
      res.writeHead(302, { location: "/products/red-scarf", "set-cookie": setCart });
      res.end();
    } else if (url.pathname === "/checkouts/thank-you") {
      // The order is placed: Shopify drops the cart; the next one is a new cart.
      res.writeHead(200, { "content-type": "text/html", "set-cookie": ["cart=; Path=/; Max-Age=0"] });
      res.end("<!doctype html><title>Thank you</title><p>Order placed</p>");
    } else if (url.pathname === "/products/red-scarf") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Red scarf</title>${PRIVACY_STUB}${embed}</head><body><h1>Red scarf</h1></body></html>`);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await emulator?.close();
});

it("the visitor's second cart of the visit (after an order) also gets the revenue hash", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/cart/add`, { waitUntil: "networkidle" }); // first cart c1, consent already given
  await expect.poll(() => updates.length).toBe(1);
  const ls = (await context.cookies()).find((c) => c.name === "_ls")?.value;
  expect(updates[0]).toEqual({ cart: "c1", body: { attributes: { _ls: ls } } });

  await page.goto(`${origin}/checkouts/thank-you`); // order 1 placed, cart gone
  await page.goto(`${origin}/cart/add`, { waitUntil: "networkidle" }); // a new cart c2, same tab
  expect((await context.cookies()).find((c) => c.name === "cart")?.value).toBe("c2");
  await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
  await page.waitForTimeout(300);
  // One copy per cart: c2 gets the hash once, and no page copies it again.
  expect(updates.map((u) => u.cart)).toEqual(["c1", "c2"]);
  expect(updates[1].body).toEqual({ attributes: { _ls: ls } });
  await context.close();
});

it("a consenting visitor who adds nothing gets no cart; the first add on the page makes one and it gets the hash", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const start = cartLog.length;
  await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
  // The tracker has run (it sets _ls for every visitor) and the loader has looked at the cart.
  await expect.poll(async () => (await context.cookies()).some((c) => c.name === "_ls")).toBe(true);
  await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" }); // a second page, with _ls set from the start
  expect((await context.cookies()).find((c) => c.name === "cart")).toBeUndefined();

  // The theme's AJAX add to cart makes the cart: the hash follows it, into that cart.
  await page.evaluate(() => fetch("/cart/add.js", { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":1,"quantity":1}' }));
  const cart = (await context.cookies()).find((c) => c.name === "cart")?.value;
  await expect.poll(() => cartLog.slice(start)).toEqual([`add ${cart}`, `update ${cart}`]);
  const ls = (await context.cookies()).find((c) => c.name === "_ls")?.value;
  expect(updates.at(-1)).toEqual({ cart, body: { attributes: { _ls: ls } } });
  await context.close();
});
