// A storefront page in headless Chromium with the tracker embed rendered from the extension's
// Liquid (liquidjs) and the snippet the emulator gives for its website tracker, which the emulator
// also serves (no CDN). Shopify's Customer Privacy API is stood in for by a small stub on the page
// that behaves as documented (loadFeatures, analyticsProcessingAllowed/marketingAllowed, the
// visitorConsentCollected event). Load costs are printed, not asserted.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshotDir } from "./support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { trackerMetafieldValue } from "~/storefront/tracker.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { storefrontAdmin } from "../../dev/shopify/fake-storefront";
import { actionData, openPage, postForm } from "../admin/support";
import { startPipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";
import { renderEmbed, THEME_EXTENSION } from "../storefront/render";

const SHOTS = screenshotDir("storefront");


/** Shopify's storefront as far as the embed sees it: the Customer Privacy API, behind loadFeatures. */
const PRIVACY_STUB = `<script>
  (function () {
    var stored = localStorage.getItem("consent"); // "granted" | "declined" | null (not asked yet)
    var privacy = {
      analyticsProcessingAllowed: function () { return stored === "granted"; },
      marketingAllowed: function () { return stored === "granted"; },
      setTrackingConsent: function (c, cb) {
        stored = c.analytics && c.marketing ? "granted" : "declined";
        localStorage.setItem("consent", stored);
        document.dispatchEvent(new CustomEvent("visitorConsentCollected", { detail: { analyticsAllowed: !!c.analytics, marketingAllowed: !!c.marketing, preferencesAllowed: !!c.preferences, saleOfDataAllowed: !!c.sale_of_data } }));
        if (cb) cb();
      },
    };
    window.Shopify = { shop: "storefront.myshopify.com", routes: { root: "/" },
      loadFeatures: function (features, cb) { setTimeout(function () { window.Shopify.customerPrivacy = privacy; cb(null); }, 0); } };
  })();
</script>`;

function storefrontPage(embed: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Red scarf – Storefront</title>
${PRIVACY_STUB}
${embed}
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0}header{background:#1a1a1a;color:#fff;padding:16px 24px}main{padding:24px;max-width:720px}
#banner{position:fixed;bottom:0;left:0;right:0;background:#fff;border-top:1px solid #ccc;padding:16px 24px;display:flex;gap:12px;align-items:center}
#banner[hidden]{display:none}button{padding:8px 16px;border-radius:8px;border:1px solid #333;background:#fff;cursor:pointer}button.primary{background:#1a1a1a;color:#fff}</style>
</head><body><header>Storefront</header><main><h1>Red scarf</h1><p>Soft merino wool, knitted by hand. $25.00</p>
<form action="/cart/add" method="post"><button type="button">Add to cart</button></form></main>
<div id="banner" hidden><span>We use cookies for analytics and marketing.</span>
<button class="primary" id="accept">Accept</button><button id="decline">Decline</button></div>
<script>
  (function () {
    var banner = document.getElementById("banner");
    if (!localStorage.getItem("consent")) banner.hidden = false;
    function answer(yes) {
      window.Shopify.customerPrivacy.setTrackingConsent({ analytics: yes, marketing: yes, preferences: yes, sale_of_data: yes }, function () { banner.hidden = true; });
    }
    document.getElementById("accept").onclick = function () { answer(true); };
    document.getElementById("decline").onclick = function () { answer(false); };
  })();
</script></body></html>`;
}

let emulator: Emulator;
let server: Server;
let origin: string;
let browser: Browser;
let withEmbed = "";
const cartUpdates: unknown[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, trackerScripts: true });
  // The snippet as the app publishes it: from the service, through the metafield value.
  const client = createMarketingClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, retries: 0 });
  const tracker = await client.websiteTracker("modern");
  const value = trackerMetafieldValue({ mode: "modern", snippet: tracker.snippet }, emulator.apiKey);
  withEmbed = await renderEmbed({ type: "json", value: JSON.stringify(value) }, "/assets/");
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://storefront");
    if (url.pathname === "/assets/tracker-loader.js") {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(readFileSync(path.join(THEME_EXTENSION, "assets/tracker-loader.js")));
    } else if (url.pathname === "/cart/update.js" && req.method === "POST") {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
      req.on("end", () => {
        cartUpdates.push(JSON.parse(raw));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ token: "c1-test", attributes: (JSON.parse(raw) as { attributes: unknown }).attributes }));
      });
    } else if (url.pathname === "/products/red-scarf") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(storefrontPage(url.searchParams.has("no-embed") ? "" : withEmbed));
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

interface Resource {
  name: string;
  renderBlockingStatus?: string;
  initiatorType: string;
}

const resources = (page: Page) =>
  page.evaluate(() =>
    performance.getEntriesByType("resource").map((e) => {
      const r = e as PerformanceResourceTiming & { renderBlockingStatus?: string };
      return { name: r.name, renderBlockingStatus: r.renderBlockingStatus, initiatorType: r.initiatorType };
    }),
  ) as Promise<Resource[]>;

const trackerLoaded = (page: Page) => page.evaluate(() => Boolean((window as { __marketingTracker?: unknown }).__marketingTracker));
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

describe("the tracker embed on a storefront page", () => {
  it("loads nothing before consent, the snippet (from the emulator) right after it, and copies the revenue hash into the cart", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
    await shot(page, "storefront-1-before-consent");
    expect(await page.locator("#banner").isVisible()).toBe(true);
    expect(await trackerLoaded(page)).toBe(false);
    expect((await resources(page)).filter((r) => r.name.includes("/tracker/"))).toEqual([]);
    expect(emulator.trackerHits).toHaveLength(0);
    expect(cartUpdates).toHaveLength(0);

    // Nothing the embed adds holds up rendering.
    const early = await resources(page);
    expect(early.find((r) => r.name.endsWith("/assets/tracker-loader.js"))?.renderBlockingStatus).toBe("non-blocking");
    expect(early.filter((r) => r.renderBlockingStatus === "blocking")).toEqual([]);

    await page.click("#accept");
    await page.waitForFunction(() => Boolean((window as { __marketingTracker?: unknown }).__marketingTracker));
    await expect.poll(() => emulator.trackerHits.length).toBe(1);
    expect(emulator.trackerHits[0]).toMatchObject({ accountId: emulator.defaultAccountId, event: "pageView", url: `${origin}/products/red-scarf` });
    const scripts = (await resources(page)).filter((r) => r.name.startsWith(`${emulator.url}/tracker/`) && r.name.endsWith(".js"));
    expect(scripts.map((r) => r.name)).toEqual([`${emulator.url}/tracker/modern.js`]);
    expect(scripts.every((r) => r.renderBlockingStatus === "non-blocking")).toBe(true);
    // The service now knows the tracker saw an event.
    const client = createMarketingClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, retries: 0 });
    expect((await client.websiteTracker("modern")).lastEventTrackedAt).not.toBeNull();

    // No cart yet: writing the revenue hash would make Shopify create one (and a carts/create).
    const ls = (await context.cookies()).find((c) => c.name === "_ls")?.value;
    expect(ls).toBeTruthy();
    await page.waitForLoadState("networkidle");
    await shot(page, "storefront-2-after-consent");
    expect(cartUpdates).toHaveLength(0);

    // Once the visitor has a cart (Shopify's `cart` cookie), the next page copies the hash into its
    // attributes (and so the order's note_attributes), once.
    await context.addCookies([{ name: "cart", value: "c1-storefront-test", url: origin }]);
    await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
    await expect.poll(() => emulator.trackerHits.length).toBe(2);
    await expect.poll(() => cartUpdates.length).toBe(1);
    expect(cartUpdates[0]).toEqual({ attributes: { _ls: ls } });

    // The next page: consent is known at load, the tracker starts at once; the hash is not re-sent.
    await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
    await expect.poll(() => emulator.trackerHits.length).toBe(3);
    expect(cartUpdates).toHaveLength(1);
    await context.close();
  });

  it("a visitor who declines never loads the tracker", async () => {
    const before = emulator.trackerHits.length;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
    await page.click("#decline");
    await page.goto(`${origin}/products/red-scarf`, { waitUntil: "networkidle" });
    expect(await trackerLoaded(page)).toBe(false);
    expect((await resources(page)).filter((r) => r.name.includes("/tracker/"))).toEqual([]);
    expect(emulator.trackerHits.length).toBe(before);
    await shot(page, "storefront-3-declined");
    await context.close();
  });

  // Several dozen page loads: over half a minute when the whole suite shares the machine.
  it("load cost with and without the embed (printed)", { timeout: 120_000 }, async () => {
    type Run = { fcp: number; dcl: number; load: number; requests: number; bytes: number };
    const visit = async (query: string, consent: string | null): Promise<Run> => {
      const context = await browser.newContext();
      if (consent) await context.addInitScript((c) => localStorage.setItem("consent", c), consent);
      const page = await context.newPage();
      await page.goto(`${origin}/products/red-scarf${query}`, { waitUntil: "networkidle" });
      const run = await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
        const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
        return {
          fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? 0,
          dcl: nav.domContentLoadedEventEnd,
          load: nav.loadEventEnd,
          requests: res.length + 1,
          bytes: nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0),
        };
      });
      await context.close();
      return run;
    };
    const configs = { "no embed": ["?no-embed", null], "embed, consent not given": ["", null], "embed, consent given": ["", "granted"] } as const;
    const runs: Record<string, Run[]> = {};
    await visit("?no-embed", null); // warm-up: the browser's first page pays for itself
    // Interleaved, so a busy moment of the machine hits every configuration alike.
    for (let i = 0; i < 7; i++) {
      for (const [name, [query, consent]] of Object.entries(configs)) (runs[name] ??= []).push(await visit(query, consent));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const table = Object.fromEntries(
      Object.entries(runs).map(([name, rs]) => [
        name,
        {
          fcpMs: +median(rs.map((r) => r.fcp)).toFixed(1),
          dclMs: +median(rs.map((r) => r.dcl)).toFixed(1),
          loadMs: +median(rs.map((r) => r.load)).toFixed(1),
          requests: median(rs.map((r) => r.requests)),
          bytes: median(rs.map((r) => r.bytes)),
        },
      ]),
    );
    console.warn("Storefront page load cost, median of 7 interleaved fresh visits (local servers, headless Chromium):");
    console.warn(`  ${"".padEnd(26)} ${"FCP ms".padStart(7)} ${"DCL ms".padStart(7)} ${"load ms".padStart(8)} ${"requests".padStart(9)} ${"bytes".padStart(7)}`);
    for (const [name, m] of Object.entries(table)) {
      console.warn(`  ${name.padEnd(26)} ${String(m.fcpMs).padStart(7)} ${String(m.dclMs).padStart(7)} ${String(m.loadMs).padStart(8)} ${String(m.requests).padStart(9)} ${String(m.bytes).padStart(7)}`);
    }
    expect(table["embed, consent not given"].requests).toBe(table["no embed"].requests + 1); // the async loader only
  });
});

describe("the Storefront page in the admin", () => {
  it("shows the embed is not on with a link that turns it on, then that it is on, and the published tracker", async () => {
    const SHOP = "storefront-admin.myshopify.com";
    const h = await startPipelineHarness();
    try {
      expect((await openPage(h.app.url, SHOP, "/app")).status).toBe(200);
      expect(await actionData(await postForm(h.app.url, SHOP, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }))).toMatchObject({ ok: true });
      const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
      const open = async (p = "/app/storefront") => {
        await page.goto(`${h.app.url}${p}?embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`, { waitUntil: "networkidle" });
      };
      await open();
      await page.getByText("Your live theme does not load the tracker yet.").waitFor();
      const link = page.getByRole("link", { name: "Turn on the tracker embed" });
      expect(await link.getAttribute("href")).toBe(`https://${SHOP}/admin/themes/current/editor?context=apps&activateAppId=test-app-key/tracker-embed`);
      expect(await page.getByText("Published for the embed to load:").textContent()).toMatch(/UTC \(Modern\)/);
      // One truth: published, but the embed is not in the theme, so the tracker card does not say it runs.
      expect(await page.locator("[data-tracker-running]").getAttribute("data-tracker-running")).toBe("embed_missing");
      await page.getByText("The tracker does not run on your storefront: your live theme does not have its embed.").waitFor();
      expect(await page.getByText("Published to your storefront").count()).toBe(0);
      await page.getByText("Mode: Modern (no cookies before consent, recommended)").waitFor();
      expect(await page.content()).not.toContain(h.emulator.apiKey);
      await page.screenshot({ path: path.join(SHOTS, "storefront-admin-1-embed-not-added.png"), fullPage: true });
      // The home page reads the same live theme: the embed's state and the same deep link.
      await open("/app");
      await page.getByText("Tracker on your storefront").waitFor();
      expect(await page.locator("[data-embed-state]").getAttribute("data-embed-state")).toBe("not_added");
      expect(await page.getByRole("link", { name: "Turn on the tracker embed" }).getAttribute("href")).toBe(
        `https://${SHOP}/admin/themes/current/editor?context=apps&activateAppId=test-app-key/tracker-embed`,
      );
      expect(await page.locator("[data-tracker-running]").getAttribute("data-tracker-running")).toBe("embed_missing");
      await page.screenshot({ path: path.join(SHOTS, "storefront-admin-1b-home-embed-not-added.png"), fullPage: true });

      storefrontAdmin(h.app.admin).setEmbed(SHOP, "enabled");
      await open();
      await page.getByText("The tracker embed is on in your live theme.").waitFor();
      expect(await page.getByRole("link", { name: "Turn on the tracker embed" }).count()).toBe(0);
      expect(await page.locator("[data-tracker-running]").getAttribute("data-tracker-running")).toBe("running");
      // Storefront events are off by default: the card says where to turn them on.
      await page.getByText("Off: nothing from the storefront is sent.").waitFor();
      expect(await page.locator("[data-events-off-hint] a").getAttribute("href")).toBe("/app/settings");
      await page.screenshot({ path: path.join(SHOTS, "storefront-admin-2-embed-on.png"), fullPage: true });
      await open("/app");
      expect(await page.locator("[data-embed-state]").getAttribute("data-embed-state")).toBe("enabled");
      expect(await page.locator("[data-tracker-running]").getAttribute("data-tracker-running")).toBe("running");
      expect(await page.getByRole("link", { name: "Turn on the tracker embed" }).count()).toBe(0);
      await page.screenshot({ path: path.join(SHOTS, "storefront-admin-2b-home-embed-on.png"), fullPage: true });
      await context.close();
    } finally {
      await h.close();
    }
  });
});
