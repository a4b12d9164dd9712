import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshDueTrackers, trackerMetafieldValue, UnsafeSnippet } from "~/storefront/tracker.server";
import { FAKE_APP_GID, storefrontAdmin } from "../../dev/shopify/fake-storefront";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { postProxyEvent, signedProxyQuery } from "./support";
import { renderEmbed } from "./render";

const SETTINGS = { optInMode: "double_opt_in", abandonmentDelayMinutes: "60", orderCompletedOn: "paid_and_fulfilled", source: "shopify" };

interface Overview {
  embed: { state: string; activateUrl: string; themeName: string | null };
  tracker: { mode: string; publishedMode: string | null; publishedAt: string | null; lastEventTrackedAt: string | null; syncError: string | null };
  events: { enabled: boolean; queued: number; anonymous: number };
}

// Each database gets its own shop: the fake Admin (and its metafields) is one per test process.
describeEachDatabase("the storefront tracker", (database) => {
  const SHOP = `tracker-${database}.myshopify.com`;
  let h: PipelineHarness;
  const metafield = () => storefrontAdmin(h.app.admin).metafields(SHOP).get("marketing_sync.tracker");
  const trackerValue = () => JSON.parse(metafield()!.value) as { mode: string; snippet: string };
  const overview = async () => routeData<Overview>(await loadData(h.app.url, SHOP, "/app/storefront"), "routes/app.storefront");

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    expect((await openPage(h.app.url, SHOP, "/app")).status).toBe(200); // installed: an offline session
  });
  afterAll(() => h.close());

  describe("the tracker snippet in the app-data metafield", () => {
    it("connecting publishes the snippet of the chosen mode; the API key never reaches the storefront", async () => {
      expect(metafield()).toBeUndefined();
      expect(await actionData(await postForm(h.app.url, SHOP, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }))).toMatchObject({ ok: true });
      expect(metafield()?.type).toBe("json");
      expect(trackerValue()).toMatchObject({ mode: "modern" });
      expect(trackerValue().snippet).toContain(`data-account="${h.emulator.defaultAccountId}"`);
      expect(metafield()!.value).not.toContain(h.emulator.apiKey);
      expect(metafield()!.value).not.toContain(h.emulator.apiKey.slice(-8));
      // The web pixel runs on the shop once the app has created it, pointed at the app proxy.
      expect(JSON.parse(storefrontAdmin(h.app.admin).webPixelSettings(SHOP)!)).toEqual({ proxyPath: "/apps/marketing-sync" });
    });

    it("changing the tracker mode in Settings publishes that mode's snippet; each renders as an inert template", async () => {
      const rendered: Record<string, string> = {};
      for (const mode of ["legacy", "compat", "modern"]) {
        expect(await actionData(await postForm(h.app.url, SHOP, "/app/settings", { ...SETTINGS, trackerMode: mode }))).toMatchObject({ ok: true });
        expect(trackerValue().mode).toBe(mode);
        const html = await renderEmbed(metafield());
        rendered[mode] = html;
        // data-app-id: the app's id (App.id's number) for Shopify's visitor API.
        expect(html).toContain(`<template id="marketing-sync-tracker" data-mode="${mode}" data-app-id="${FAKE_APP_GID.split("/").pop()}">${trackerValue().snippet}</template>`);
        expect(html).toContain(`<script src="https://cdn.shopify.example/extensions/assets/tracker-loader.js" async></script>`);
        expect(html).not.toContain(h.emulator.apiKey);
      }
      expect(rendered.legacy).toContain("legacy.js");
      expect(rendered.legacy).not.toContain('type="module"');
      expect(rendered.compat).toContain("nomodule");
      expect(rendered.modern).not.toContain("legacy.js");
    });

    it("a snippet that would carry the API key, or break out of its template, is never published", () => {
      const key = "mk_live_secret_key_1234";
      expect(() => trackerMetafieldValue({ mode: "modern", snippet: `<script src="https://t.example/t.js?k=${key}"></script>` }, key)).toThrow(UnsafeSnippet);
      expect(() => trackerMetafieldValue({ mode: "modern", snippet: `</template><script>alert(1)</script>` }, key)).toThrow(UnsafeSnippet);
    });

    it("the daily refresh is claimed by one worker only, and republishes", async () => {
      await h.app.db.prisma.storefrontState.update({ where: { shop: SHOP }, data: { nextSyncAt: new Date(Date.now() - 1000) } });
      const before = h.app.admin.calls.filter((c) => JSON.stringify(c.body).includes("metafieldsSet(")).length;
      const results = await Promise.all([refreshDueTrackers("worker-a"), refreshDueTrackers("worker-b"), refreshDueTrackers("worker-c")]);
      expect(results.reduce((a, b) => a + b, 0)).toBe(1);
      expect(h.app.admin.calls.filter((c) => JSON.stringify(c.body).includes("metafieldsSet(")).length).toBe(before + 1);
      const state = await h.app.db.prisma.storefrontState.findUniqueOrThrow({ where: { shop: SHOP } });
      expect(state.nextSyncAt.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
      expect(await refreshDueTrackers("worker-a")).toBe(0);
    });

    it("a shop connected without the admin (before the storefront existed, say) is published by the worker", async () => {
      const other = `tracker-late-${database}.myshopify.com`;
      expect((await openPage(h.app.url, other, "/app")).status).toBe(200);
      await h.connect(other);
      expect(storefrontAdmin(h.app.admin).metafields(other).get("marketing_sync.tracker")).toBeUndefined();
      expect(await refreshDueTrackers("worker-a")).toBe(1);
      expect(JSON.parse(storefrontAdmin(h.app.admin).metafields(other).get("marketing_sync.tracker")!.value)).toMatchObject({ mode: "modern" });
      expect(await refreshDueTrackers("worker-a")).toBe(0);
    });

    it("a service outage during a refresh keeps the published snippet and retries later", async () => {
      const published = metafield()!.value;
      await h.app.db.prisma.storefrontState.update({ where: { shop: SHOP }, data: { nextSyncAt: new Date(Date.now() - 1000) } });
      h.emulator.setFaults({ serverErrors: 1, pathPrefix: "/api/account/website-tracker" });
      expect(await refreshDueTrackers("worker-a")).toBe(1);
      h.emulator.clearFaults();
      expect(metafield()!.value).toBe(published);
      const state = await h.app.db.prisma.storefrontState.findUniqueOrThrow({ where: { shop: SHOP } });
      expect(state.trackerSyncError).toBeTruthy();
      expect(state.nextSyncAt.getTime()).toBeLessThan(Date.now() + 3_600_000);
      expect((await overview()).tracker.syncError).toBeTruthy();
    });
  });

  describe("the Storefront page (onboarding)", () => {
    it("shows the embed as not added, with the theme editor deep link that turns it on", async () => {
      const o = await overview();
      expect(o.embed.state).toBe("not_added");
      expect(o.embed.themeName).toBe("Dawn");
      expect(o.embed.activateUrl).toBe(`https://${SHOP}/admin/themes/current/editor?context=apps&activateAppId=test-app-key/tracker-embed`);
    });

    it("reads the live theme's settings_data.json: on, switched off, unreadable", async () => {
      storefrontAdmin(h.app.admin).setEmbed(SHOP, "enabled");
      expect((await overview()).embed.state).toBe("enabled");
      storefrontAdmin(h.app.admin).setEmbed(SHOP, "disabled");
      expect((await overview()).embed.state).toBe("disabled");
      storefrontAdmin(h.app.admin).failThemes(SHOP, true);
      expect((await overview()).embed.state).toBe("unknown");
      storefrontAdmin(h.app.admin).failThemes(SHOP, false);
    });

    it("shows when the tracker last saw an event, and what became of storefront events", async () => {
      expect((await overview()).tracker.lastEventTrackedAt).toBeNull();
      await h.app.db.prisma.shop.update({ where: { domain: SHOP }, data: { settings: { storefrontEvents: true } } });
      h.startWorkers();
      await postProxyEvent(h.app.url, signedProxyQuery({ shop: SHOP }), { event: "product_viewed", visitorId: "v1", product: { id: "1", title: "Hat" } });
      await postProxyEvent(h.app.url, signedProxyQuery({ shop: SHOP }), { event: "product_viewed", product: { id: "1", title: "Hat" } });
      await h.settle();
      const o = await overview();
      expect(o.tracker.lastEventTrackedAt).not.toBeNull();
      expect(o.events).toMatchObject({ enabled: true, queued: 1, anonymous: 1 });
      const page = await openPage(h.app.url, SHOP, "/app/storefront");
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("Tracker embed in your theme");
      expect(html).toContain("Last event your marketing account recorded");
      expect(html).toContain("Last storefront event received");
      // The embed is not on, yet the account saw an event (this app's own): the page says where it came from.
      expect(o.embed.state).not.toBe("enabled");
      expect(html).toContain("data-tracker-source-hint");
      expect(html).not.toContain("data-events-off-hint");
    });
  });
});
