/**
 * The home page (Sync health) answers "is it working, and what did it do", over HTTP with a
 * session token: the tracker embed as the fake Admin's live theme has it (settings_data.json) with
 * the theme editor's deep link, the last campaigns at the emulator, contacts synced both ways and
 * subscribers gained; numbers the service cannot give are said to be unreadable where they were;
 * one store change that could not be delivered counts once, however many of its calls failed.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { storefrontAdmin } from "../../dev/shopify/fake-storefront";
import { consentReturnStatus, seedConsentReturnStates } from "~/consent-return/consent-return.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { createMarketingClient } from "~/services/marketing/client.server";
import { install, newShop, until } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { loadData, openPage, routeData } from "./support";

interface Home {
  banner: { status: string; reason: string };
  openDead: number;
  kinds: { kind: string; openDead: number }[];
  consent: unknown;
  home: {
    embed: { state: string; themeName: string | null; activateUrl: string };
    tracker: { state: string };
    contacts: { read: true; value: Record<string, number> } | { read: false; reason: string } | null;
    campaigns: { read: true; value: { id: string; name: string; status: string; atLabel: string }[] } | { read: false; reason: string } | null;
    bothWays: { contactsSynced: number; contactsWaiting: number; consentReturned: number; gained: number; lastReturnSweepAt: string | null };
  };
}

describeEachDatabase("the home page", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(async () => {
    h.emulator.clearFaults();
    await h.reset();
  });

  const home = async (shop: string) => routeData<Home>(await loadData(h.app.url, shop, "/app"), "routes/app._index");

  it("shows the tracker embed as the live theme has it, with the theme editor link that turns it on", async () => {
    const shop = newShop("home-embed");
    await install(h, shop);
    const link = `https://${shop}/admin/themes/current/editor?context=apps&activateAppId=test-app-key/tracker-embed`;
    expect((await home(shop)).home.embed).toMatchObject({ state: "not_added", themeName: "Dawn", activateUrl: link });
    let html = await (await openPage(h.app.url, shop, "/app")).text();
    expect(html).toContain('data-embed-state="not_added"');
    expect(html).toContain(`href="${link.replaceAll("&", "&amp;")}"`);
    expect(html).toContain("Turn on the tracker embed");

    storefrontAdmin(h.app.admin).setEmbed(shop, "disabled");
    expect((await home(shop)).home).toMatchObject({ embed: { state: "disabled" }, tracker: { state: "embed_off" } });

    storefrontAdmin(h.app.admin).setEmbed(shop, "enabled");
    const on = await home(shop);
    expect(on.home.embed.state).toBe("enabled");
    html = await (await openPage(h.app.url, shop, "/app")).text();
    expect(html).toContain('data-embed-state="enabled"');
    expect(html).not.toContain("Turn on the tracker embed");
  });

  it("lists the last campaigns, newest first, as the service has them", async () => {
    const shop = newShop("home-campaigns");
    await install(h, shop);
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    const names = ["Home: spring sale", "Home: summer sale", "Home: autumn sale", "Home: winter sale"];
    for (const name of names) await svc.campaigns.create({ name });
    const { campaigns } = (await home(shop)).home;
    expect(campaigns).toMatchObject({ read: true });
    expect(campaigns?.read && campaigns.value.map((c) => c.name)).toEqual(["Home: winter sale", "Home: autumn sale", "Home: summer sale"]);
    expect(campaigns?.read && campaigns.value[0]).toMatchObject({ status: "draft", atLabel: "Created" });
    const html = await (await openPage(h.app.url, shop, "/app")).text();
    expect(html).toContain("Last campaigns");
    expect(html).toContain("Home: winter sale");
  });

  it("counts contacts synced both ways and the subscribers gained", async () => {
    const shop = newShop("home-both-ways");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    const recent = new Date(Date.now() - 86_400_000).toISOString();
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "8101", consent: "subscribed", consentUpdatedAt: recent, updatedAt: recent }) });
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "8102", consent: "subscribed", consentUpdatedAt: "2025-01-01T10:00:00Z" }) });
    // Not subscribed: not a contact (the default settings push subscribers only).
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "8103", consent: "not_subscribed" }) });
    expect((await home(shop)).home.bothWays).toMatchObject({ contactsSynced: 2, contactsWaiting: 0, consentReturned: 0, gained: 1, lastReturnSweepAt: null });

    // The recipient unsubscribes at the service; the sweep writes it to Shopify.
    const res = await fetch(`${h.emulator.url}/__emulator/people/status`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "customer8102@example.com", statusDetails: "unsubscribed" }),
    });
    expect(res.status).toBe(200);
    await seedConsentReturnStates(PIPELINE_POLICY);
    await h.app.db.sql.query(`UPDATE "ConsentReturnState" SET "dueAt" = now() WHERE shop = $1`, [shop]);
    await until("the sweep", async () => (await consentReturnStatus(shop))?.lastSweepAt);
    const after = (await home(shop)).home.bothWays;
    expect(after).toMatchObject({ consentReturned: 1, lastReturnSweepAt: expect.any(String) });
    const html = await (await openPage(h.app.url, shop, "/app")).text();
    expect(html).toContain('data-both-ways="to-shopify">1<');
    expect(html).toContain('data-both-ways="gained">1<');
  });

  it("with the service failing its people list, the contact counts say they could not be read where they were", async () => {
    const shop = newShop("home-outage");
    await install(h, shop);
    expect((await home(shop)).home.contacts).toMatchObject({ read: true });
    h.emulator.setFaults({ errorRate: 1, pathPrefix: "/api/people" });
    const data = await home(shop);
    expect(data.home.contacts).toMatchObject({ read: false, reason: expect.stringContaining("could not be read") });
    const html = await (await openPage(h.app.url, shop, "/app")).text();
    expect(html).toContain("Contacts in your marketing account");
    expect(html).toContain("data-contacts-unreadable");
    expect(html).toContain("The contact counts could not be read");
    // What the number measures is said beside it: the service's contacts, not Shopify's subscribers.
    expect(html).toContain("data-contacts-source");
  });

  it("one store change that could not be delivered counts once, however many of its calls failed", async () => {
    const shop = newShop("home-dead");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    h.emulator.setFaults({ errorRate: 1, pathPrefix: "/api/" });
    // Two customer edits: each is a contact update and a customer event.
    await h.deliver({ topic: "customers/update", shop, body: customerBody({ id: "8201", consent: "subscribed" }) });
    await h.deliver({ topic: "customers/update", shop, body: customerBody({ id: "8202", consent: "subscribed" }) });
    await until("every call given up", async () => {
      const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
      return calls.length === 4 && calls.every((c) => c.status === "dead");
    });
    const data = await home(shop);
    expect(data.openDead).toBe(2);
    expect(data.banner.reason).toBe("2 changes could not be delivered.");
    expect(data.kinds.find((k) => k.kind === "customer")).toMatchObject({ openDead: 2 });
  });
});
