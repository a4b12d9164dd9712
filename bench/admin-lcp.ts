/**
 * `npm run bench:admin-lcp`: the largest contentful paint of every admin page on a slow link, as a
 * merchant's first visit sees it (empty cache) and a later one (cached scripts). The link is
 * Chromium's DevTools network emulation (1.6 Mbit/s down, 750 kbit/s up, 150 ms latency, the
 * "Slow 4G" profile of Lighthouse), driven through playwright-core's CDP session; the app is the
 * production build (`npm run build` first) on PGlite with the service emulator and the fake Admin.
 * Goal: every page ≤ 2.5 s. Prints figures; asserts nothing.
 *
 *   npm run bench:admin-lcp -- [--runs 3] [--pages /app,/app/problems]
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { Page } from "playwright-core";
import type * as Runtime from "../app/server/runtime.server";
import { launchChromium } from "../test/browser/support";
import { fmt, median, printTable } from "./support";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    pages: { type: "string", default: "/app,/app/connection,/app/settings,/app/problems,/app/activity,/app/privacy,/app/storefront,/app/campaigns,/app/templates,/app/people" },
  },
});
const RUNS = Math.max(1, Number(args.runs) || 3);
const PAGES = args.pages.split(",").map((p) => p.trim()).filter(Boolean);
const LINK = { offline: false, latency: 150, downloadThroughput: (1.6e6 / 8) | 0, uploadThroughput: (0.75e6 / 8) | 0 };
const GOAL_MS = 2_500;

const ROOT = path.resolve(import.meta.dirname, "..");
const RUNTIME = path.join(ROOT, "build/server/runtime.js");
if (!existsSync(RUNTIME)) {
  console.error("No production build: run `npm run build` first.");
  process.exit(2);
}

const SHOP = "lcp-shop.myshopify.com";

/** Opens `url` on the throttled link; its LCP (ms) and the bytes that crossed the wire. */
async function measure(page: Page, url: string): Promise<{ lcp: number; bytes: number }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", LINK);
  let bytes = 0;
  cdp.on("Network.loadingFinished", (e: { encodedDataLength: number }) => (bytes += e.encodedDataLength));
  await page.goto(url, { waitUntil: "load", timeout: 60_000 });
  await page.waitForFunction(() => Boolean((window as { shopify?: unknown }).shopify), undefined, { timeout: 60_000 });
  const lcp = await page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let last = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) last = Math.max(last, e.startTime);
        }).observe({ type: "largest-contentful-paint", buffered: true });
        setTimeout(() => resolve(last), 500);
      }),
  );
  await cdp.detach();
  return { lcp, bytes };
}

async function main() {
  const { startEmulator } = await import("../dev/emulator/server");
  const { startFakeAdmin } = await import("../dev/shopify/fake-admin");
  const { DEV_SECRETS } = await import("../app/config.server");
  const { mintSessionToken, CHROME_UA } = await import("../dev/shopify/session-token");

  const emulator = await startEmulator({ port: 0 });
  const admin = await startFakeAdmin({ apiKey: DEV_SECRETS.SHOPIFY_API_KEY, apiSecret: DEV_SECRETS.SHOPIFY_API_SECRET, port: 0 });
  const dataDir = mkdtempSync(path.join(tmpdir(), "admin-lcp-"));
  delete process.env.DATABASE_URL;
  Object.assign(process.env, {
    PGLITE_DATA_DIR: dataDir,
    SHOPIFY_APP_URL: "http://127.0.0.1",
    MARKETING_API_URL: emulator.url,
    SHOPIFY_ADMIN_API_ORIGIN: admin.url,
    APP_BRIDGE_URL: `${admin.url}/cdn/app-bridge.js`,
    LOG_LEVEL: "error",
  });
  for (const name of ["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "ENCRYPTION_KEY"]) delete process.env[name];

  const app = (await import(pathToFileURL(RUNTIME).href)) as typeof Runtime;
  const db = app.database();
  await db.migrate();
  const http = await app.startHttpServer({ build: app.serverBuild, clientDir: app.CLIENT_DIR, port: 0, host: "127.0.0.1" });
  const browser = await launchChromium();
  try {
    const token = () => mintSessionToken({ shop: SHOP, apiKey: DEV_SECRETS.SHOPIFY_API_KEY, secret: DEV_SECRETS.SHOPIFY_API_SECRET });
    const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
    const url = async (p: string) => `${http.url}${p}?embedded=1&shop=${SHOP}&host=${host}&id_token=${await token()}`;
    const installed = await fetch(await url("/app"), { headers: { "user-agent": CHROME_UA } });
    if (installed.status !== 200) throw new Error(`installing the shop failed: ${installed.status}`);
    await app.connectShop(SHOP, { apiKey: emulator.apiKey, baseUrl: emulator.url, importHistory: false });

    console.log(`Largest contentful paint per admin page: ${((LINK.downloadThroughput * 8) / 1e6).toFixed(1)} Mbit/s down, ${LINK.latency} ms latency, ${RUNS} runs each (median)`);
    const rows: (string | number)[][] = [];
    let worst = 0;
    for (const p of PAGES) {
      const first: number[] = [];
      const later: number[] = [];
      let bytes = 0;
      for (let i = 0; i < RUNS; i++) {
        // A fresh context: an empty cache, as on the merchant's first visit; then the same page again.
        const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        const cold = await measure(page, await url(p));
        first.push(cold.lcp);
        bytes = cold.bytes;
        later.push((await measure(page, await url(p))).lcp);
        await context.close();
      }
      const m = median(first);
      worst = Math.max(worst, m);
      rows.push([p, fmt(m, 0), fmt(median(later), 0), fmt(bytes / 1024, 0), m <= GOAL_MS ? "yes" : "NO"]);
    }
    printTable(["page", "first visit ms", "later visit ms", "first visit KiB", `≤ ${GOAL_MS} ms`], rows);
    console.log(`slowest first visit: ${fmt(worst, 0)} ms (goal ≤ ${GOAL_MS} ms)`);
  } finally {
    await browser.close();
    await http.close();
    await emulator.close();
    await admin.close();
    await db.close?.();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
