// The merchant admin in headless Chromium (Debian's chromium driven by playwright-core), with the
// fake Admin's App Bridge stub: connect with a wrong key then a right one, change a setting, see a
// dead letter and replay it, watch the health numbers move. Screenshots go to
// test/browser/screenshots/ (git-ignored); LCP per page is printed, not asserted.
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshotDir } from "./support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

const SHOP = "browser-shop.myshopify.com";
const SHOTS = screenshotDir("admin");


let h: PipelineHarness;
let browser: Browser;
let page: Page;

async function adminUrl(p: string): Promise<string> {
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  return `${h.app.url}${p}?embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`;
}

/** Opens a page as the admin does (a full load with id_token) and returns its largest contentful paint in ms. */
async function open(p: string): Promise<number> {
  await page.goto(await adminUrl(p), { waitUntil: "load" });
  await page.waitForFunction(() => Boolean((window as { shopify?: unknown }).shopify));
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        let lcp = 0;
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) lcp = Math.max(lcp, e.startTime);
        }).observe({ type: "largest-contentful-paint", buffered: true });
        setTimeout(() => resolve(lcp), 300);
      }),
  );
}

/** Client-side navigation through the app's nav menu (as App Bridge's navigation would). */
async function nav(label: string): Promise<void> {
  await page.locator("ui-nav-menu a", { hasText: label }).click();
  await page.waitForLoadState("networkidle");
}

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const lastToast = () => page.evaluate(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).at(-1));

beforeAll(async () => {
  h = await startPipelineHarness();
  h.startWorkers(1);
  browser = await launchChromium();
  const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("pageerror", (e) => console.error("page error:", e.message));
  page.on("requestfailed", (r) => console.error("request failed:", r.url(), r.failure()?.errorText));
});
// A failing step leaves a picture of what the browser showed.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") await page?.screenshot({ path: path.join(SHOTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}.png`) });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("merchant admin in a browser", { timeout: 90_000 }, () => {
  const lcp: Record<string, number> = {};

  it("onboarding: a wrong key gets a clear message, the right one connects", async () => {
    lcp["Sync health (not connected)"] = await open("/app");
    await expect(page.getByText("Connect your email marketing account")).toBeTruthy();
    await shot("1-home-not-connected");
    await page.getByRole("link", { name: "Connect account" }).click();
    await page.waitForURL(/\/app\/connection/);
    await page.getByLabel("API key").fill("mk_live_not_the_right_key");
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByText("did not accept this API key").waitFor();
    await shot("2-connection-wrong-key");
    expect((await h.app.db.prisma.shop.findUnique({ where: { domain: SHOP } }))?.serviceKeyEnc).toBeNull();

    await page.getByLabel("API key").fill(h.emulator.apiKey);
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByText("owner@default-shop.example").waitFor();
    expect(await lastToast()).toMatch(/^Connected to Default Shop/);
    expect(await page.content()).not.toContain(h.emulator.apiKey);
    await page.getByText(`•••• ${h.emulator.apiKey.slice(-4)}`).waitFor();
    await shot("3-connection-connected");
    lcp["Connection"] = await open("/app/connection");
  });

  it("changes a setting", async () => {
    lcp["Settings"] = await open("/app/settings");
    await page.getByLabel("Tracker").selectOption("legacy");
    await page.getByLabel("Send storefront browsing events (product and cart views)").check();
    await page.getByLabel("Abandoned cart delay").fill("5");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("The shortest delay is 15 minutes.").waitFor();
    await shot("4-settings-error");
    await page.getByLabel("Abandoned cart delay").fill("45");
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).includes("Settings saved"));
    const row = await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: SHOP } });
    expect(row.settings).toMatchObject({ trackerMode: "legacy", storefrontEvents: true, abandonmentDelayMinutes: 45 });
    await shot("5-settings-saved");
  });

  it("sees a dead letter, replays it, and watches the health numbers move", async () => {
    h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
    await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id: "7001", email: "katherine@example.com", consent: "subscribed" }) });
    await h.settle();
    h.emulator.clearFaults();
    // And a delivery that could not be used at all: a date no system can hold.
    const broken = JSON.stringify(customerBody({ id: "7002", email: "odd.date@example.com", updatedAt: "PLACEHOLDER" })).replace('"PLACEHOLDER"', "1e20");
    await h.send({ topic: "customers/create", shop: SHOP, body: broken });
    await h.settle();

    lcp["Sync health"] = await open("/app");
    await page.getByText("Sync is degraded").waitFor();
    await shot("6-health-degraded");
    const deliveredBefore = await statValue("Delivered");

    await nav("Problems");
    await page.getByText("k•••@example.com").waitFor();
    await page.getByText("Could not be used").waitFor();
    await shot("7-problems");
    await page.getByRole("button", { name: "Replay" }).first().click();
    await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).includes("Sent again"));
    await h.settle();
    lcp["Problems"] = await open("/app/problems");
    // The dead letter is gone; what could not be used stays listed (nothing can be replayed there).
    await page.getByText("Could not be used").waitFor();
    expect(await page.getByText("k•••@example.com").count()).toBe(0);

    // More changes arrive; the home page's numbers move.
    for (const id of ["7002", "7003", "7004"]) {
      await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id, email: `c${id}@example.com`, consent: "subscribed" }) });
    }
    await h.settle();
    await nav("Sync health");
    await page.getByText("Sync is healthy").waitFor();
    expect(await statValue("Delivered")).toBeGreaterThan(deliveredBefore);
    await shot("8-health-healthy");

    lcp["Activity"] = await open("/app/activity");
    await page.getByText("c•••@example.com").first().waitFor();
    expect(await page.content()).not.toContain("c7002@example.com");
    await shot("9-activity");
    await page.getByPlaceholder("Search by customer email").fill("katherine");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/q=katherine/);
    await page.getByText("k•••@example.com").first().waitFor();
  });

  it("reaches the Privacy page from the menu; a download that fails says so", async () => {
    const body = { shop_id: 1, shop_domain: SHOP, customer: { id: 7001, email: "katherine@example.com", phone: null }, orders_requested: [], data_request: { id: 1 } };
    await h.send({ topic: "customers/data_request", shop: SHOP, body });
    await h.settle();
    await open("/app");
    await nav("Privacy");
    const button = page.getByRole("button", { name: "Download JSON" });
    const [file] = await Promise.all([page.waitForEvent("download"), button.click()]);
    expect(file.suggestedFilename()).toBe("customer-7001-data.json");
    // The request is gone by the time the merchant clicks again: the export answers 404.
    await h.app.db.prisma.webhookDelivery.deleteMany({ where: { shop: SHOP, topic: "customers/data_request" } });
    await button.click();
    await page.getByText("The export could not be downloaded").waitFor();
    await page.getByText("This data request is no longer stored. Reload the page to see the current list.").waitFor();
    await shot("9b-privacy-download-failed");
  });

  it("measures the largest contentful paint of every page (printed, not asserted)", async () => {
    const pages = { "Sync health": "/app", Connection: "/app/connection", Settings: "/app/settings", Problems: "/app/problems", Activity: "/app/activity" };
    const warm: Record<string, number[]> = {};
    for (let round = 0; round < 3; round++) {
      for (const [name, p] of Object.entries(pages)) (warm[name] ??= []).push(await open(p));
    }
    console.warn("Largest contentful paint per page, ms (local, headless Chromium, full load with id_token):");
    console.warn(`  ${"page".padEnd(30)} ${"first visit".padStart(12)} ${"median of 3 later".padStart(18)}`);
    for (const [name, runs] of Object.entries(warm)) {
      const sorted = [...runs].sort((a, b) => a - b);
      const first = lcp[name] ?? lcp[`${name} (first)`];
      console.warn(`  ${name.padEnd(30)} ${(first?.toFixed(0) ?? "-").padStart(12)} ${sorted[1].toFixed(0).padStart(18)}`);
    }
    console.warn(`  ${"Sync health (not connected)".padEnd(30)} ${lcp["Sync health (not connected)"].toFixed(0).padStart(12)}`);
    await open(pages["Sync health"]);
    await shot("10-health-final");
  });
});

async function statValue(label: string): Promise<number> {
  const text = await page.locator(`[data-stat="${label}"]`).innerText();
  return Number(text.replace(/,/g, ""));
}
