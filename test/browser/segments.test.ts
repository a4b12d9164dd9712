// Settings → Customer segments in headless Chromium: the store's segments are listed, a pick is
// saved by the section's own button (the page's settings form is not touched), and the tag each
// picked segment gives is shown; tagging the segment's current members moves on the page without a reload
// and ends with what the service tagged, the members not tagged counted with the reason.
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium, screenshotDir, waitForHydration } from "./support";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { install } from "../backfill/helpers";
import { createMarketingClient } from "~/services/marketing/client.server";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

const SHOP = "browser-segments.myshopify.com";
const SHOTS = screenshotDir("segments");
const segment = (id: number, name: string) => ({
  id: `gid://shopify/Segment/${id}`,
  name,
  query: "number_of_orders > 0",
  creationDate: "2026-01-01T00:00:00Z",
  lastEditDate: "2026-01-01T00:00:00Z",
});

let h: PipelineHarness;
let store: FakeStore;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  h = await startPipelineHarness();
  // Twelve customers of the store are the segment's members: some subscribed, some not, some without an email.
  store = await startFakeStore(h.app.admin, { customers: 12, products: 1, orders: 1 }, { seed: 11 });
  h.app.admin.addShop({
    domain: SHOP,
    segments: [segment(31, "VIP"), segment(32, "Win back")],
    segmentMembers: { [segment(31, "VIP").id]: store.objects.customers.map((c) => String(c.id).split("/").pop()!) },
  });
  await install(h, SHOP);
  browser = await launchChromium();
  const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000); // a deadline for a hang: a busy machine is slow, not broken
  page.on("pageerror", (e) => console.error("page error:", e.message));
});
afterAll(async () => {
  await browser?.close();
  await store?.close();
  await h?.close();
});

it("lists the store's segments, saves a pick on its own, shows the tag, then the members' tagging as it moves", async () => {
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  await page.goto(`${h.app.url}/app/settings?embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`, { waitUntil: "load" });
  await waitForHydration(page);
  await page.getByText("Customer segments", { exact: true }).waitFor();
  await page.getByLabel("VIP").check();
  // The segment choice is not the settings form's: no "Unsaved changes" for it.
  expect(await page.getByText("Unsaved changes").count()).toBe(0);
  await page.getByRole("button", { name: "Update segment tags" }).click();
  await page.getByText("Tag: shopify-segment:VIP").waitFor();
  await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).includes("Segment choice saved"));
  const rows = await h.app.db.prisma.mirroredSegment.findMany({ where: { shop: SHOP } });
  expect(rows.map((r) => [r.segmentId, r.tag])).toEqual([["gid://shopify/Segment/31", "shopify-segment:VIP"]]);
  expect(await page.getByLabel("VIP").isChecked()).toBe(true);
  expect(await page.getByLabel("Win back").isChecked()).toBe(false);
  await page.screenshot({ path: path.join(SHOTS, "segments-picked.png"), fullPage: true });

  // The worker tags the members the segment already has; the page follows without a reload.
  h.startWorkers(1, FAST_POLICY);
  // What the service tagged, and why the others were not: never "All 12" when the service tagged fewer.
  const done = page.getByText(/\d+ of 12 current members tagged\. /);
  await done.waitFor({ timeout: 60_000 });
  const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
  const tagged = (await svc.people.list({ tags: ["shopify-segment:VIP"], perPage: 1 })).meta.total;
  const text = (await done.textContent()) ?? "";
  expect(text).toContain(`${tagged} of 12 current members tagged. `);
  expect(text).toMatch(/\d+ members? (are|is) not subscribed: not tagged/);
  expect(await page.getByText("All 12 current members tagged").count()).toBe(0);
  await page.screenshot({ path: path.join(SHOTS, "segments-members-tagged.png"), fullPage: true });
}, 120_000);
