// The merchant admin in headless Chromium (Debian's chromium driven by playwright-core), with the
// fake Admin's App Bridge stub: connect with a wrong key then a right one, change a setting, see a
// dead letter and replay it, watch the health numbers move. Screenshots go to
// test/browser/screenshots/ (git-ignored); LCP per page is printed, not asserted.
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshotDir, waitForHydration } from "./support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "~/admin/settings.server";
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
  await waitForHydration(page);
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
  // A store in New York: the pages show its times (EST in November), not UTC.
  h.app.admin.addShop({ domain: SHOP, ianaTimezone: "America/New_York" });
  h.startWorkers(1);
  browser = await launchChromium();
  const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000); // a deadline for a hang: a busy machine is slow, not broken
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

describe("merchant admin in a browser", () => {
  const lcp: Record<string, number> = {};

  it("before connecting, Problems and Activity say nothing is sent instead of reassuring", async () => {
    for (const p of ["/app/problems", "/app/activity"]) {
      await open(p);
      await page.getByText("Nothing is sent until you connect your marketing account.").waitFor();
      await page.getByRole("link", { name: "Connect account" }).waitFor();
      expect(await page.getByText("No problems").count(), p).toBe(0);
      expect(await page.getByText("No activity yet").count(), p).toBe(0);
    }
    await shot("0-problems-not-connected");
  });

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
    await page.getByText("How long after the last change a checkout counts as abandoned: 15 minutes to 3 days.").waitFor();
    expect(await page.getByText("Unsaved changes").count()).toBe(0);
    await page.getByLabel("Tracker").selectOption("legacy");
    // A change is marked unsaved; leaving for another page asks first, and closing the tab is warned about.
    await page.getByText("Unsaved changes").waitFor();
    expect(await page.evaluate(() => !window.dispatchEvent(new Event("beforeunload", { cancelable: true })))).toBe(true);
    await nav("Problems");
    await page.getByText("Leave without saving?").waitFor();
    expect(new URL(page.url()).pathname).toBe("/app/settings");
    await shot("4a-settings-unsaved");
    await page.getByRole("button", { name: "Stay on this page" }).click();
    expect(await page.getByLabel("Tracker").inputValue()).toBe("legacy");
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
    await page.getByText("Unsaved changes").waitFor({ state: "detached" });
    expect(await page.evaluate(() => !window.dispatchEvent(new Event("beforeunload", { cancelable: true })))).toBe(false);
    await shot("5-settings-saved");
    // The Storefront page names the mode as Settings does.
    await nav("Storefront");
    await page.getByText("Mode: Legacy (cookie-based)").waitFor();
  });

  it("sees dead letters in plain words, discards one after confirming, replays the other, and watches the health numbers move", async () => {
    // Each row's buttons name what, for whom and when ("Replay New customer for …, Customer 7001, <time>").
    const REPLAY_7001 = /^Replay .*Customer 7001, /;
    const DISCARD_7005 = /^Discard .*Customer 7005, /;
    h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
    await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id: "7001", email: "katherine@example.com", consent: "subscribed" }) });
    await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id: "7005", email: "lena@example.com", consent: "subscribed" }) });
    await h.settle();
    h.emulator.clearFaults();
    // And a delivery that could not be used at all: a date no system can hold.
    const broken = JSON.stringify(customerBody({ id: "7002", email: "odd.date@example.com", updatedAt: "PLACEHOLDER" })).replace('"PLACEHOLDER"', "1e20");
    await h.send({ topic: "customers/create", shop: SHOP, body: broken });
    await h.settle();

    lcp["Sync health"] = await open("/app");
    await page.getByText("Sync is degraded").waitFor();
    expect(await statValue("Could not be delivered")).toBe(2);
    await shot("6-health-degraded");
    const deliveredBefore = await statValue("Sent to your marketing account");

    await nav("Problems");
    await page.getByText("katherine@example.com").first().waitFor();
    await page.getByText("Could not be used").waitFor();
    // The group, the topic and the unusable reason in words; the stored text folded away for support.
    await page.getByRole("heading", { name: "Could not be delivered after 5 tries: the marketing service had a server error" }).waitFor();
    await page.getByRole("cell", { name: "New customer", exact: true }).waitFor();
    await page.getByText("Shopify sent a date we could not read (updated at)").waitFor();
    for (const code of ["Gave up retrying: server_error", "customers/create", "Invalid customers/create payload"]) {
      expect(await page.getByText(code).first().isVisible(), code).toBe(false);
    }
    await page.getByText("Details for support").first().click();
    await page.getByText("Gave up retrying: server_error: Server Error").waitFor();
    // Buttons a screen reader tells apart: the group's and each row's.
    await page.getByRole("button", { name: "Replay all (2)" }).waitFor();
    await page.getByRole("button", { name: REPLAY_7001 }).waitFor();
    await shot("7-problems");

    // Discard asks first; nothing changes until the merchant confirms.
    const discarded = await h.app.db.prisma.outboundCall.findFirstOrThrow({ where: { shop: SHOP, objectKey: "customer:7005", status: "dead" } });
    const statusOf = async () => (await h.app.db.prisma.outboundCall.findUniqueOrThrow({ where: { id: discarded.id } })).status;
    await page.getByRole("button", { name: DISCARD_7005 }).click();
    await page.getByText("Discard this change? It will not be sent to your marketing account.").waitFor();
    expect(await statusOf()).toBe("dead");
    await shot("7a-problems-discard-confirm");
    await page.getByRole("button", { name: DISCARD_7005 }).click();
    await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).some((t) => /discard/i.test(t)));
    expect(await statusOf()).toBe("superseded");

    await page.getByRole("button", { name: REPLAY_7001 }).click();
    await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).includes("Sending again"));
    // Without a reload, the page shows what became of it: delivered, not the error from before the replay.
    await page.locator('[data-replay-outcome="delivered"]').waitFor({ timeout: 60_000 });
    expect(await page.getByText("Being retried automatically").count()).toBe(0);
    await shot("7b-problems-replayed");
    await h.settle();
    lcp["Problems"] = await open("/app/problems");
    // The dead letter is gone; what could not be used stays listed (nothing can be replayed there).
    await page.getByText("Could not be used").waitFor();
    expect(await page.getByRole("button", { name: REPLAY_7001 }).count()).toBe(0);

    // More changes arrive; the home page's numbers move.
    for (const id of ["7002", "7003", "7004"]) {
      await h.send({ topic: "customers/create", shop: SHOP, body: customerBody({ id, email: `c${id}@example.com`, consent: "subscribed" }) });
    }
    await h.settle();
    await nav("Sync health");
    await page.getByText("Sync is healthy").waitFor();
    expect(await statValue("Sent to your marketing account")).toBeGreaterThan(deliveredBefore);
    await page.getByText("One store change can send several updates.").waitFor();
    // Replayed and discarded: nothing needs attention any more, though two did give up.
    expect(await statValue("Could not be delivered")).toBe(0);
    expect(await page.locator('[data-stat="Could not be delivered"]').locator("xpath=ancestor::a").getAttribute("href")).toContain("/app/problems");
    await page.getByText("Out of date: skipped ones Shopify delivered after a newer version").waitFor();
    // How many contacts are subscribed, waiting for confirmation and unsubscribed; a tab title.
    await page.getByText("Contacts in your marketing account").waitFor();
    await page.locator('[data-consent="Waiting for confirmation"]').waitFor();
    // Double opt-in (the emulator account's default) leaves new contacts waiting: the page says what that means.
    if (Number(await page.locator('[data-consent="Waiting for confirmation"]').innerText()) > 0) await page.locator("[data-consent-waiting-hint]").waitFor();
    expect(await page.title()).toBe("Sync health · Marketing Sync");
    await shot("8-health-healthy");

    lcp["Activity"] = await open("/app/activity");
    // The merchant's own customers, in full (masking is for the logs).
    await page.getByText("c7002@example.com").first().waitFor();
    // Times in the store's zone (New York), not UTC.
    expect(await page.locator("table").innerText()).toMatch(/\d{1,2}:\d{2} (AM|PM) EST/);
    expect(await page.locator("table").innerText()).not.toContain("UTC");
    await shot("9-activity");
    await page.getByPlaceholder("Search by customer email").fill("katherine");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/q=katherine/);
    await page.getByText("katherine@example.com").first().waitFor();
  });

  it("a paused sync says why in words, with the code kept for support", async () => {
    await h.app.db.prisma.shop.update({ where: { domain: SHOP }, data: { pausedAt: new Date(), pauseReason: "unauthenticated: Unauthenticated." } });
    try {
      for (const p of ["/app", "/app/connection"]) {
        await open(p);
        await page.getByText("Your marketing account no longer accepts this API key.").waitFor();
        expect(await page.getByText("unauthenticated: Unauthenticated.").isVisible(), p).toBe(false);
        // The pause banner's own details (a history import's problem may have its own below).
        await page.getByRole("alert").getByText("Details for support").click();
        await page.getByText("unauthenticated: Unauthenticated.").waitFor();
      }
      await shot("9a-connection-paused");
    } finally {
      await h.app.db.prisma.shop.update({ where: { domain: SHOP }, data: { pausedAt: null, pauseReason: null } });
    }
  });

  it("a failed history import reads the same on Sync health and Connection, in words, with what to do", async () => {
    const raw = "Shopify answered with errors: fake admin: no resolver for #graphql mutation RunBulk";
    await h.app.db.prisma.backfillRun.create({
      data: { id: "browser-failed-run", shop: SHOP, kinds: ["customers", "products", "orders"], phase: "submit", status: "failed", lastError: raw, createdAt: new Date(Date.now() + 60_000) },
    });
    try {
      for (const p of ["/app", "/app/connection"]) {
        await open(p);
        await page.getByText("The history import stopped.").waitFor();
        await page.getByText("Shopify did not accept the app's request to export your customers.").first().waitFor();
        expect(await page.getByText(raw).isVisible(), p).toBe(false);
        await shot(p === "/app" ? "9a-health-import-failed" : "9a-connection-import-failed");
      }
    } finally {
      await h.app.db.prisma.backfillRun.delete({ where: { id: "browser-failed-run" } });
    }
  });

  it("reaches the Privacy page from the menu; a download that fails says so", async () => {
    const body = { shop_id: 1, shop_domain: SHOP, customer: { id: 7001, email: "katherine@example.com", phone: null }, orders_requested: [], data_request: { id: 1 } };
    await h.send({ topic: "customers/data_request", shop: SHOP, body });
    await h.settle();
    await open("/app");
    await nav("Privacy");
    // The outcome, the customer and the time in words; a table that fits (no sideways scroll control).
    await page.getByText("Ready to download (", { exact: false }).waitFor();
    await page.getByText("katherine@example.com (customer 7001)").waitFor();
    await page.getByText("Requests to erase a customer's data are handled automatically.").waitFor();
    expect(await page.getByText("download the export from the Privacy page").isVisible()).toBe(false);
    expect(await page.locator("table").innerText()).toMatch(/\d{4}, \d{1,2}:\d{2} (AM|PM) EST/);
    expect(await page.getByRole("button", { name: /scroll table/i }).count()).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot("9b-privacy");
    const button = page.getByRole("button", { name: "Download JSON" });
    const [file] = await Promise.all([page.waitForEvent("download"), button.click()]);
    expect(file.suggestedFilename()).toBe("customer-7001-data.json");
    // The request is gone by the time the merchant clicks again: the export answers 404.
    await h.app.db.prisma.webhookDelivery.deleteMany({ where: { shop: SHOP, topic: "customers/data_request" } });
    await button.click();
    await page.getByText("The export could not be downloaded").waitFor();
    await page.getByText("This data request is no longer stored. Reload the page to see the current list.").waitFor();
    await shot("9c-privacy-download-failed");
  });

  it("changing what an erasure does asks first; Cancel keeps it, confirming saves it", async () => {
    const choice = () => loadSettings(SHOP).then((s) => s.eraseContactOnRedact);
    expect(await choice()).toBe(true);
    await open("/app/privacy");
    await page.locator('[data-erasure-choice="delete"]').waitFor({ state: "attached" });
    await page.getByRole("button", { name: /^Keep the contact instead/ }).click();
    await page.getByText("Keep contacts when customers ask to be erased?").waitFor();
    await shot("9d-privacy-erasure-confirm");
    expect(await choice()).toBe(true);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("button", { name: /^Keep the contact instead/ }).waitFor();
    expect(await choice()).toBe(true);
    await page.getByRole("button", { name: /^Keep the contact instead/ }).click();
    await page.getByRole("button", { name: "Keep the contact", exact: true }).click();
    await page.locator('[data-erasure-choice="keep"]').waitFor({ state: "attached" });
    expect(await choice()).toBe(false);
    // Back to the recommended choice, confirmed the same way.
    await page.getByRole("button", { name: /^Delete the contact too/ }).click();
    await page.getByRole("button", { name: "Delete the contact too", exact: true }).click();
    await page.locator('[data-erasure-choice="delete"]').waitFor({ state: "attached" });
    expect(await choice()).toBe(true);
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
    // Every type in words (the data request above counts as a privacy request); hours in the store's zone.
    const byType = await page.locator("table").innerText();
    expect(byType).toMatch(/^Privacy requests\t/m);
    expect(byType).not.toMatch(/^privacy\t/m);
    await page.getByText("Hours in your store's time zone (America/New York)").waitFor();
    await shot("10-health-final");
  });

  it("disconnecting asks first and says what is not caught up later", async () => {
    await open("/app/connection");
    await page.getByRole("button", { name: "Disconnect…" }).click();
    await page.getByText("Disconnect Default Shop?").waitFor();
    const warning = page.getByText("Nothing more is sent until you connect again.", { exact: false });
    expect(await warning.innerText()).toContain("Not caught up: abandoned checkouts and carts, deletions, products taken off sale, refunds");
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: SHOP } })).serviceKeyEnc).not.toBeNull();
    await shot("11-connection-disconnect-confirm");
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByText("Disconnect Default Shop?").waitFor({ state: "detached" });
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: SHOP } })).serviceKeyEnc).not.toBeNull();

    await page.getByRole("button", { name: "Disconnect…" }).click();
    await page.getByRole("button", { name: "Disconnect", exact: true }).click();
    await page.waitForFunction(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).some((t) => t.startsWith("Disconnected")));
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: SHOP } })).serviceKeyEnc).toBeNull();
  });
});

async function statValue(label: string): Promise<number> {
  const text = await page.locator(`[data-stat="${label}"]`).innerText();
  return Number(text.replace(/,/g, ""));
}
