// The consent choice in headless Chromium, against the fake Admin (with a generated store whose
// customers are in every email-marketing state) and the service emulator: at connection and in
// Settings the merchant sees what each mode does to this store's Shopify subscribers, in numbers,
// and chooses; Settings saves and discards through its save bar (Polaris' when the admin gives no
// App Bridge save bar, the admin's `ui-save-bar` when it does). Screenshots: test/browser/screenshots/consent/.
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";
import { HANG_MS, launchChromium, screenshotDir, waitForHydration } from "./support";

const SHOP = "browser-consent.myshopify.com";
const SHOTS = screenshotDir("consent");

let h: PipelineHarness;
let store: FakeStore;
let browser: Browser;
let context: BrowserContext;
let page: Page;

async function open(p: string): Promise<void> {
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  await page.goto(`${h.app.url}${p}?embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`, { waitUntil: "load" });
  await waitForHydration(page);
}
const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const toasted = (text: string) =>
  page.waitForFunction((t) => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).includes(t), text, { timeout: HANG_MS });
// Polaris draws its own circle over the radio input: the merchant clicks the choice's words.
const choose = (label: string) => page.getByText(label, { exact: true }).click();
const storedMode = async () => ((await h.app.db.prisma.shop.findUnique({ where: { domain: SHOP } }))?.settings as { optInMode?: string } | null)?.optInMode;

/** The store's customers per Shopify email-marketing state, as the generated store holds them. */
function expectedCounts() {
  const n = (state: string) => store.objects.customers.filter((c) => (c.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === state).length;
  return { subscribed: n("SUBSCRIBED"), pending: n("PENDING"), notSubscribed: n("NOT_SUBSCRIBED"), unsubscribed: n("UNSUBSCRIBED") };
}

beforeAll(async () => {
  h = await startPipelineHarness();
  h.app.admin.addShop({ domain: SHOP, ianaTimezone: "America/New_York" });
  store = await startFakeStore(h.app.admin, { customers: 60, products: 0, orders: 0 });
  browser = await launchChromium();
  context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(HANG_MS);
  page.on("pageerror", (e) => console.error("page error:", e.message));
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") await page?.screenshot({ path: path.join(SHOTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}.png`) });
});
afterAll(async () => {
  await browser?.close();
  await store?.close();
  await h?.close();
});

describe("choosing how Shopify's consent is kept", { timeout: 4 * HANG_MS }, () => {
  it("at connection: each mode says what happens to this store's subscribers, in numbers; double opt-in chosen and saved", async () => {
    const c = expectedCounts();
    expect(c.subscribed).toBeGreaterThan(1);
    await open("/app/connection");
    await page
      .getByText(`Your store today, as Shopify shows it: ${c.subscribed} subscribed, ${c.pending} waiting to confirm Shopify's own email, ${c.notSubscribed} not subscribed, ${c.unsubscribed} unsubscribed.`, { exact: false })
      .waitFor();
    await page.getByText(`${c.subscribed} customers subscribed at Shopify stay subscribed in your marketing account. No confirmation email is sent.`).waitFor();
    await page.getByText(`Up to ${c.subscribed} customers get a confirmation email from your marketing account and stay unsubscribed until they confirm`, { exact: false }).waitFor();
    // The default keeps Shopify's consent.
    expect(await page.getByLabel("Keep Shopify's consent (recommended)").isChecked()).toBe(true);
    await shot("1-connection-choice");

    await choose("Ask each to confirm by email (double opt-in)");
    await page.getByLabel("API key").fill(h.emulator.apiKey);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await toasted("Connected to Default Shop");
    expect(await storedMode()).toBe("double_opt_in");
    // Once connected, the choice lives in Settings.
    await page.getByText("Email consent of customers who subscribed at Shopify").waitFor({ state: "detached" });
    await shot("2-connected");
  });

  it("in Settings: the counts and the saved choice; the save bar discards back to it and saves a new one", async () => {
    const c = expectedCounts();
    await open("/app/settings");
    await page.getByText(`Your store today, as Shopify shows it: ${c.subscribed} subscribed`, { exact: false }).waitFor();
    expect(await page.getByLabel("Ask each to confirm by email (double opt-in)").isChecked()).toBe(true);
    // Nothing changed: the Polaris bar (no App Bridge save bar here) has nothing to save.
    expect(await page.locator('[data-save-bar="polaris"]').count()).toBe(1);
    expect(await page.getByRole("button", { name: "Save", exact: true }).isDisabled()).toBe(true);

    await choose("Keep Shopify's consent (recommended)");
    await page.getByText("Unsaved changes").waitFor();
    await shot("3-settings-unsaved");
    await page.getByRole("button", { name: "Discard", exact: true }).click();
    await page.getByText("Unsaved changes").waitFor({ state: "detached" });
    expect(await page.getByLabel("Ask each to confirm by email (double opt-in)").isChecked()).toBe(true);
    expect(await storedMode()).toBe("double_opt_in");

    await choose("Keep Shopify's consent (recommended)");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await toasted("Settings saved");
    await page.getByText("Unsaved changes").waitFor({ state: "detached" });
    expect(await storedMode()).toBe("trust_shopify");
    await shot("4-settings-saved");
  });

  it("where the admin provides App Bridge's save bar, Settings uses it instead of its own", async () => {
    // A stand-in for the admin's `ui-save-bar` element: shows its buttons while open.
    await context.addInitScript(() => {
      customElements.define(
        "ui-save-bar",
        class extends HTMLElement {
          show() {
            this.setAttribute("data-open", "");
          }
          hide() {
            this.removeAttribute("data-open");
          }
        },
      );
    });
    await open("/app/settings");
    await page.locator("ui-save-bar").waitFor({ state: "attached" });
    expect(await page.locator('[data-save-bar="polaris"]').count()).toBe(0);
    expect(await page.locator("ui-save-bar[data-open]").count()).toBe(0);
    await choose("Ask each to confirm by email (double opt-in)");
    await page.locator("ui-save-bar[data-open]").waitFor({ state: "attached" });
    // The admin's Discard, then its Save.
    await page.locator("ui-save-bar button:not([variant])").evaluate((b: HTMLButtonElement) => b.click());
    await page.locator("ui-save-bar[data-open]").waitFor({ state: "detached" });
    // The bar may hide a render before the radio shows the restored value.
    await expect.poll(() => page.getByLabel("Keep Shopify's consent (recommended)").isChecked(), { timeout: HANG_MS }).toBe(true);
    await choose("Ask each to confirm by email (double opt-in)");
    await page.locator('ui-save-bar button[variant="primary"]').evaluate((b: HTMLButtonElement) => b.click());
    await page.locator("ui-save-bar[data-open]").waitFor({ state: "detached" });
    await expect.poll(() => storedMode(), { timeout: HANG_MS }).toBe("double_opt_in");
  });
});
