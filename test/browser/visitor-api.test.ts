// Shopify's visitor API on a storefront page (Built for Shopify 5.6.4): a visitor who signs up in the
// theme's newsletter or contact form is handed to Shopify.analytics.visitor({ email, phone }, { appId })
// (shopify.dev/docs/api/web-pixels-api/emitting-data#visitor-api), and the marketing service gets the
// same person for its tracker's visitor, through the app proxy. The page is the tracker embed rendered
// from the extension's Liquid with the metafield the app published; Shopify's storefront is stood in
// for by stubs that behave as documented: the Customer Privacy API, Shopify.analytics.visitor (returns
// a boolean, throws on a payload it refuses), the app proxy (signs and forwards to the app) and the
// theme's forms (`/contact`, Shopify's `form_type`). The forms post for real: the storefront records them.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FAKE_APP_GID, storefrontAdmin } from "../../dev/shopify/fake-storefront";
import { actionData, openPage, postForm } from "../admin/support";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { renderEmbed, THEME_EXTENSION } from "../storefront/render";
import { signedProxyQuery } from "../storefront/support";
import { launchChromium } from "./support";

const SHOP = "visitor-api.myshopify.com";
const APP_ID = FAKE_APP_GID.split("/").pop()!;

/**
 * Shopify's storefront globals: the Customer Privacy API (consent from localStorage, as the
 * storefront test's banner stores it) and Shopify.analytics.visitor, whose calls are kept in
 * sessionStorage (the form's submission leaves the page). `visitor-api` in localStorage picks how
 * the API behaves: "ok" (default), "throws", "missing".
 */
const SHOPIFY_STUB = `<script>
  (function () {
    var consent = localStorage.getItem("consent");
    var privacy = {
      analyticsProcessingAllowed: function () { return consent === "granted"; },
      marketingAllowed: function () { return consent === "granted"; },
    };
    // The page's calls to the app proxy, kept as they start (a form's submission may cut them short).
    var realFetch = window.fetch;
    window.fetch = function (input, init) {
      if (String(input).indexOf("/apps/") >= 0) {
        var started = JSON.parse(sessionStorage.getItem("proxy-calls") || "[]");
        started.push(String(input));
        sessionStorage.setItem("proxy-calls", JSON.stringify(started));
      }
      return realFetch.apply(this, arguments);
    };
    var mode = localStorage.getItem("visitor-api") || "ok";
    window.Shopify = { shop: "${SHOP}", routes: { root: "/" },
      loadFeatures: function (features, cb) { setTimeout(function () { window.Shopify.customerPrivacy = privacy; cb(null); }, 0); } };
    if (mode === "missing") return;
    window.Shopify.analytics = {
      publish: function () { return true; },
      visitor: function (visitorInfo, options) {
        var calls = JSON.parse(sessionStorage.getItem("visitor-calls") || "[]");
        calls.push({ visitorInfo: visitorInfo, options: options === undefined ? null : options });
        sessionStorage.setItem("visitor-calls", JSON.stringify(calls));
        if (mode === "throws") throw new Error("Invalid payload");
        return true;
      },
    };
  })();
</script>`;

/** Dawn's newsletter form ({% form 'customer' %}) and contact form ({% form 'contact' %}), and a login form. */
const PAGE = (embed: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Storefront</title>
${SHOPIFY_STUB}
${embed}
</head><body><h1>Red scarf</h1>
<form method="post" action="/contact#ContactFooter" id="ContactFooter" accept-charset="UTF-8" class="footer__newsletter newsletter-form">
  <input type="hidden" name="form_type" value="customer"><input type="hidden" name="utf8" value="✓">
  <input type="hidden" name="contact[tags]" value="newsletter">
  <input id="NewsletterForm--footer" type="email" name="contact[email]" value="" aria-required="true" autocorrect="off" autocapitalize="off" autocomplete="email" placeholder="Email" required>
  <button type="submit" id="Subscribe">Subscribe</button>
</form>
<form method="post" action="/contact#ContactForm" id="ContactForm" accept-charset="UTF-8" class="contact-form">
  <input type="hidden" name="form_type" value="contact"><input type="hidden" name="utf8" value="✓">
  <input type="text" id="ContactForm-name" name="contact[Name]" value="">
  <input type="email" id="ContactForm-email" name="contact[email]" value="" required>
  <input type="tel" id="ContactForm-phone" name="contact[Phone number]" value="">
  <textarea id="ContactForm-body" name="contact[Comment]"></textarea>
  <button type="submit" id="Send">Send</button>
</form>
<form method="post" action="/account/login" id="customer_login" accept-charset="UTF-8">
  <input type="hidden" name="form_type" value="customer_login"><input type="hidden" name="utf8" value="✓">
  <input type="email" name="customer[email]" id="CustomerEmail" value="">
  <input type="password" name="customer[password]" id="CustomerPassword" value="">
  <button type="submit" id="SignIn">Sign in</button>
</form>
</body></html>`;

let h: PipelineHarness;
let server: Server;
let origin: string;
let browser: Browser;
let embed = "";
/** Every form the storefront received (its fields), in order. */
const posted: Record<string, string>[] = [];
/** Every request the app proxy forwarded to the app: the body and the app's answer. */
const proxied: { body: unknown; status: number }[] = [];

beforeAll(async () => {
  h = await startPipelineHarness({ trackerScripts: true });
  expect((await openPage(h.app.url, SHOP, "/app")).status).toBe(200); // installed: an offline session
  expect(await actionData(await postForm(h.app.url, SHOP, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }))).toMatchObject({ ok: true });
  await h.app.db.prisma.shop.update({ where: { domain: SHOP }, data: { settings: { storefrontEvents: true } } });
  h.startWorkers();
  // The embed as the storefront renders it from the metafield the app published on connecting.
  embed = await renderEmbed(storefrontAdmin(h.app.admin).metafields(SHOP).get("marketing_sync.tracker"), "/assets/");

  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://storefront");
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", async () => {
      if (url.pathname === "/assets/tracker-loader.js") {
        res.writeHead(200, { "content-type": "text/javascript" });
        res.end(readFileSync(path.join(THEME_EXTENSION, "assets/tracker-loader.js")));
      } else if (url.pathname === "/pages/signup") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(PAGE(embed));
      } else if ((url.pathname === "/contact" || url.pathname === "/account/login") && req.method === "POST") {
        posted.push(Object.fromEntries(new URLSearchParams(raw)));
        // Shopify answers a form with a redirect back, `customer_posted=true` / `contact_posted=true`.
        res.writeHead(302, { location: "/pages/thanks" });
        res.end();
      } else if (url.pathname === "/pages/thanks") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(`<!doctype html><title>Thanks</title><p id="thanks">Thanks for subscribing</p>`);
      } else if (url.pathname.startsWith("/apps/marketing-sync/") && req.method === "POST") {
        // Shopify's app proxy: signs and forwards to the app's /proxy/*.
        const answer = await fetch(`${h.app.url}${url.pathname.replace(/^\/apps\/marketing-sync/, "/proxy")}?${signedProxyQuery({ shop: SHOP })}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: raw,
        });
        proxied.push({ body: JSON.parse(raw) as unknown, status: answer.status });
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(await answer.text());
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await h?.close();
});

/** A fresh visitor with consent given ("granted"), refused ("declined") or not asked (null). */
async function visitor(consent: string | null, api: "ok" | "throws" | "missing" = "ok"): Promise<BrowserContext> {
  const context = await browser.newContext();
  await context.addInitScript(
    ([c, a]) => {
      if (c) localStorage.setItem("consent", c);
      localStorage.setItem("visitor-api", a);
    },
    [consent, api] as const,
  );
  return context;
}

/** Opens the page, waits for the tracker when consent was given, fills `fields` and submits with `button`. */
async function signUp(context: BrowserContext, fields: Record<string, string>, button: string, tracked: boolean) {
  const page = await context.newPage();
  await page.goto(`${origin}/pages/signup`, { waitUntil: "networkidle" });
  if (tracked) await page.waitForFunction(() => document.cookie.includes("_mk_vid="));
  for (const [selector, value] of Object.entries(fields)) await page.fill(selector, value);
  const before = posted.length;
  await page.click(button);
  await page.waitForURL(/\/pages\/thanks(#.*)?$/); // a redirect keeps the action's #fragment
  expect(posted.length).toBe(before + 1); // the form itself was submitted
  const calls = JSON.parse((await page.evaluate(() => sessionStorage.getItem("visitor-calls"))) ?? "[]") as unknown[];
  const proxyCalls = JSON.parse((await page.evaluate(() => sessionStorage.getItem("proxy-calls"))) ?? "[]") as string[];
  const vid = (await context.cookies()).find((c) => c.name === "_mk_vid")?.value;
  return { calls, proxyCalls, form: posted.at(-1)!, vid };
}

/** The identify events the service received (POST /api/events, eventName storefront_identified). */
const identified = () =>
  h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/events" && (r.body as { eventName?: string }).eventName === "storefront_identified");

it("publishes the app's id with the tracker, for the visitor API's appId", () => {
  expect(embed).toContain(`data-app-id="${APP_ID}"`);
});

it("a consenting visitor's newsletter signup goes to Shopify's visitor API, the service gets the same person, and the form is submitted", async () => {
  const context = await visitor("granted");
  const { calls, form, vid } = await signUp(context, { "#NewsletterForm--footer": "ada@example.com" }, "#Subscribe", true);
  expect(form).toMatchObject({ form_type: "customer", "contact[email]": "ada@example.com", "contact[tags]": "newsletter" });
  expect(calls).toEqual([{ visitorInfo: { email: "ada@example.com" }, options: { appId: APP_ID } }]);
  expect(vid).toBeTruthy();

  await expect.poll(() => proxied.length, { timeout: 60_000 }).toBe(1);
  expect(proxied[0]).toEqual({ body: { event: "visitor_identified", visitorId: vid, form: "newsletter", email: "ada@example.com" }, status: 202 });
  await expect.poll(() => identified().length, { timeout: 60_000 }).toBe(1);
  expect(identified()[0].body).toEqual({
    email: "ada@example.com",
    source: "shopify",
    silent: true,
    eventName: "storefront_identified",
    properties: { visitorReference: `visitor:${vid}`, form: "newsletter", email: "ada@example.com" },
  });
  await context.close();
});

it("the contact form's email and phone both go to the visitor API and to the service", async () => {
  const context = await visitor("granted");
  const before = identified().length;
  const { calls, form, vid } = await signUp(
    context,
    { "#ContactForm-name": "Ada", "#ContactForm-email": "ada.contact@example.com", "#ContactForm-phone": "+1 555 555 5555", "#ContactForm-body": "Hello" },
    "#Send",
    true,
  );
  expect(form).toMatchObject({ form_type: "contact", "contact[email]": "ada.contact@example.com", "contact[Phone number]": "+1 555 555 5555" });
  expect(calls).toEqual([{ visitorInfo: { email: "ada.contact@example.com", phone: "+1 555 555 5555" }, options: { appId: APP_ID } }]);
  await expect.poll(() => identified().length, { timeout: 60_000 }).toBe(before + 1);
  expect(identified().at(-1)!.body).toMatchObject({
    email: "ada.contact@example.com",
    silent: true,
    properties: { visitorReference: `visitor:${vid}`, form: "contact", phone: "+1 555 555 5555" },
  });
  await context.close();
});

it("without consent (declined or not asked) nothing is handed on, and the form is submitted", async () => {
  const proxiedBefore = proxied.length;
  for (const consent of ["declined", null]) {
    const context = await visitor(consent);
    const { calls, proxyCalls, form } = await signUp(context, { "#NewsletterForm--footer": "no.consent@example.com" }, "#Subscribe", false);
    expect(form["contact[email]"]).toBe("no.consent@example.com");
    expect(calls).toEqual([]);
    expect(proxyCalls).toEqual([]);
    await context.close();
  }
  expect(proxied.length).toBe(proxiedBefore);
});

it("a visitor API that throws, or none on the page, never stops the form; the service still gets the person", async () => {
  for (const api of ["throws", "missing"] as const) {
    const before = identified().length;
    const context = await visitor("granted", api);
    const email = `api.${api}@example.com`;
    const { calls, form } = await signUp(context, { "#NewsletterForm--footer": email }, "#Subscribe", true);
    expect(form["contact[email]"]).toBe(email);
    expect(calls).toEqual(api === "throws" ? [{ visitorInfo: { email }, options: { appId: APP_ID } }] : []);
    await expect.poll(() => identified().length, { timeout: 60_000 }).toBe(before + 1);
    expect(identified().at(-1)!.body).toMatchObject({ email });
    await context.close();
  }
});

it("a login is not a signup: nothing is handed on", async () => {
  const proxiedBefore = proxied.length;
  const context = await visitor("granted");
  const { calls, proxyCalls, form } = await signUp(context, { "#CustomerEmail": "ada@example.com", "#CustomerPassword": "secret-pass" }, "#SignIn", true);
  expect(form.form_type).toBe("customer_login");
  expect(calls).toEqual([]);
  expect(proxyCalls).toEqual([]);
  expect(proxied.length).toBe(proxiedBefore);
  await context.close();
});
