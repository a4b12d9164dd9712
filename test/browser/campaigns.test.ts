// Campaigns, templates and people in headless Chromium (the fake Admin's App Bridge stub): create
// from a template → edit → test-send → schedule → see it under Scheduled; a review-required send
// resolved with "Send anyway"; people search, paging and a person's events. Screenshots go to
// test/browser/screenshots/campaigns/ (git-ignored; a folder of their own, which the admin test's
// clean-up of the top level leaves alone).
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshotDir, waitForHydration } from "./support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

const SHOP = "browser-campaigns.myshopify.com";
const SHOTS = screenshotDir("campaigns");


let h: PipelineHarness;
let browser: Browser;
let page: Page;

async function open(p: string): Promise<void> {
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  const sep = p.includes("?") ? "&" : "?";
  await page.goto(`${h.app.url}${p}${sep}embedded=1&shop=${SHOP}&host=${host}&id_token=${await mintSessionToken({ shop: SHOP })}`, { waitUntil: "load" });
  await waitForHydration(page);
}

/** A full-page picture once the page has settled (no load under way, not dimmed), from the top. */
async function shot(name: string): Promise<void> {
  await page.waitForFunction(() => {
    const main = document.querySelector("[aria-busy]");
    return main?.getAttribute("aria-busy") === "false" && getComputedStyle(main).opacity === "1";
  });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}
const toasted = (text: string) =>
  page.waitForFunction((t) => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).some((m) => m.startsWith(t)), text);

beforeAll(async () => {
  h = await startPipelineHarness();
  h.app.admin.addShop({ domain: SHOP, ianaTimezone: "Europe/Paris" });
  h.app.admin.onGraphql("CustomerEmail", (_q, variables) => ({ customer: variables.id === "gid://shopify/Customer/501" ? { defaultEmailAddress: { emailAddress: "ada@example.com" } } : null }));
  browser = await launchChromium();
  const context = await browser.newContext({ userAgent: CHROME_UA, viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(60_000); // a deadline for a hang: a busy machine is slow, not broken
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await open("/app");
  await h.connect(SHOP);

  const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
  await svc.people.upsert({ email: "ada@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed", customFields: { firstName: "Ada", lastName: "Lovelace" }, tags: { vip: true } });
  await svc.people.upsert({ email: "adam@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "unsubscribed", tags: { customer: true } });
  await svc.events.order("completed", { email: "ada@example.com", source: "shopify", id: "1001", publicId: "#1001", total: 42.5, currency: "EUR" });
  await svc.events.cart("abandoned", { email: "ada@example.com", source: "shopify", id: "cart-7", total: 12 });
});
afterEach(async (ctx) => {
  if (ctx.task.result?.state === "fail") await page?.screenshot({ path: path.join(SHOTS, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, "-")}.png`) });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe("campaigns, templates and people in a browser", () => {
  it("create from a template → edit → test-send → schedule → under Scheduled", async () => {
    await open("/app/templates");
    await page.getByText("Monthly newsletter").waitFor();
    const preview = page.getByRole("link", { name: "Preview ↗" }).first();
    expect(await preview.getAttribute("target")).toBe("_blank");
    await shot("1-templates");

    await page.getByRole("row", { name: /Welcome email/ }).getByRole("button", { name: "Create campaign" }).click();
    await page.getByLabel("Campaign name").fill("Autumn welcome");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.waitForURL(/\/app\/campaigns\/\d+/);
    await toasted("Draft “Autumn welcome” created");
    const id = Number(new URL(page.url()).pathname.split("/").at(-1));
    // The Design card's link and the blank draft's notice: both open the editor in a new tab.
    await page.getByRole("link", { name: "Open in the email editor ↗" }).first().waitFor();
    const editorLinks = await page.getByRole("link", { name: "Open in the email editor ↗" }).all();
    expect(editorLinks.length).toBeGreaterThan(0);
    for (const link of editorLinks) expect(await link.getAttribute("target")).toBe("_blank");

    await page.getByLabel("Subject").fill("Welcome, autumn is here");
    await page.getByLabel("Preview text").fill("New arrivals inside");
    await page.getByLabel("Sender name").fill("Default Shop");
    await page.getByLabel("Sender email").fill("news@default-shop.example");
    await page.getByRole("button", { name: "Save draft" }).click();
    await toasted("Draft saved");
    expect(h.emulator.state.campaigns.find((c) => c.id === id)).toMatchObject({ subject: "Welcome, autumn is here", sender: { name: "Default Shop", email: "news@default-shop.example" } });
    await shot("2-edited");
    // The sender cannot be cleared (§4.2): said beside the field, nothing saved.
    await page.getByLabel("Sender email").fill("");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText("A campaign needs a sender email, so it cannot be removed; change it instead. The saved one is news@default-shop.example.").waitFor();
    expect(h.emulator.state.campaigns.find((c) => c.id === id)?.sender.email).toBe("news@default-shop.example");
    await shot("2b-sender-cannot-be-cleared");
    await page.getByLabel("Sender email").fill("news@default-shop.example");

    await page.getByLabel("Test recipients").fill("owner@default-shop.example, stranger@elsewhere.example");
    await page.getByRole("button", { name: "Send test" }).click();
    await page.getByText("Not allowed: stranger@elsewhere.example").waitFor();
    await shot("3-test-send-refused");
    await page.getByLabel("Test recipients").fill("owner@default-shop.example");
    await page.getByRole("button", { name: "Send test" }).click();
    await toasted("Test sent to owner@default-shop.example");

    // Paris is UTC+1 in January; seconds are not picked, so the time stays on the minute.
    // A time that has passed never reads "Goes out" (typed: the calendar offers no past day).
    await page.getByRole("textbox", { name: "Send on" }).fill("2025-01-01");
    await page.getByLabel("Time", { exact: true }).selectOption("10:00");
    await page.getByText("Jan 1, 2025, 10:00 AM GMT+1 (9:00 AM UTC) has passed: pick a later time.").waitFor();
    await shot("4a-schedule-past");
    await page.getByRole("textbox", { name: "Send on" }).fill("");
    // The day from Polaris' calendar: yesterday (in Paris) cannot be picked, January 15 can.
    await page.getByRole("button", { name: "Pick the send on date" }).click();
    const parisToday = new Date(new Date().toLocaleString("en-US", { timeZone: "Europe/Paris" }));
    const yesterday = new Date(parisToday.getFullYear(), parisToday.getMonth(), parisToday.getDate() - 1);
    if (yesterday.getMonth() === parisToday.getMonth()) {
      const label = `${yesterday.toLocaleString("en-US", { month: "long" })} ${yesterday.getDate()} ${yesterday.getFullYear()}`;
      expect(await page.locator(`button[aria-label$="${label}"]`).getAttribute("aria-disabled")).toBe("true");
    }
    // The viewport as it is: shot()'s scroll to the top and full-page picture closed Polaris'
    // popover once the page grew taller than the window (seen 2026-11-27).
    await page.screenshot({ path: path.join(SHOTS, "4a-schedule-calendar.png") });
    for (let i = 0; i < 36 && (await page.locator('button[aria-label$="January 15 2027"]').count()) === 0; i++) {
      await page.getByRole("button", { name: /^Show next month/ }).click();
    }
    await page.locator('button[aria-label$="January 15 2027"]').click();
    expect(await page.getByRole("textbox", { name: "Send on" }).inputValue()).toBe("2027-01-15");
    await page.getByLabel("Time", { exact: true }).selectOption("09:30");
    // One time, in the store's zone, with UTC once; who it reaches, from whom, with what subject.
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    const confirmed = (await svc.people.list({ status: "confirmed", perPage: 1 })).meta.total;
    expect(confirmed).toBeGreaterThan(0);
    await page.getByText(`Goes out Jan 15, 2027, 9:30 AM GMT+1 (8:30 AM UTC) to the people confirmed then (${confirmed} confirmed ${confirmed === 1 ? "person" : "people"} today).`).waitFor();
    await page.locator("[data-sending-summary]").first().getByText("From: ", { exact: false }).waitFor();
    await shot("4b-schedule-preview");
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    await page.getByText("This campaign has not been reviewed in the email editor").waitFor();
    await shot("4-schedule-review-required");
    await page.getByRole("button", { name: "Schedule anyway" }).click();
    await toasted("Scheduled: goes out Jan 15, 2027, 9:30 AM GMT+1 (8:30 AM UTC)");
    expect(await page.locator("[data-scheduled]").innerText()).toBe("Goes out Jan 15, 2027, 9:30 AM GMT+1 (8:30 AM UTC)");
    await shot("5-scheduled");

    await page.locator("ui-nav-menu a", { hasText: "Campaigns" }).click();
    await page.getByRole("tab", { name: "Scheduled" }).click();
    await page.waitForURL(/status=scheduled/);
    await page.getByRole("link", { name: "Autumn welcome" }).waitFor();
    await shot("6-list-scheduled");

    // Unschedule: the service has none, so a draft copy replaces the scheduled campaign, as the page says first.
    await page.getByRole("link", { name: "Autumn welcome" }).click();
    await page.getByRole("button", { name: "Unschedule or change the time…" }).click();
    await page.getByText("Your marketing service cannot unschedule a campaign.", { exact: false }).waitFor();
    expect(h.emulator.state.campaigns.find((c) => c.id === id)?.status).toBe("scheduled");
    await shot("6a-unschedule-confirm");
    await page.getByRole("button", { name: "Move back to draft", exact: true }).click();
    await toasted("Moved back to draft as a copy: pick a new time or send it when ready");
    await page.waitForURL((u) => /\/app\/campaigns\/\d+/.test(u.pathname) && !u.pathname.endsWith(`/${id}`));
    const copyId = Number(new URL(page.url()).pathname.split("/").at(-1));
    expect(h.emulator.state.campaigns.find((c) => c.id === id)).toBeUndefined();
    expect(h.emulator.state.campaigns.find((c) => c.id === copyId)).toMatchObject({ status: "draft", name: "Autumn welcome" });
    await page.getByRole("textbox", { name: "Send on" }).waitFor();
    await shot("6b-unscheduled-draft");
  });

  it("a subject changed in the email editor while the page is open is not reverted by Save draft; the same field changed in both is refused", async () => {
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    const c = await svc.campaigns.create({ name: "Editor meanwhile", templateId: "tpl-1" });
    await svc.campaigns.update(c.id, { subject: "Old subject" });
    const saved = () => h.emulator.state.campaignById(c.id);
    await open(`/app/campaigns/${c.id}`);
    expect(await page.getByLabel("Subject").inputValue()).toBe("Old subject");

    // In the editor tab (the page's "Open in the email editor ↗"), the subject is rewritten.
    await svc.campaigns.update(c.id, { subject: "NEW subject from the editor" });
    await page.getByLabel("Sender name").fill("Shop team");
    await page.getByRole("button", { name: "Save draft" }).click();
    await toasted("Draft saved");
    expect(saved()).toMatchObject({ subject: "NEW subject from the editor", sender: { name: "Shop team" } });
    // The page now shows the editor's subject, and a later save keeps it.
    await page.waitForFunction(() => (document.querySelector<HTMLInputElement>("input[name=subject]")?.value ?? "") === "NEW subject from the editor");
    const savedToasts = () => page.evaluate(() => ((window as { shopify?: { __toasts?: string[] } }).shopify?.__toasts ?? []).filter((m) => m === "Draft saved").length);
    const before = await savedToasts();
    await page.getByLabel("Preview text").fill("Inside: news");
    await page.getByRole("button", { name: "Save draft" }).click();
    await expect.poll(savedToasts).toBe(before + 1);
    expect(saved()).toMatchObject({ subject: "NEW subject from the editor", previewText: "Inside: news" });
    // The page has reloaded its data after that save (nothing under way) before the editor changes it again.
    await page.waitForFunction(() => document.querySelector("[aria-busy]")?.getAttribute("aria-busy") === "false");

    // Both the editor and the merchant change the subject: refused, the editor's kept.
    await svc.campaigns.update(c.id, { subject: "Second editor subject" });
    await page.getByLabel("Subject").fill("Typed in the app");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText("This campaign was changed in the email editor since you opened it. Reload to see the changes.").waitFor();
    expect(saved().subject).toBe("Second editor subject");
    await shot("2c-changed-in-the-editor");
  });

  it("send now: no subject is refused beside the field; a subject typed but not saved goes out with the send; review required resolved with Send anyway", async () => {
    await open("/app/templates");
    await page.getByRole("row", { name: /Monthly newsletter/ }).getByRole("button", { name: "Create campaign" }).click();
    await page.getByLabel("Campaign name").fill("November newsletter");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.waitForURL(/\/app\/campaigns\/\d+/);
    const id = Number(new URL(page.url()).pathname.split("/").at(-1));

    // A template gives no subject: the campaign cannot go out without one.
    await page.getByRole("button", { name: "Send now…" }).click();
    await page.getByRole("button", { name: "Send to the whole list" }).click();
    await page.getByText("This campaign has no subject").waitFor();
    expect(await page.getByText("Add a subject before sending.", { exact: true }).count()).toBe(1);
    expect(await page.getByLabel("Subject").getAttribute("aria-invalid")).toBe("true");
    expect(h.emulator.state.campaigns.find((c) => c.id === id)?.status).toBe("draft");
    await shot("7a-no-subject");

    // Typed, not saved with "Save draft": the send saves it first.
    await page.getByLabel("Subject").fill("November news");
    await page.getByRole("button", { name: "Send now…" }).click();
    await page.getByText(/^Send this campaign to \d+ confirmed (person|people) now\?$/).waitFor();
    await page.getByText("Subject: November news").first().waitFor();
    await page.getByText("Your changes to the details are saved first.").waitFor();
    await shot("7-send-confirm");
    await page.getByRole("button", { name: "Send to the whole list" }).click();
    await page.getByText("This campaign has not been reviewed in the email editor").waitFor();
    expect(h.emulator.state.campaigns.find((c) => c.id === id)?.subject).toBe("November news");
    const editor = page.getByRole("link", { name: "Open in the email editor ↗" }).first();
    expect(await editor.getAttribute("target")).toBe("_blank");
    expect(await editor.getAttribute("href")).toBe(`${h.emulator.url}/dashboard/campaigns/${id}/editor`);
    await shot("8-review-required");
    await page.getByRole("button", { name: "Send anyway" }).click();
    await toasted("Sending to your whole confirmed list");
    await page.getByText("Sending (preparing)").first().waitFor();
    expect(h.emulator.state.campaigns.find((c) => c.id === id)?.status).toBe("preparing");
    await shot("9-sending");
  });

  it("a blank draft says it has no email before any send; a test with unsaved details saves them first and says so", async () => {
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    const blank = await svc.campaigns.create({ name: "Blank draft" });
    await open(`/app/campaigns/${blank.id}`);
    await page.getByText("Design the email before you send it").waitFor();
    await page.getByText(/A campaign created blank has no email until you design it there/).waitFor();
    await shot("7b-blank-draft-warned");

    const c = await svc.campaigns.create({ name: "Test with edits", templateId: "tpl-1" });
    await svc.campaigns.update(c.id, { subject: "Saved subject", sender: { name: "Shop", email: "news@default-shop.example" } });
    await open(`/app/campaigns/${c.id}`);
    await page.getByLabel("Subject").fill("Typed, not saved");
    await page.getByText("Your changes to the details are saved first, so the test shows them.").waitFor();
    await page.getByLabel("Test recipients").fill("owner@default-shop.example");
    await page.getByRole("button", { name: "Send test" }).click();
    await toasted("Changes saved. Test sent to owner@default-shop.example");
    // The test went out with what the page showed.
    expect(h.emulator.state.campaignById(c.id).subject).toBe("Typed, not saved");
    await page.waitForFunction(() => document.querySelector("[data-test-saves-first]") === null);
  });

  it("a sending limit is shown with its numbers and links", async () => {
    await open("/app/campaigns?status=draft");
    await page.getByRole("button", { name: "Create campaign" }).first().click();
    await page.getByLabel("Campaign name").fill("Blank draft");
    await page.getByRole("button", { name: "Create draft" }).click();
    await page.waitForURL(/\/app\/campaigns\/\d+/);
    const id = Number(new URL(page.url()).pathname.split("/").at(-1));
    h.emulator.setCampaignContent(id, "<p>Hello</p>");
    h.emulator.markReviewed(id);
    h.emulator.updateAccount(h.emulator.defaultAccountId, { sendingLimitRemaining: 0 });
    try {
      await page.getByLabel("Subject").fill("Hello");
      await page.getByRole("button", { name: "Send now…" }).click();
      await page.getByRole("button", { name: "Send to the whole list" }).click();
      await page.getByText("Sending limit reached").waitFor();
      await page.getByText(/0 sends remaining; your sending limit resets on/).waitFor();
      await shot("10-sending-limit");
    } finally {
      h.emulator.updateAccount(h.emulator.defaultAccountId, { sendingLimitRemaining: 100 });
    }
  });

  it("people search and a person's events", async () => {
    await open("/app/people");
    await page.getByLabel("Name or email").fill("ada");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/q=ada/);
    await page.getByRole("link", { name: "adam@example.com" }).waitFor();
    // The search's data has arrived (the form follows it) before the next filter is picked.
    await page.waitForFunction(() => document.querySelector("[aria-busy]")?.getAttribute("aria-busy") === "false");
    await page.getByLabel("Status").selectOption("active");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/status=active/);
    await page.getByRole("link", { name: "adam@example.com" }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "ada@example.com" }).waitFor();
    expect(await page.locator('[data-consent="Subscribed"]').innerText()).toMatch(/^\d+$/);
    expect(await page.title()).toBe("People · Marketing Sync");
    await shot("11-people-search");

    await page.getByRole("link", { name: "ada@example.com" }).click();
    await page.waitForURL(/\/app\/people\/ada%40example\.com/);
    await page.getByText("Receives email (subscribed)").waitFor();
    // Events and fields in words, the data summed up.
    await page.getByRole("cell", { name: "Cart abandoned" }).waitFor();
    await page.getByRole("cell", { name: "Order completed" }).waitFor();
    // Times in the store's zone (Paris), as on every other page.
    await page.getByText(/added .* GMT\+1/).waitFor();
    expect(await page.locator("table").last().innerText()).not.toContain("UTC");
    await page.getByText("Order #1001 · €42.50").waitFor();
    await page.getByText("First name", { exact: true }).waitFor();
    await page.getByRole("columnheader", { name: "When", exact: true }).waitFor();
    expect(await page.getByText(/"currency"|order_completed|cart_abandoned/).count()).toBe(0);
    await shot("12-person");
    // The words the table shows, not the service's name.
    await page.getByLabel("Event name").fill("Order completed");
    await page.getByRole("button", { name: "Filter events" }).click();
    await page.waitForURL(/event=Order/);
    await page.getByText("Order #1001").waitFor();
    await page.getByRole("cell", { name: "Cart abandoned" }).waitFor({ state: "detached" });
    await shot("13-person-events-filtered");
    // Dates are picked in Polaris's calendar, not the browser's own date input.
    expect(await page.locator('input[name="from"]').getAttribute("type")).toBe("text");
    await page.getByRole("button", { name: "Pick the from date" }).click();
    await page.getByRole("button", { name: /^Today/ }).waitFor();
    await shot("13a-person-date-picker");
    await page.getByRole("button", { name: /^Today/ }).click();
    const now = new Date();
    const today = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
    expect(await page.locator('input[name="from"]').inputValue()).toBe(today);
    await page.getByRole("button", { name: "Filter events" }).click();
    await page.waitForURL(new RegExp(`from=${today}`));
    await page.getByText("Order #1001").waitFor();
  });

  it("the marketing service not answering: the list says it could not be loaded, no empty state; Try again shows it once it answers", async () => {
    h.emulator.setFaults({ serverErrors: { count: 1000, status: 503 }, pathPrefix: "/api/campaigns" });
    try {
      await open("/app/campaigns");
      await page.getByText("Your campaigns could not be loaded: the marketing service is not answering right now.").waitFor();
      expect(await page.getByText(/No drafts? campaigns|Nothing was changed/).count()).toBe(0);
      expect(await page.getByRole("tab").count()).toBe(0);
      await shot("16-campaigns-not-answering");
    } finally {
      h.emulator.clearFaults();
    }
    await page.getByRole("button", { name: "Try again" }).click();
    await page.getByRole("tab", { name: "Drafts" }).waitFor();
    expect(await page.getByText("could not be loaded").count()).toBe(0);
  });

  it("from a Shopify customer's page (the admin link) to their person page", async () => {
    await open("/app/people/by-customer?id=501");
    await page.waitForURL(/\/app\/people\/ada%40example\.com/);
    await page.getByText("Receives email (subscribed)").waitFor();
    await open("/app/people/by-customer?id=777");
    await page.getByText("This customer no longer exists in Shopify").waitFor();
    await shot("14-customer-not-found");
  });

  it("a list longer than a page: the page footer, and Next shows the rest; a short list has no footer", async () => {
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    for (let i = 1; i <= 30; i++) await svc.people.upsert({ email: `paged-${String(i).padStart(2, "0")}@example.com`, source: "shopify" });
    await open("/app/people?q=paged-");
    await page.getByText("Page 1 of 2 · 30 in all").waitFor();
    await page.getByRole("button", { name: "Next" }).click();
    await page.waitForURL(/page=2/);
    await page.getByText("Page 2 of 2 · 30 in all").waitFor();
    expect(await page.getByRole("link", { name: /^paged-\d+@example\.com$/ }).count()).toBe(5);
    await shot("15-people-page-2");
    await open("/app/people?q=ada");
    await page.getByRole("link", { name: "ada@example.com" }).waitFor();
    expect(await page.getByText(/Page \d+ of \d+/).count()).toBe(0);
  });
});
