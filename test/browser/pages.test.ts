// Every admin page against Shopify's design bar and axe, in headless Chromium (the fake Admin's App
// Bridge stub): each page at 375 and 1440 px wide is scanned by axe-core (every rule axe runs by
// default, every impact level: any violation fails), photographed, and at 375 px must not scroll
// sideways; a dirty form keeps its save bar in view in a 900 and a 667 px tall window; and the main
// flows work by keyboard alone. Screenshots go to test/browser/screenshots/pages/<page>-<width>.png
// (git-ignored, as every browser suite's).
import { createRequire } from "node:module";
import path from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { launchChromium, screenshotDir, waitForHydration } from "./support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

const SHOP = "browser-pages.myshopify.com";
const SHOTS = screenshotDir("pages");
const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
const WIDTHS = [375, 1440] as const;

let h: PipelineHarness;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let campaignId = "";

async function open(p: string): Promise<void> {
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  const sep = p.includes("?") ? "&" : "?";
  await page.goto(`${h.app.url}${p}${sep}embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`, { waitUntil: "load" });
  await waitForHydration(page);
  await settled();
}

/** No load under way and the page not dimmed (the layout's aria-busy wrapper). */
async function settled(): Promise<void> {
  await page.waitForFunction(() => {
    const main = document.querySelector("[aria-busy]");
    return main?.getAttribute("aria-busy") === "false" && getComputedStyle(main).opacity === "1";
  });
}

const toasted = (text: string) =>
  page.waitForFunction((t) => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).some((m) => m.startsWith(t)), text);

/**
 * axe-core's findings on the page as it is: every rule axe runs by default (WCAG 2.0–2.2 A and AA and
 * its best practices), every impact level. What the App Bridge stub draws in the page (the nav menu,
 * toasts, the loading bar) is left out: in the admin those are Shopify's, outside the app's iframe.
 */
async function axeViolations(): Promise<{ id: string; impact: string; targets: string[] }[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE_SOURCE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run({ exclude: [["ui-nav-menu"], ["#stub-toast"], ["#stub-loading"]] }, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact ?? "unknown", targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
}

/** Presses Tab until `target` (or something inside it) has the focus; fails if it never does. */
async function tabTo(target: Locator, most = 200): Promise<void> {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement || el.contains(document.activeElement))) return;
  }
  throw new Error(`Tab never reached ${target.toString()}`);
}

beforeAll(async () => {
  h = await startPipelineHarness();
  h.app.admin.addShop({ domain: SHOP, ianaTimezone: "America/New_York" });
  h.app.admin.onGraphql("CustomerEmail", (_q, variables) => ({ customer: variables.id === "gid://shopify/Customer/501" ? { defaultEmailAddress: { emailAddress: "ada@example.com" } } : null }));
  h.startWorkers(1);
  browser = await launchChromium();
  context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000); // a deadline for a hang: a busy machine is slow, not broken
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await open("/app");
  await h.connect(SHOP);

  // Something on every page: a person with events, a campaign, a dead letter, a data request.
  const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
  await svc.people.upsert({ email: "ada@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed", customFields: { firstName: "Ada", lastName: "Lovelace" } });
  await svc.events.order("completed", { email: "ada@example.com", source: "shopify", id: "1001", publicId: "#1001", total: 42.5, currency: "USD" });
  campaignId = (await svc.campaigns.create({ name: "Winter sale" })).id;
  h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
  await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id: "8001", email: "grace@example.com", consent: "subscribed" }) });
  await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id: "8003", email: "alan@example.com", consent: "subscribed" }) });
  await h.settle();
  h.emulator.clearFaults();
  const dataRequest = { shop_id: 1, shop_domain: SHOP, customer: { id: 8002, email: "linus@example.com", phone: null }, orders_requested: [], data_request: { id: 1 } };
  await h.send({ topic: "customers/data_request", shop: SHOP, body: dataRequest });
  await h.settle();
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") await page?.screenshot({ path: path.join(SHOTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}.png`) });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("every admin page meets the design bar and axe", () => {
  // Every page route (app/routes/app.*.tsx) in a state with content; /app/privacy-export is a JSON
  // download, not a page. A page is ready when `ready` shows.
  const pages = () => [
    { name: "home", path: "/app", ready: "Sync health" },
    { name: "connection", path: "/app/connection", ready: "owner@default-shop.example" },
    { name: "settings", path: "/app/settings", ready: "Abandoned cart delay" },
    { name: "problems", path: "/app/problems", ready: "grace@example.com" },
    { name: "activity", path: "/app/activity", ready: "Activity" },
    { name: "campaigns", path: "/app/campaigns", ready: "Winter sale" },
    { name: "campaign", path: `/app/campaigns/${campaignId}`, ready: "Winter sale" },
    { name: "templates", path: "/app/templates", ready: "Monthly newsletter" },
    { name: "people", path: "/app/people", ready: "ada@example.com" },
    { name: "person", path: "/app/people/ada%40example.com", ready: "Lovelace" },
    { name: "person-by-customer", path: "/app/people/by-customer/502", ready: "This customer no longer exists in Shopify" },
    { name: "privacy", path: "/app/privacy", ready: "Customer 8002" },
    { name: "storefront", path: "/app/storefront", ready: "Storefront" },
  ];

  // 26 page loads: a deadline for a hang, well past what a busy machine takes.
  it("axe finds nothing on any page at 375 or 1440 px, and nothing scrolls sideways at 375 px", { timeout: 900_000 }, async () => {
    const found: Record<string, string[]> = {};
    const counts: string[] = [];
    const overflow: Record<string, number> = {};
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: width === 375 ? 667 : 900 });
      for (const p of pages()) {
        await open(p.path);
        await page.getByText(p.ready, { exact: false }).first().waitFor();
        const violations = await axeViolations();
        counts.push(`${`${p.name}@${width}`.padEnd(28)} ${violations.length}`);
        if (violations.length) found[`${p.name}@${width}`] = violations.map((v) => `${v.id} (${v.impact}): ${v.targets.slice(0, 3).join(", ")}`);
        await page.screenshot({ path: path.join(SHOTS, `${p.name}-${width}.png`), fullPage: true });
        if (width === 375) {
          // The stub's nav menu is the admin's, outside the iframe in Shopify: hidden while measuring.
          const wide = await page.evaluate(() => {
            const menu = document.querySelector<HTMLElement>("ui-nav-menu");
            if (menu) menu.style.display = "none";
            const scrollWidth = document.scrollingElement?.scrollWidth ?? 0;
            if (menu) menu.style.display = "";
            return scrollWidth;
          });
          if (wide > 375) overflow[p.name] = wide;
        }
      }
    }
    console.warn(`axe violations (rules) per page:\n  ${counts.join("\n  ")}`);
    expect(found).toEqual({});
    expect(overflow).toEqual({});
  });

  it("a dirty settings form keeps its save bar in view, 900 and 667 px tall", async () => {
    for (const size of [
      { width: 1440, height: 900 },
      { width: 375, height: 667 },
    ]) {
      await page.setViewportSize(size);
      await open("/app/settings");
      await page.getByLabel("Tracker").selectOption("legacy");
      await page.getByText("Unsaved changes").waitFor();
      const bar = page.locator("[data-save-bar]");
      const box = await bar.boundingBox();
      expect(box, `${size.width}×${size.height}`).not.toBeNull();
      expect(box!.y, `${size.width}×${size.height}`).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height, `${size.width}×${size.height}`).toBeLessThanOrEqual(size.height);
      await page.screenshot({ path: path.join(SHOTS, `settings-dirty-${size.width}x${size.height}.png`) });
      await page.getByRole("button", { name: "Discard" }).click();
      await page.getByText("Unsaved changes").waitFor({ state: "detached" });
    }
  });

  it("a campaign's unsaved details keep their save bar in view, 900 and 667 px tall; Discard restores them", async () => {
    for (const size of [
      { width: 1440, height: 900 },
      { width: 375, height: 667 },
    ]) {
      await page.setViewportSize(size);
      await open(`/app/campaigns/${campaignId}`);
      const subject = page.getByLabel("Subject");
      const saved = await subject.inputValue();
      await subject.fill("Typed, not saved");
      await page.getByText("Unsaved changes").waitFor();
      const box = await page.locator("[data-save-bar]").boundingBox();
      expect(box, `${size.width}×${size.height}`).not.toBeNull();
      expect(box!.y, `${size.width}×${size.height}`).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height, `${size.width}×${size.height}`).toBeLessThanOrEqual(size.height);
      await page.screenshot({ path: path.join(SHOTS, `campaign-dirty-${size.width}x${size.height}.png`) });
      await page.getByRole("button", { name: "Discard" }).click();
      await page.getByText("Unsaved changes").waitFor({ state: "detached" });
      expect(await subject.inputValue()).toBe(saved);
    }
  });

  it("at 1440 px every problem's Replay and Discard sit inside their card", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await open("/app/problems");
    await page.getByText("grace@example.com").first().waitFor();
    const placed = await page.evaluate(() =>
      [...document.querySelectorAll("button")]
        .filter((b) => /^(Replay|Discard) /.test(b.getAttribute("aria-label") ?? ""))
        .map((b) => {
          const card = b.closest(".Polaris-ShadowBevel") ?? b.closest(".Polaris-Card");
          const r = b.getBoundingClientRect();
          const c = card?.getBoundingClientRect();
          return { label: b.getAttribute("aria-label"), inside: Boolean(c && r.left >= c.left - 0.5 && r.right <= c.right + 0.5) };
        }),
    );
    expect(placed.length).toBeGreaterThan(0);
    expect(placed.filter((p) => !p.inside)).toEqual([]);
  });

  it("by keyboard alone: save settings, create a campaign draft, replay a problem", { timeout: 300_000 }, async () => {
    await page.setViewportSize({ width: 1440, height: 900 });

    await open("/app/settings");
    const events = page.getByLabel("Send storefront browsing events (product and cart views)");
    const before = await events.isChecked();
    await tabTo(events);
    await page.keyboard.press("Space");
    await page.getByText("Unsaved changes").waitFor();
    await tabTo(page.getByRole("button", { name: "Save", exact: true }));
    await page.keyboard.press("Enter");
    await toasted("Settings saved");
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: SHOP } })).settings).toMatchObject({ storefrontEvents: !before });

    await open("/app/campaigns");
    await tabTo(page.getByRole("button", { name: "Create campaign" }));
    await page.keyboard.press("Enter");
    await tabTo(page.getByLabel("Campaign name"));
    await page.keyboard.type("Spring by keyboard");
    await tabTo(page.getByRole("button", { name: "Create draft" }));
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/app\/campaigns\/\d+/);
    await toasted("Draft");
    expect(h.emulator.state.campaigns.some((c) => c.name === "Spring by keyboard")).toBe(true);

    await open("/app/problems");
    await tabTo(page.getByRole("button", { name: /^Replay .*Customer 8001, / }).first());
    await page.keyboard.press("Space");
    await toasted("Sending again");
    await page.locator('[data-replay-outcome="delivered"]').waitFor();
  });

  it("an action that fails says so in the page, not in a toast that vanishes", async () => {
    const toasts = () => page.evaluate(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).length);
    await open("/app/problems");
    await page.getByRole("button", { name: /^Discard .*Customer 8003, / }).first().click();
    await page.getByText("Discard this change? It will not be sent to your marketing account.").waitFor();
    // Meanwhile the change was dealt with elsewhere (another tab, the support CLI).
    await h.app.db.prisma.outboundCall.updateMany({ where: { shop: SHOP, objectKey: "customer:8003", status: "dead" }, data: { status: "superseded" } });
    const before = await toasts();
    await page.getByRole("button", { name: /^Discard .*Customer 8003, / }).first().click();
    await page.locator("main").getByText("Already handled").waitFor();
    await settled();
    expect(await toasts()).toBe(before);
    await page.screenshot({ path: path.join(SHOTS, "problems-action-error-1440.png") });
  });
});
