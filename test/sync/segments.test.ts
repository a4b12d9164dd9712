/**
 * Shopify customer segments mirrored as contact tags, end to end over HTTP: the merchant picks
 * segments on the Settings page (listed from the fake Admin's `segments`), then signed
 * customer.joined_segment / customer.left_segment webhooks go through the pipeline to the
 * marketing-service emulator. Shopify's own sample body (test/fixtures) is the payload.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FakeSegment } from "../../dev/shopify/fake-admin";
import { forgetSubscriptions, webhookSubscriptions } from "../../dev/shopify/fake-webhook-subscriptions";
import { customerEmail, startFakeStore } from "../../dev/shopify/fake-store";
import { TAG_PREFIX, type MirroredSegmentRow } from "../../app/segments/segments.server";
import { importProgress } from "../../app/segments/progress";
import { createMarketingClient } from "~/services/marketing/client.server";
import { CONTACT_TAG_TABLE } from "../../app/sync/event-mapping";
import { planWebhook } from "../../app/sync/plan-webhook";
import { actionData, loadData, routeData, tokenFor } from "../admin/support";
import { listDeadLetters } from "~/pipeline/dead-letters.server";
import { install, newShop, until } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { CHROME_UA } from "../support/session-token";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { makeCtx } from "./fixtures";

type Json = Record<string, unknown>;
const sample = (topic: string): Json => JSON.parse(fixture(topic)) as Json;
const segment = (id: number, name: string): FakeSegment => ({
  id: `gid://shopify/Segment/${id}`,
  name,
  query: "number_of_orders > 0",
  creationDate: "2026-01-01T00:00:00Z",
  lastEditDate: "2026-01-01T00:00:00Z",
});
const gid = (id: number) => `gid://shopify/Segment/${id}`;

interface Choices {
  available: { id: string; name: string }[] | null;
  problem: string | null;
  picked: MirroredSegmentRow[];
}

describeEachDatabase("Shopify segments as contact tags", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  /** The Settings page's segment section, as the page loads it. */
  const choices = async (shop: string) => (await routeData<{ segments: Choices }>(await loadData(h.app.url, shop, "/app/settings"), "routes/app.settings")).segments;
  /** The segment section's Save, as its fetcher posts it (one `segment` field per picked segment). */
  async function pick(shop: string, ids: string[]) {
    const body = new URLSearchParams([["intent", "segments"], ...ids.map((id) => ["segment", id])]);
    const res = await fetch(`${h.app.url}/app/settings.data`, {
      method: "POST",
      headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await tokenFor(shop)}`, "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    });
    expect(res.status).toBe(200);
    return actionData<{ ok: boolean; error?: string; picked?: Choices["picked"] }>(res);
  }
  const membership = (topic: "customer.joined_segment" | "customer.left_segment", customerId: string, segmentId: number) => ({
    ...sample(topic),
    customer_id: `gid://shopify/Customer/${customerId}`,
    segment_id: gid(segmentId),
  });
  const deliver = (shop: string, topic: string, body: object) => h.deliver({ topic, shop, body });
  const peoplePosts = (email: string) => h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as Json).email === email);

  it("Settings lists the store's segments and saves the pick; joined adds the tag, left removes it, other segments change nothing", async () => {
    const shop = newShop("segments");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(3, "VIP"), segment(4, "Win back"), segment(5, "Big, spenders")];
    h.startWorkers(1, FAST_POLICY);

    const before = await choices(shop);
    expect(before.available?.map((s) => s.name)).toEqual(["VIP", "Win back", "Big, spenders"]);
    expect(before.picked).toEqual([]);
    expect(await pick(shop, [gid(3), gid(5)])).toMatchObject({
      ok: true,
      picked: [
        { segmentId: gid(3), name: "VIP", tag: "shopify-segment:VIP" },
        // The service filters by comma-separated tag names: no comma in a tag.
        { segmentId: gid(5), name: "Big, spenders", tag: "shopify-segment:Big spenders" },
      ],
    });
    expect((await choices(shop)).picked.map((p) => p.segmentId)).toEqual([gid(3), gid(5)]);

    const email = "segment-member@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "7001", email, consent: "subscribed" }));
    expect(h.emulator.person(email)?.tags).toEqual([]);

    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7001", 3));
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:VIP"]);

    // Not picked: nothing is sent, and the delivery says why.
    const posts = peoplePosts(email).length;
    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7001", 4));
    expect(peoplePosts(email)).toHaveLength(posts);
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:VIP"]);
    const ignored = await h.app.db.prisma.webhookDelivery.findFirstOrThrow({ where: { shop, topic: "customer.joined_segment" }, orderBy: { receivedAt: "desc" } });
    expect(ignored).toMatchObject({ outcome: "ignored", outcomeDetail: expect.stringContaining("not picked in Settings") });

    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7001", 5));
    expect([...h.emulator.person(email)!.tags].sort()).toEqual(["shopify-segment:Big spenders", "shopify-segment:VIP"]);
    await deliver(shop, "customer.left_segment", membership("customer.left_segment", "7001", 3));
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:Big spenders"]);
    // Only the segment's own tag is named: a tag set in the service by anyone else stays.
    expect(peoplePosts(email).at(-1)?.body).toMatchObject({ tags: { "shopify-segment:VIP": false } });
    expect(Object.keys((peoplePosts(email).at(-1)?.body as Json).tags as Json)).toEqual(["shopify-segment:VIP"]);
  });

  it("the first picked segment subscribes the shop to the segment topics through the Admin API (Shopify offers them nowhere else); none picked removes them", async () => {
    const shop = newShop("segments-subs");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(31, "VIP"), segment(32, "Win back")];
    const subscribed = () => webhookSubscriptions(h.app.admin, shop).map((s) => ({ topic: s.topic, uri: s.uri, format: s.format })).sort((a, b) => a.topic.localeCompare(b.topic));
    // The app's configured URL (SHOPIFY_APP_URL, test/support/env.ts) and its webhook route.
    const atWebhooks = (topic: string) => ({ topic, uri: `${process.env.SHOPIFY_APP_URL}/webhooks`, format: "JSON" });

    expect(subscribed()).toEqual([]);
    expect(await pick(shop, [gid(31)])).toMatchObject({ ok: true });
    expect(subscribed()).toEqual([atWebhooks("CUSTOMER_JOINED_SEGMENT"), atWebhooks("CUSTOMER_LEFT_SEGMENT")]);
    // More segments, or the same again: still one subscription per topic.
    expect(await pick(shop, [gid(31), gid(32)])).toMatchObject({ ok: true });
    expect(await pick(shop, [gid(32)])).toMatchObject({ ok: true });
    expect(subscribed()).toEqual([atWebhooks("CUSTOMER_JOINED_SEGMENT"), atWebhooks("CUSTOMER_LEFT_SEGMENT")]);

    // Shopify's 2026-04 sample (GIDs for customer and segment) through the subscription's endpoint.
    h.startWorkers(1, FAST_POLICY);
    const email = "segment-subscribed@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "7301", email, consent: "subscribed" }));
    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7301", 32));
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:Win back"]);

    // Shopify drops an app's subscriptions with an uninstall; the picks outlive it, and the
    // Settings page puts the subscriptions back.
    forgetSubscriptions(h.app.admin, shop);
    expect(subscribed()).toEqual([]);
    expect((await choices(shop)).picked.map((p) => p.segmentId)).toEqual([gid(32)]);
    expect(subscribed()).toEqual([atWebhooks("CUSTOMER_JOINED_SEGMENT"), atWebhooks("CUSTOMER_LEFT_SEGMENT")]);

    expect(await pick(shop, [])).toMatchObject({ ok: true, picked: [] });
    expect(subscribed()).toEqual([]);
    await choices(shop);
    expect(subscribed()).toEqual([]);
  });

  it("a customer who is not a contact yet gets the tag with the upsert that creates the contact", async () => {
    const shop = newShop("segments-later");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(8, "Birthday this month")];
    expect(await pick(shop, [gid(8)])).toMatchObject({ ok: true });
    h.startWorkers(1, FAST_POLICY);
    const email = "not-yet@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "7002", email, consent: "not_subscribed" }));
    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7002", 8));
    expect(h.emulator.person(email)).toBeUndefined();
    await deliver(shop, "customers/update", customerBody({ id: "7002", email, consent: "subscribed", updatedAt: "2026-02-01T10:00:00Z", consentUpdatedAt: "2026-02-01T10:00:00Z" }));
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:Birthday this month"]);
  });

  it("a customer the app never saw is read from Shopify first, then gets the tag; an unpicked segment reads nothing", async () => {
    const store = await startFakeStore(h.app.admin, { customers: 20, products: 1, orders: 1 }, { seed: 9 });
    try {
      const shop = newShop("segments-lookup");
      await install(h, shop);
      h.app.admin.shops.get(shop)!.segments = [segment(41, "VIP"), segment(42, "Other")];
      await pick(shop, [gid(41)]);
      h.startWorkers(1, FAST_POLICY);
      const c = store.objects.customers.find(
        (x) => customerEmail(x) && (x.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === "SUBSCRIBED",
      )!;
      c.tags = ["wholesale"];
      const email = customerEmail(c)!;
      const lookups = store.answered.LookupCustomer ?? 0;
      await deliver(shop, "customer.joined_segment", { ...sample("customer.joined_segment"), customer_id: c.id, segment_id: gid(42) });
      expect(store.answered.LookupCustomer ?? 0).toBe(lookups);
      expect(h.emulator.person(email)).toBeUndefined();
      await deliver(shop, "customer.joined_segment", { ...sample("customer.joined_segment"), customer_id: c.id, segment_id: gid(41) });
      expect(store.answered.LookupCustomer).toBe(lookups + 1);
      expect([...h.emulator.person(email)!.tags].sort()).toEqual(["shopify-segment:VIP", "wholesale"]);
    } finally {
      await store.close();
    }
  });

  it("goes through the delivery queue: a service error is retried until the tag arrives, and too many end as a dead letter", async () => {
    const shop = newShop("segments-retry");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(51, "VIP")];
    await pick(shop, [gid(51)]);
    h.startWorkers(1, FAST_POLICY);
    const email = "retry-member@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "7051", email, consent: "subscribed" }));
    h.emulator.setFaults({ serverErrors: 2, pathPrefix: "/api/people" });
    await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7051", 51));
    await until("the tag after retries", async () => h.emulator.person(email)?.tags.includes("shopify-segment:VIP"));
    h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
    await deliver(shop, "customer.left_segment", membership("customer.left_segment", "7051", 51));
    const dead = await until("a dead letter", async () => (await listDeadLetters(shop)).find((d) => d.objectKey === "customer:7051"));
    expect(dead).toBeTruthy();
    h.emulator.clearFaults();
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:VIP"]);
  });

  it("the tag is fixed when picked: a renamed segment keeps it, a new segment with the old name gets its own", async () => {
    const shop = newShop("segments-rename");
    await install(h, shop);
    const shopify = h.app.admin.shops.get(shop)!;
    shopify.segments = [segment(11, "VIP")];
    await pick(shop, [gid(11)]);
    shopify.segments = [segment(11, "Former VIP"), segment(12, "VIP")];
    const saved = await pick(shop, [gid(11), gid(12)]);
    expect(saved.picked?.map((p) => [p.segmentId, p.tag])).toEqual([
      [gid(11), "shopify-segment:VIP"],
      [gid(12), "shopify-segment:VIP (12)"],
    ]);
    // Un-picking keeps the other; a segment deleted in Shopify since it was picked can still be kept.
    shopify.segments = [segment(12, "VIP")];
    expect((await pick(shop, [gid(11)])).picked?.map((p) => p.segmentId)).toEqual([gid(11)]);
    expect((await choices(shop)).picked.map((p) => p.name)).toEqual(["VIP"]);
  });

  it("a store with more segments than one page lists them all (250 a page, in Shopify's order)", async () => {
    const shop = newShop("segments-many");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = Array.from({ length: 260 }, (_, i) => segment(100 + i, `Segment ${i}`));
    const listed = await choices(shop);
    expect(listed.available).toHaveLength(260);
    expect(listed.available?.at(-1)).toEqual({ id: gid(359), name: "Segment 259" });
    expect(await pick(shop, [gid(359)])).toMatchObject({ ok: true, picked: [{ tag: "shopify-segment:Segment 259" }] });
  });

  /** A fake store whose first `members` customers are the segment's members in Shopify. */
  async function storeWithMembers(shop: string, segmentNumber: number, members: number) {
    const store = await startFakeStore(h.app.admin, { customers: members + 5, products: 1, orders: 1 }, { seed: 11 });
    const shopify = h.app.admin.shops.get(shop)!;
    shopify.segments = [segment(segmentNumber, "Current")];
    const inSegment = store.objects.customers.slice(0, members);
    shopify.segmentMembers[gid(segmentNumber)] = inSegment.map((c) => String(c.id).split("/").pop()!);
    // The members the service gets as contacts: subscribed, with an email.
    const contacts = inSegment.filter((c) => customerEmail(c) && (c.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === "SUBSCRIBED");
    return { store, contacts: contacts.map((c) => customerEmail(c)!) };
  }
  const importRow = (shop: string, segmentId: string) => h.app.db.prisma.mirroredSegment.findUniqueOrThrow({ where: { shop_segmentId: { shop, segmentId } } });
  const imported = (shop: string) => h.app.db.prisma.webhookDelivery.count({ where: { shop, source: "segment-import", topic: "customer.joined_segment" } });
  const allTagged = (emails: string[], tag: string) => emails.every((e) => h.emulator.person(e)?.tags.includes(tag));

  it("picking a segment tags the members it already has, page after page (more than one page of 250)", async () => {
    const shop = newShop("segments-import");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 61, 260);
    try {
      expect(contacts.length).toBeGreaterThan(10);
      await pick(shop, [gid(61)]);
      h.startWorkers(1, FAST_POLICY);
      await until("every current member tagged", async () => allTagged(contacts, "shopify-segment:Current"), 120_000);
      expect(await importRow(shop, gid(61))).toMatchObject({ importStatus: "done", importTotal: 260, importDone: 260, importError: null });
      expect(await imported(shop)).toBe(260);
      // A customer outside the segment gets no tag.
      const outside = store.objects.customers.slice(260).map((c) => customerEmail(c)).filter((e): e is string => Boolean(e));
      for (const e of outside) expect(h.emulator.person(e)?.tags ?? []).not.toContain("shopify-segment:Current");
      expect((await choices(shop)).picked[0]).toMatchObject({ importStatus: "done", importTotal: 260 });
    } finally {
      await store.close();
    }
  }, 150_000);

  // The attempts count the failures of the page being read: a page imported resets it, so that
  // failures spread over a long import (a page each) do not add up to giving up.
  it("a page imported leaves no attempt counted against the next", async () => {
    const shop = newShop("segments-import-attempts");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 66, 300);
    try {
      await pick(shop, [gid(66)]);
      h.startWorkers(1, FAST_POLICY);
      await until("every current member tagged", async () => allTagged(contacts, "shopify-segment:Current"), 120_000);
      expect(await importRow(shop, gid(66))).toMatchObject({ importStatus: "done", importDone: 300, importAttempts: 0 });
    } finally {
      await store.close();
    }
  }, 150_000);

  it("Settings counts the members the service tagged, and says why the others were not", async () => {
    const shop = newShop("segments-import-outcome");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 65, 30);
    try {
      expect(contacts.length).toBeGreaterThan(0);
      expect(contacts.length).toBeLessThan(30);
      await pick(shop, [gid(65)]);
      h.startWorkers(1, FAST_POLICY);
      await until("every current member tagged", async () => allTagged(contacts, "shopify-segment:Current"), 120_000);
      const row = await until("the outcome of every member", async () => {
        const p = (await choices(shop)).picked[0];
        return p?.importStatus === "done" && p.outcome.waiting === 0 ? p : undefined;
      });
      // Tagged: what the emulator has, not what was queued.
      const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
      const taggedAtService = (await svc.people.list({ tags: ["shopify-segment:Current"], perPage: 1 })).meta.total;
      expect(row.outcome.tagged).toBe(taggedAtService);
      // Subscribers, and unsubscribed customers (contacts kept unsubscribed), are contacts: tagged.
      expect(row.outcome.tagged).toBeGreaterThanOrEqual(contacts.length);
      expect(row.outcome.tagged).toBeLessThan(30);
      expect(row.outcome.failed).toBe(0);
      // Every other member is counted with its reason in words.
      expect(row.outcome.skipped.reduce((n, s) => n + s.count, 0)).toBe(30 - row.outcome.tagged);
      expect(row.outcome.skipped.map((s) => s.reason)).toContain("are not subscribed");
      const text = importProgress(row);
      expect(text).toMatch(new RegExp(`^${row.outcome.tagged} of 30 current members tagged\\. `));
      expect(text).toMatch(/\d+ members? (are|is) not subscribed: not tagged/);
      expect(text).not.toContain("All 30");
    } finally {
      await store.close();
    }
  }, 150_000);

  it("a worker stopped between pages resumes from the saved cursor and loses no member", async () => {
    const shop = newShop("segments-import-restart");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 62, 300);
    try {
      await pick(shop, [gid(62)]);
      h.startWorkers(1, FAST_POLICY);
      const first = await until("the first page saved", async () => {
        const row = await importRow(shop, gid(62));
        return row.importDone >= 250 ? row : undefined;
      });
      await h.stopWorkers();
      const stopped = await importRow(shop, gid(62));
      // The worker may have read the second page before it stopped; if not, the first is saved with its cursor.
      if (stopped.importStatus !== "done") {
        expect(stopped).toMatchObject({ importStatus: "running", importDone: 250, importCursor: expect.any(String), importLockedBy: null });
        expect(await imported(shop)).toBe(250);
      }
      expect(first.importTotal).toBe(300);
      h.startWorkers(1, FAST_POLICY);
      await until("every current member tagged", async () => allTagged(contacts, "shopify-segment:Current"), 120_000);
      expect(await importRow(shop, gid(62))).toMatchObject({ importStatus: "done", importDone: 300 });
      expect(await imported(shop)).toBe(300);
    } finally {
      await store.close();
    }
  }, 150_000);

  it("a live join is not held behind an import in progress, and an imported join does not undo a later live leave", async () => {
    const shop = newShop("segments-import-live");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 63, 260);
    try {
      const email = "live-member@example.com";
      h.startWorkers(1, FAST_POLICY);
      await deliver(shop, "customers/create", customerBody({ id: "7063", email, consent: "subscribed" }));
      // A member who leaves while the import runs: Shopify still listed them when the page was read.
      const leaver = store.objects.customers.find((c) => customerEmail(c) === contacts[0])!;
      const leaverEmail = customerEmail(leaver)!;
      h.emulator.setFaults({ latencyMs: 100, pathPrefix: "/api/people" });
      await pick(shop, [gid(63)]);
      await until("the import's deliveries queued", async () => (await importRow(shop, gid(63))).importStatus === "done");
      await deliver(shop, "customer.joined_segment", membership("customer.joined_segment", "7063", 63));
      await deliver(shop, "customer.left_segment", { ...membership("customer.left_segment", "0", 63), customer_id: leaver.id });
      h.emulator.clearFaults();
      await until("every current member tagged", async () => allTagged(contacts.filter((e) => e !== leaverEmail), "shopify-segment:Current"), 120_000);
      await h.settle();
      const upserts = h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST");
      const live = upserts.findIndex((r) => (r.body as Json).email === email && JSON.stringify((r.body as Json).tags ?? {}).includes("Current"));
      const lastImported = upserts.findLastIndex((r) => contacts.includes((r.body as Json).email as string));
      expect(live).toBeGreaterThanOrEqual(0);
      expect(live).toBeLessThan(lastImported);
      expect(h.emulator.person(email)?.tags).toContain("shopify-segment:Current");
      if (h.emulator.person(leaverEmail)) expect(h.emulator.person(leaverEmail)?.tags).not.toContain("shopify-segment:Current");
    } finally {
      await store.close();
    }
  }, 150_000);

  it("an import Shopify keeps refusing stops with the reason; Try again continues it", async () => {
    const shop = newShop("segments-import-fail");
    await install(h, shop);
    const { store, contacts } = await storeWithMembers(shop, 64, 20);
    try {
      await pick(shop, [gid(64)]);
      const shopify = h.app.admin.shops.get(shop)!;
      // Deleted in Shopify before the import ran: every page is refused.
      const kept = shopify.segments;
      shopify.segments = [];
      h.startWorkers(1, FAST_POLICY);
      const failed = await until("the import stopped", async () => {
        const row = (await choices(shop)).picked[0];
        return row?.importStatus === "failed" ? row : undefined;
      });
      expect(failed.importError).toContain("Segment does not exist");
      shopify.segments = kept;
      const body = new URLSearchParams([["intent", "segment-import-retry"], ["segment", gid(64)]]);
      const res = await fetch(`${h.app.url}/app/settings.data`, {
        method: "POST",
        headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await tokenFor(shop)}`, "content-type": "application/x-www-form-urlencoded" },
        body: body.toString(),
      });
      expect(await actionData(res)).toMatchObject({ ok: true });
      await until("every current member tagged", async () => allTagged(contacts, "shopify-segment:Current"), 60_000);
      expect((await choices(shop)).picked[0]).toMatchObject({ importStatus: "done", importTotal: 20, importDone: 20, importError: null });
    } finally {
      await store.close();
    }
  }, 150_000);

  it("a segment that is not the store's is refused with the reason, and nothing is saved", async () => {
    const shop = newShop("segments-bad");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(21, "VIP")];
    expect(await pick(shop, [gid(999)])).toEqual({ ok: false, error: `Segment ${gid(999)} is not one of your store's segments.` });
    expect(await pick(shop, ["gid://shopify/Customer/1"])).toMatchObject({ ok: false, error: "Not a Shopify segment id." });
    expect((await choices(shop)).picked).toEqual([]);
  });

  it("while Shopify's budget for the store is spent, Settings keeps the picks and says Shopify did not answer; a new pick is refused with the reason", async () => {
    const shop = newShop("segments-spent");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(41, "VIP"), segment(42, "Win back")];
    expect(await pick(shop, [gid(41)])).toMatchObject({ ok: true });
    // Drained (a history import, another app): the list (252 points) would wait minutes for the refill.
    h.app.admin.throttle({ currentlyAvailable: 0, restoreRate: 1 });
    try {
      expect(await choices(shop)).toMatchObject({
        available: null,
        problem: "Shopify did not answer with your segments. Reload the page to try again.",
        picked: [{ segmentId: gid(41), name: "VIP" }],
      });
      expect(await pick(shop, [gid(41), gid(42)])).toEqual({ ok: false, error: "Shopify did not answer with your segments, so the new choice could not be checked. Try again." });
    } finally {
      h.app.admin.throttle({ currentlyAvailable: 1_000, restoreRate: 100 });
    }
    expect((await choices(shop)).picked.map((p) => p.segmentId)).toEqual([gid(41)]);
  });
});

describe("segment tags beside the customer's own tags (planning)", () => {
  it("an imported join read before a live leave does not put the tag back; one of a later pick does", () => {
    const ctx = makeCtx({ segmentTags: { "3": "shopify-segment:VIP" }, now: new Date("2026-05-01T00:00:00Z") });
    const created = planWebhook("customers/create", customerBody({ id: "2", email: "left@example.com", consent: "subscribed" }), ctx);
    const member = { customer_id: "gid://shopify/Customer/2", segment_id: "gid://shopify/Segment/3" };
    const left = planWebhook("customer.left_segment", member, { ...ctx, prior: created.nextState });
    const stale = planWebhook("customer.joined_segment", { ...member, picked_at: "2026-04-30T00:00:00Z" }, { ...ctx, prior: left.nextState });
    expect(stale).toMatchObject({ calls: [], skipped: "customer left the segment after it was picked" });
    const later = planWebhook("customer.joined_segment", { ...member, picked_at: "2026-05-02T00:00:00Z" }, { ...ctx, prior: left.nextState });
    expect((later.calls[0] as { body: Json }).body.tags).toEqual({ "shopify-segment:VIP": true });
  });

  it("docs/event-mapping.md names the tag the app gives", () => {
    expect(CONTACT_TAG_TABLE.rows.map((r) => r.field)).toContain(`${TAG_PREFIX}<segment name>`);
  });

  it("a full Shopify tag list never removes a segment tag, and a new contact gets both", () => {
    const ctx = makeCtx({ segmentTags: { "3": "shopify-segment:VIP" } });
    const body = { ...customerBody({ id: "2", email: "both@example.com", consent: "not_subscribed" }), tags: "wholesale" };
    const first = planWebhook("customers/create", body, ctx);
    const joined = planWebhook("customer.joined_segment", fixture("customer.joined_segment"), { ...ctx, prior: first.nextState });
    expect(joined.calls).toEqual([]);
    const subscribed = { ...body, tags: "wholesale, eu", email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-03-01T00:00:00Z" } };
    const created = planWebhook("customers/update", subscribed, { ...ctx, prior: joined.nextState });
    expect(created.calls[0]).toMatchObject({ op: "person.upsert" });
    expect((created.calls[0] as { body: Json }).body.tags).toEqual({ wholesale: true, eu: true, "shopify-segment:VIP": true });
    const later = planWebhook("customers/update", { ...subscribed, tags: "eu", updated_at: "2026-04-01T00:00:00Z" }, { ...ctx, prior: created.nextState });
    expect((later.calls[0] as { body: Json }).body.tags).toEqual({ wholesale: false });
  });
});
