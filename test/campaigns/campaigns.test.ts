// Campaigns and templates in the admin, over real HTTP against the emulator and the fake Admin:
// every operation, every refusal the spec lists for it, and two shops that never see each other.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GraphqlReply } from "../../dev/shopify/fake-admin";
import { pauseShop } from "~/shops/connection.server";
import { createMarketingClient } from "~/services/marketing/client.server";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";

const A = "campaigns-a.myshopify.com";
const B = "campaigns-b.myshopify.com";
const NOT_CONNECTED = "campaigns-none.myshopify.com";
const PAUSED = "campaigns-paused.myshopify.com";
/** A's zone: the campaign page shows it and its schedule form carries it. */
const NY = "America/New_York";

const LIST = "routes/app.campaigns._index";
const ONE = "routes/app.campaigns.$id";
const TEMPLATES = "routes/app.templates";

interface Problem {
  kind: string;
  title: string;
  message: string;
  fields?: Record<string, string>;
  links?: { label: string; url: string; external: boolean }[];
  canForce?: boolean;
  upgrade?: { levelName: string; monthlyAmount: number; proratedAmount: number };
}
type Result = { ok: true; intent: string; toast: string; goTo?: string } | { ok: false; intent: string; problem: Problem };
interface CampaignView {
  id: number;
  name: string;
  status: string;
  subject: string;
  senderEmail: string;
  scheduledAt: string | null;
  scheduled: { local: string; utc: string; zone: string } | null;
  editorUrl: string | null;
  dashboardUrl: string | null;
}
interface ListData {
  service: { state: string } | null;
  campaigns: CampaignView[];
  page: { page: number; lastPage: number; total: number } | null;
  problem: Problem | null;
}
interface OneData {
  service: { state: string } | null;
  campaign: CampaignView | null;
  zone: string;
}

let h: PipelineHarness;
let zoneLookupFails = false;
let accountB: { apiKey: string; accountId: number };

beforeAll(async () => {
  h = await startPipelineHarness();
  // The store's time zone comes from Shopify (shop.ianaTimezone); A's is New York.
  h.app.admin.addShop({ domain: A, ianaTimezone: NY });
  // Shopify can fail to answer the store's zone (a throttle, an outage): tests switch that on.
  h.app.admin.onGraphql("ShopTimezone", (_q, _v, shop) =>
    zoneLookupFails ? new GraphqlReply({ errors: [{ message: "Throttled" }] }) : { shop: { ianaTimezone: h.app.admin.shops.get(shop)?.ianaTimezone ?? "UTC" } },
  );
  for (const shop of [A, B, NOT_CONNECTED, PAUSED]) expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
  accountB = h.emulator.createAccount({ company: "B Ltd", email: "owner@b-shop.example" });
  await h.connect(A);
  await h.connect(B, accountB.apiKey);
  await h.connect(PAUSED);
  await pauseShop(PAUSED, "Unauthenticated");
});
afterAll(() => h.close());
afterEach(() => h.emulator.clearFaults());

const load = async <T>(shop: string, path: string, route: string) => routeData<T>(await loadData(h.app.url, shop, path), route);
const act = async (shop: string, path: string, fields: Record<string, string>) => actionData<Result>(await postForm(h.app.url, shop, path, fields));
const problemOf = (r: Result): Problem => {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
  return r.problem;
};
const idOf = (r: Result): number => {
  if (!r.ok || !r.goTo) throw new Error(`expected a new campaign, got ${JSON.stringify(r)}`);
  return Number(r.goTo.split("/").at(-1));
};
const emuCampaign = (id: number) => h.emulator.state.campaigns.find((c) => c.id === id);
/** A draft with content (from a template), as the merchant creates it on the Templates page. */
const draftFromTemplate = async (shop = A, name = "Spring sale") => idOf(await act(shop, "/app/templates", { intent: "create", name, templateId: "tpl-1" }));
/** ...with a subject, as it must have before it can be sent or scheduled. */
const readyDraft = async (shop = A, name = "Spring sale") => {
  const id = await draftFromTemplate(shop, name);
  emuCampaign(id)!.subject = `${name}: news from the shop`;
  return id;
};
const sendsOf = (id: number) => h.emulator.requests.filter((r) => r.path === `/api/campaigns/${id}/send` || r.path === `/api/campaigns/${id}/schedule`);
/** The Details of a campaign as its page loaded them: the form posts them back in `loaded`. */
const loadedOf = (id: number) => {
  const c = emuCampaign(id)!;
  return JSON.stringify({ name: c.name, subject: c.subject, previewText: c.previewText, senderName: c.sender.name, senderEmail: c.sender.email, replyToName: c.replyTo.name, replyToEmail: c.replyTo.email });
};
/** The Details card as the page posts it. */
const details = (id: number, over: Record<string, string> = {}) => ({
  loaded: loadedOf(id),
  name: "Typed campaign",
  subject: "Typed, never saved",
  previewText: "",
  senderName: "Shop",
  senderEmail: "owner@default-shop.example",
  replyToName: "",
  replyToEmail: "owner@default-shop.example",
  ...over,
});

describe("session tokens", () => {
  it("every new page and action answers only to a valid session token", async () => {
    const id = await draftFromTemplate(A, "Guarded");
    const pages = ["/app/campaigns", `/app/campaigns/${id}`, "/app/templates", "/app/people", "/app/people/a%40b.example", "/app/people/by-customer/1"];
    for (const page of pages) {
      expect((await loadData(h.app.url, A, page)).status, page).not.toBe(401);
      for (const kind of ["forged", "expired", "wrong-audience"] as const) expect((await loadData(h.app.url, A, page, kind)).status, `${page} ${kind}`).toBe(401);
    }
    const before = h.emulator.requests.length;
    for (const kind of ["forged", "expired", "wrong-audience"] as const) {
      expect((await postForm(h.app.url, A, `/app/campaigns/${id}`, { intent: "delete" }, kind)).status).toBe(401);
      expect((await postForm(h.app.url, A, "/app/campaigns", { intent: "create", name: "x" }, kind)).status).toBe(401);
    }
    expect(h.emulator.requests.length).toBe(before);
    expect(emuCampaign(id)).toBeDefined();
  });
});

describe("a shop that cannot reach the service", () => {
  it("not connected: every page shows the empty state, actions point to the Connection page", async () => {
    for (const [path, route] of [["/app/campaigns", LIST], ["/app/templates", TEMPLATES]] as const) {
      const data = await load<{ service: { state: string } | null }>(NOT_CONNECTED, path, route);
      expect(data.service).toEqual({ state: "not_connected", pauseReason: null });
    }
    const r = problemOf(await act(NOT_CONNECTED, "/app/campaigns", { intent: "create", name: "x" }));
    expect(r.kind).toBe("not_connected");
    expect(r.links?.[0]?.url).toBe("/app/connection");
  });

  it("paused (key rejected): says so", async () => {
    const data = await load<ListData>(PAUSED, "/app/campaigns", LIST);
    expect(data.service).toMatchObject({ state: "paused", pauseReason: "Unauthenticated" });
    expect(problemOf(await act(PAUSED, "/app/campaigns/1", { intent: "send" })).kind).toBe("paused");
  });
});

describe("templates", () => {
  it("lists the account's own and the published shared templates, with a preview link the app never fetches", async () => {
    const data = await load<{ templates: { id: string; name: string; description: string; createdAt: string; previewUrl: string }[] }>(A, "/app/templates", TEMPLATES);
    const names = data.templates.map((t) => t.name);
    expect(names.slice(0, 2)).toEqual(["Welcome email", "Monthly newsletter"]);
    expect(names.length).toBeGreaterThan(2);
    const first = data.templates[0]!;
    expect(first.previewUrl).toBe(`${h.emulator.url}/templates/${first.id}/preview`);
    expect(first.createdAt).toBeTruthy();
    expect(h.emulator.requests.some((r) => r.path.includes("/preview"))).toBe(false);
  });

  it("creates a campaign from a template and opens it", async () => {
    const r = await act(A, "/app/templates", { intent: "create", name: "From the newsletter", templateId: "tpl-2" });
    expect(r).toMatchObject({ ok: true, toast: "Draft “From the newsletter” created" });
    const id = idOf(r);
    expect(emuCampaign(id)).toMatchObject({ name: "From the newsletter", status: "draft" });
    expect(emuCampaign(id)?.content).toBeTruthy();
    const one = await load<OneData>(A, `/app/campaigns/${id}`, ONE);
    expect(one.campaign).toMatchObject({ id: String(id), name: "From the newsletter", status: "draft" });
    expect(one.campaign?.editorUrl).toBe(`${h.emulator.url}/dashboard/campaigns/${id}/editor`);
  });

  it("an unknown template or a missing name is explained on the form", async () => {
    const unknown = problemOf(await act(A, "/app/templates", { intent: "create", name: "x", templateId: "tpl-nope" }));
    expect(unknown.fields?.templateId).toMatch(/no longer available/);
    const noName = problemOf(await act(A, "/app/campaigns", { intent: "create", name: "  " }));
    expect(noName.fields?.name).toBe("Give the campaign a name.");
  });
});

describe("campaign list", () => {
  it("tabs by status (sending includes preparing), sorts by name, pages", async () => {
    const ids: number[] = [];
    for (const name of ["Zeta", "Alpha", "Mu"]) ids.push(idOf(await act(A, "/app/campaigns", { intent: "create", name })));
    const preparing = await readyDraft(A, "Going out");
    h.emulator.markReviewed(preparing);
    expect((await act(A, `/app/campaigns/${preparing}`, { intent: "send" })).ok).toBe(true);

    const drafts = await load<ListData>(A, "/app/campaigns?status=draft&sort=name&order=asc", LIST);
    const names = drafts.campaigns.map((c) => c.name);
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
    expect(names).toEqual(expect.arrayContaining(["Alpha", "Mu", "Zeta"]));
    expect(names).not.toContain("Going out");

    const sending = await load<ListData>(A, "/app/campaigns?status=sending", LIST);
    expect(sending.campaigns.map((c) => [c.name, c.status])).toContainEqual(["Going out", "preparing"]);

    const desc = await load<ListData>(A, "/app/campaigns?status=all&sort=name&order=desc", LIST);
    expect(desc.campaigns[0]?.name).toBe("Zeta");

    // 20 a page: past it, a second page.
    for (let i = 0; i < 18; i++) await act(A, "/app/campaigns", { intent: "create", name: `Bulk ${String(i).padStart(2, "0")}` });
    const p1 = await load<ListData>(A, "/app/campaigns?status=all", LIST);
    const p2 = await load<ListData>(A, "/app/campaigns?status=all&page=2", LIST);
    expect(p1.page).toMatchObject({ page: 1, lastPage: 2 });
    expect(p2.page?.page).toBe(2);
    expect(p1.campaigns.length + p2.campaigns.length).toBe(p1.page?.total);

    // A bad query string falls back to the defaults rather than failing.
    const odd = await load<ListData>(A, "/app/campaigns?status=bogus&sort=nope&page=-3", LIST);
    expect(odd.problem).toBeNull();
    expect(odd.campaigns.every((c) => c.status === "draft")).toBe(true);
  });
});

describe("one campaign", () => {
  it("edits a draft; a bad address loses nothing and says which field", async () => {
    const id = await draftFromTemplate();
    const fields = {
      intent: "update",
      loaded: loadedOf(id),
      name: "Spring sale 2027",
      subject: "20% off everything",
      previewText: "This weekend only",
      senderName: "Shop team",
      senderEmail: "team@default-shop.example",
      replyToName: "Support",
      replyToEmail: "help@default-shop.example",
    };
    const bad = problemOf(await act(A, `/app/campaigns/${id}`, { ...fields, senderEmail: "not an address" }));
    expect(Object.keys(bad.fields ?? {})).toEqual(["senderEmail"]);
    expect(emuCampaign(id)?.subject).toBe("");

    expect(await act(A, `/app/campaigns/${id}`, fields)).toMatchObject({ ok: true, toast: "Draft saved" });
    expect(emuCampaign(id)).toMatchObject({ name: "Spring sale 2027", subject: "20% off everything", previewText: "This weekend only" });
    const one = await load<OneData>(A, `/app/campaigns/${id}`, ONE);
    expect(one.campaign).toMatchObject({ subject: "20% off everything", senderEmail: "team@default-shop.example" });
  });

  it("clearing the sender or reply-to email (the service cannot clear them) is refused beside the field, naming the saved address; nothing is saved", async () => {
    const id = await draftFromTemplate(A, "Keep the sender");
    const saved = { sender: { ...emuCampaign(id)!.sender }, replyTo: { ...emuCampaign(id)!.replyTo } };
    expect(saved.sender.email).toBe("owner@default-shop.example");
    const fields = { intent: "update", loaded: loadedOf(id), name: "Keep the sender", subject: "New subject", previewText: "", senderName: "Shop", senderEmail: "", replyToName: "Shop", replyToEmail: "help@default-shop.example" };
    const updates = () => h.emulator.requests.filter((r) => r.method === "PUT" && r.path === `/api/campaigns/${id}`).length;

    const noSender = problemOf(await act(A, `/app/campaigns/${id}`, fields));
    expect(Object.keys(noSender.fields ?? {})).toEqual(["senderEmail"]);
    expect(noSender.fields?.senderEmail).toMatch(/needs a sender email, so it cannot be removed.*The saved one is owner@default-shop\.example/);
    const noReplyTo = problemOf(await act(A, `/app/campaigns/${id}`, { ...fields, senderEmail: "team@default-shop.example", replyToEmail: " " }));
    expect(Object.keys(noReplyTo.fields ?? {})).toEqual(["replyToEmail"]);
    expect(noReplyTo.fields?.replyToEmail).toMatch(/reply-to email cannot be removed.*owner@default-shop\.example/);
    expect(updates()).toBe(0);
    expect(emuCampaign(id)).toMatchObject({ subject: "", ...saved });

    // Both given: saved as before.
    expect(await act(A, `/app/campaigns/${id}`, { ...fields, senderEmail: "team@default-shop.example" })).toMatchObject({ ok: true, toast: "Draft saved" });
    expect(emuCampaign(id)).toMatchObject({ subject: "New subject", sender: { email: "team@default-shop.example" }, replyTo: { email: "help@default-shop.example" } });
  });

  it("only drafts can be edited or sent: the service's reason is shown", async () => {
    const id = await draftFromTemplate();
    h.emulator.advanceCampaign(id, "sent");
    const upd = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "update", loaded: loadedOf(id), name: "x", subject: "", previewText: "", senderName: "", senderEmail: "", replyToName: "", replyToEmail: "" }));
    expect(upd.message).toMatch(/Only draft campaigns can be updated/);
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" })).message).toMatch(/Only draft campaigns can be sent/);
  });

  it("clones (any status) into a new draft", async () => {
    const id = await draftFromTemplate(A, "Original");
    h.emulator.advanceCampaign(id, "sent");
    const r = await act(A, `/app/campaigns/${id}`, { intent: "clone" });
    const copy = idOf(r);
    expect(copy).not.toBe(id);
    expect(emuCampaign(copy)).toMatchObject({ status: "draft", builderReviewed: false });
  });

  it("deletes a draft; refuses while sending with the service's reason", async () => {
    const id = await draftFromTemplate(A, "To delete");
    h.emulator.advanceCampaign(id, "sending");
    const refused = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "delete" }));
    expect(refused.message).toMatch(/currently sending cannot be deleted/);
    expect(emuCampaign(id)).toBeDefined();

    const draft = await draftFromTemplate(A, "Delete me");
    expect(await act(A, `/app/campaigns/${draft}`, { intent: "delete" })).toMatchObject({ ok: true, goTo: "/app/campaigns?status=all" });
    expect(emuCampaign(draft)).toBeUndefined();
    expect((await loadData(h.app.url, A, `/app/campaigns/${draft}`)).status).toBe(404);
  });

  it("an unknown id is a not-found page, not a crash", async () => {
    expect((await loadData(h.app.url, A, "/app/campaigns/999999")).status).toBe(404);
    expect((await loadData(h.app.url, A, "/app/campaigns/not-a-number")).status).toBe(404);
    expect(problemOf(await act(A, "/app/campaigns/999999", { intent: "send" })).kind).toBe("campaign_not_found");
    const page = await openPage(h.app.url, A, "/app/campaigns/999999");
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("This campaign is not in your marketing account");
  });
});

describe("test-send", () => {
  it("sends to up to 10 verified addresses; refuses others with the address named", async () => {
    const id = await draftFromTemplate();
    const ok = await act(A, `/app/campaigns/${id}`, { intent: "test-send", recipients: "me@default-shop.example, owner@default-shop.example" });
    expect(ok).toMatchObject({ ok: true, toast: "Test sent to me@default-shop.example, owner@default-shop.example" });
    expect(h.emulator.sentEmails.filter((e) => e.kind === "test" && e.campaignId === id).flatMap((e) => e.to)).toEqual(["me@default-shop.example", "owner@default-shop.example"]);

    const eleven = Array.from({ length: 11 }, (_, i) => `t${i}@default-shop.example`).join(",");
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "test-send", recipients: eleven })).fields?.recipients).toBe("At most 10 addresses per test.");
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "test-send", recipients: "nope" })).fields?.recipients).toBe("Each recipient must be an email address.");
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "test-send", recipients: "" })).fields?.recipients).toBe("Enter at least one email address.");

    const off = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "test-send", recipients: "me@default-shop.example, stranger@elsewhere.example" }));
    expect(off.kind).toBe("test_send_recipient_rejected");
    expect(off.fields?.recipients).toMatch(/stranger@elsewhere\.example/);
    expect(off.fields?.recipients).not.toMatch(/me@default-shop/);
  });

  it("a campaign without content, an undeliverable test, and the per-minute limit", async () => {
    // Its own account: the per-minute limit counts every test-send of an account.
    const shop = "campaigns-tests.myshopify.com";
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    const acc = h.emulator.createAccount({ email: "owner@tests.example" });
    await h.connect(shop, acc.apiKey);
    const blank = idOf(await act(shop, "/app/campaigns", { intent: "create", name: "Blank" }));
    const empty = problemOf(await act(shop, `/app/campaigns/${blank}`, { intent: "test-send", recipients: "owner@tests.example" }));
    expect(empty.title).toBe("This campaign has no email content yet");
    expect(empty.links?.map((l) => l.url)).toEqual([]);

    const full = await draftFromTemplate(shop, "Full");
    h.emulator.setFaults({ testSendUndeliverable: true });
    expect(problemOf(await act(shop, `/app/campaigns/${full}`, { intent: "test-send", recipients: "owner@tests.example" })).title).toBe("The test email could not be delivered");
    h.emulator.clearFaults();
    let limited: Problem | undefined;
    for (let i = 0; i < 6 && !limited; i++) {
      const r = await act(shop, `/app/campaigns/${full}`, { intent: "test-send", recipients: "owner@tests.example" });
      if (!r.ok) limited = r.problem;
    }
    expect(limited?.kind).toBe("rate_limited");
    expect(limited?.message).toMatch(/Try again in \d+ seconds/);
  });
});

describe("schedule", () => {
  it("takes a time in the store's zone, refuses an unreviewed campaign with the editor link, schedules with force, shows it back rounded", async () => {
    const id = await readyDraft(A, "Scheduled one");
    const review = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-01-15T09:30:20" }));
    expect(review.kind).toBe("review_required");
    expect(review.canForce).toBe(true);
    expect(review.links).toContainEqual({ label: "Open in the email editor", url: `${h.emulator.url}/dashboard/campaigns/${id}/editor`, external: true });
    expect(emuCampaign(id)?.status).toBe("draft");

    const ok = await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-01-15T09:30:20", force: "true" });
    expect(ok).toMatchObject({ ok: true, toast: "Scheduled: goes out Jan 15, 2027, 9:31 AM EST (2:31 PM UTC)" });
    // New York is UTC-5 in January; the service rounds seconds up to the next minute.
    const sent = h.emulator.requests.filter((r) => r.path === `/api/campaigns/${id}/schedule`).at(-1);
    expect(sent?.body).toEqual({ scheduledAt: "2027-01-15T09:30:20-05:00", force: true });
    expect(emuCampaign(id)?.status).toBe("scheduled");
    expect(Date.parse(emuCampaign(id)!.scheduledAt!)).toBe(Date.parse("2027-01-15T14:31:00Z"));

    const one = await load<OneData>(A, `/app/campaigns/${id}`, ONE);
    expect(one.zone).toBe("America/New_York");
    expect(one.campaign?.scheduled).toEqual({ local: "Jan 15, 2027, 9:31 AM EST", utc: "Jan 15, 2027, 2:31 PM UTC", zone: "America/New_York" });
    const scheduled = await load<ListData>(A, "/app/campaigns?status=scheduled", LIST);
    expect(scheduled.campaigns.map((c) => c.id)).toContain(String(id));
  });

  it("unschedule: a draft copy with the same name replaces the scheduled campaign, which is deleted so it never goes out", async () => {
    const id = await readyDraft(A, "Move me");
    h.emulator.markReviewed(id);
    await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-03-01T10:00" });
    expect(emuCampaign(id)?.status).toBe("scheduled");
    const moved = await act(A, `/app/campaigns/${id}`, { intent: "unschedule" });
    expect(moved).toMatchObject({ ok: true, toast: "Moved back to draft as a copy: pick a new time or send it when ready", goTo: expect.stringMatching(/^\/app\/campaigns\/\d+$/) });
    const copyId = Number((moved as { goTo: string }).goTo.split("/").at(-1));
    expect(emuCampaign(id)).toBeUndefined();
    expect(emuCampaign(copyId)).toMatchObject({ status: "draft", name: "Move me" });
    // A draft is not scheduled: nothing to move, nothing copied.
    const before = h.emulator.state.campaigns.length;
    expect(await act(A, `/app/campaigns/${copyId}`, { intent: "unschedule" })).toMatchObject({ ok: false, problem: { title: "This campaign is not scheduled" } });
    expect(h.emulator.state.campaigns.length).toBe(before);
  });

  it("the campaign page says how many confirmed people a send reaches (the people list filtered by status)", async () => {
    const id = await readyDraft(A, "Reach");
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    const confirmed = (await svc.people.list({ status: "confirmed", perPage: 1 })).meta.total;
    await svc.people.upsert({ email: `reach.${Date.now()}@example.com`, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    await svc.people.upsert({ email: `reach.no.${Date.now()}@example.com`, source: "shopify", skipDoubleOptIn: true, statusDetails: "unsubscribed" });
    expect((await load<{ reach: number | null }>(A, `/app/campaigns/${id}`, ONE)).reach).toBe(confirmed + 1);
  });

  it("summer time in the store's zone gives the summer offset", async () => {
    const id = await readyDraft(A, "Summer");
    h.emulator.markReviewed(id);
    await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-07-04T08:00" });
    expect(Date.parse(emuCampaign(id)!.scheduledAt!)).toBe(Date.parse("2027-07-04T12:00:00Z"));
  });

  it("reads the time in the zone the page showed, even when Shopify cannot tell the store's zone again", async () => {
    const id = await readyDraft(A, "Zone kept");
    h.emulator.markReviewed(id);
    expect((await load<OneData>(A, `/app/campaigns/${id}`, ONE)).zone).toBe(NY);
    zoneLookupFails = true;
    try {
      expect(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-01-15T09:30" })).toMatchObject({ ok: true, toast: "Scheduled: goes out Jan 15, 2027, 9:30 AM EST (2:30 PM UTC)" });
    } finally {
      zoneLookupFails = false;
    }
    expect(Date.parse(emuCampaign(id)!.scheduledAt!)).toBe(Date.parse("2027-01-15T14:30:00Z"));
  });

  it("a missing or made-up zone is refused beside the time, never guessed", async () => {
    const id = await draftFromTemplate(A, "No zone");
    h.emulator.markReviewed(id);
    for (const zone of [undefined, "", "Mars/Olympus_Mons", "EST5EDT; DROP"]) {
      const form: Record<string, string> = { intent: "schedule", scheduledAt: "2027-01-15T09:30", ...(zone === undefined ? {} : { zone }) };
      const p = problemOf(await act(A, `/app/campaigns/${id}`, form));
      expect(Object.keys(p.fields ?? {}), String(zone)).toEqual(["zone"]);
      expect(p.fields?.zone).toMatch(/did not carry a valid time zone, so the time was not scheduled\. Reload the page/);
    }
    expect(h.emulator.requests.filter((r) => r.path === `/api/campaigns/${id}/schedule`)).toHaveLength(0);
    expect(emuCampaign(id)?.status).toBe("draft");
  });

  it("a past time, a missing time, and the service's own refusal of the time", async () => {
    const id = await draftFromTemplate(A, "Past");
    h.emulator.markReviewed(id);
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2020-01-01T10:00" })).fields?.scheduledAt).toBe("Pick a date and time in the future.");
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "" })).fields?.scheduledAt).toBe("Pick a date and time.");
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "tomorrow" })).fields?.scheduledAt).toBe("Pick a date and time.");
    expect(h.emulator.requests.filter((r) => r.path === `/api/campaigns/${id}/schedule`)).toHaveLength(0);
  });
});

describe("send now and its refusals", () => {
  it("review required → editor link and Send anyway (force) sends to the whole list", async () => {
    const id = await readyDraft(A, "Newsletter");
    const review = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send" }));
    expect(review).toMatchObject({ kind: "review_required", canForce: true, title: "This campaign has not been reviewed in the email editor" });
    expect(review.links?.every((l) => l.external)).toBe(true);
    const forced = await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" });
    expect(forced).toMatchObject({ ok: true, toast: "Sending to your whole confirmed list" });
    expect(emuCampaign(id)?.status).toBe("preparing");
    expect(h.emulator.sentEmails.some((e) => e.kind === "campaign" && e.campaignId === id)).toBe(true);
  });

  it("sending limit: the remaining sends and the reset date, with links", async () => {
    const id = await readyDraft(A, "Over the limit");
    h.emulator.updateAccount(h.emulator.defaultAccountId, { sendingLimitRemaining: 0 });
    try {
      const p = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" }));
      expect(p.kind).toBe("sending_limit");
      expect(p.message).toMatch(/0 sends remaining; your sending limit resets on \d{4}-\d{2}-\d{2}/);
      expect(p.links?.map((l) => l.label)).toEqual(["Open in the email editor", "Open in your marketing dashboard"]);
    } finally {
      h.emulator.updateAccount(h.emulator.defaultAccountId, { sendingLimitRemaining: 100 });
    }
  });

  it("upgrade required: the level name, monthly and prorated amounts, with links", async () => {
    const id = await readyDraft(A, "Needs upgrade");
    h.emulator.updateAccount(h.emulator.defaultAccountId, { upgradeRequired: true });
    try {
      const p = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-03-01T10:00", force: "true" }));
      expect(p).toMatchObject({ kind: "upgrade_required", title: "Upgrade to Pro to send this campaign", upgrade: { levelName: "Pro", monthlyAmount: 49, proratedAmount: 21.5 } });
      expect(p.message).toMatch(/49\.00 a month; 21\.50 would be charged now/);
      expect(p.links?.length).toBe(2);
    } finally {
      h.emulator.updateAccount(h.emulator.defaultAccountId, { upgradeRequired: false });
    }
  });

  it("eligibility failure and an unspecified send failure ask to try again; nothing is sent", async () => {
    const id = await readyDraft(A, "Flaky");
    h.emulator.setFaults({ eligibilityCheckFails: true });
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" }))).toMatchObject({ kind: "retry_later", message: expect.stringMatching(/try again/) });
    h.emulator.setFaults({ sendFails: true });
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" })).kind).toBe("retry_later");
    expect(emuCampaign(id)?.status).toBe("draft");
  });

  it("an unreachable service is said so", async () => {
    const id = await readyDraft(A, "Offline");
    h.emulator.setFaults({ dropConnections: 5 });
    expect(problemOf(await act(A, `/app/campaigns/${id}`, { intent: "send", force: "true" })).title).toBe("The marketing service could not be reached");
  });

  it("inactive account: resolve billing in the service's dashboard (create, update, send, schedule, test-send)", async () => {
    const id = await readyDraft(A, "Billing");
    h.emulator.setFaults({ inactiveAccount: true });
    const attempts = [
      ["/app/campaigns", { intent: "create", name: "x" }],
      [`/app/campaigns/${id}`, { intent: "clone" }],
      [`/app/campaigns/${id}`, { intent: "send", force: "true" }],
      [`/app/campaigns/${id}`, { intent: "schedule", zone: NY, scheduledAt: "2027-03-01T10:00", force: "true" }],
      [`/app/campaigns/${id}`, { intent: "test-send", recipients: "owner@default-shop.example" }],
    ] as const;
    for (const [path, fields] of attempts) {
      const p = problemOf(await act(A, path, fields));
      expect(p.kind, fields.intent).toBe("account_inactive");
      expect(p.message).toMatch(/Resolve its billing status in your marketing service's dashboard/);
    }
  });

  it("plugin key: connect a dashboard or CLI key on the Connection page", async () => {
    const id = await readyDraft(A, "Plugin");
    h.emulator.setFaults({ pluginKey: true });
    for (const fields of [{ intent: "send", force: "true" }, { intent: "test-send", recipients: "owner@default-shop.example" }] as Record<string, string>[]) {
      const p = problemOf(await act(A, `/app/campaigns/${id}`, fields));
      expect(p.kind).toBe("plugin_key_not_allowed");
      expect(p.message).toMatch(/dashboard or CLI API key .* Connection page/);
      expect(p.links).toEqual([{ label: "Open the Connection page", url: "/app/connection", external: false }]);
    }
  });

  it("a key the service no longer accepts: paste a new one on the Connection page", async () => {
    const shop = "campaigns-revoked.myshopify.com";
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    const acc = h.emulator.createAccount();
    await h.connect(shop, acc.apiKey);
    h.emulator.state.keys.delete(acc.apiKey);
    const p = problemOf(await act(shop, "/app/campaigns", { intent: "create", name: "x" }));
    expect(p).toMatchObject({ kind: "unauthenticated", links: [{ url: "/app/connection" }] });
    expect((await load<ListData>(shop, "/app/campaigns", LIST)).problem?.kind).toBe("unauthenticated");
  });

  it("an unknown intent or a forged field is refused without a call", async () => {
    const before = h.emulator.requests.length;
    expect(problemOf(await act(A, "/app/campaigns/1", { intent: "launch-rockets" })).title).toBe("That action is not possible");
    expect(h.emulator.requests.length).toBe(before);
  });
});

describe("what is sent is what the page shows", () => {
  it("a draft without a subject is neither sent nor scheduled, even by a crafted form; the reason is beside the Subject field", async () => {
    const id = await draftFromTemplate(A, "No subject yet");
    h.emulator.markReviewed(id);
    for (const fields of [
      { intent: "send" },
      { intent: "send", force: "true" },
      { intent: "schedule", zone: NY, scheduledAt: "2027-02-01T10:00", force: "true" },
      { intent: "send", force: "true", ...details(id, { subject: "   " }) },
    ] as Record<string, string>[]) {
      const p = problemOf(await act(A, `/app/campaigns/${id}`, fields));
      expect(p.fields, JSON.stringify(fields)).toEqual({ subject: "Add a subject before sending." });
      expect(p.message).toMatch(/Nothing was sent/);
    }
    expect(sendsOf(id)).toHaveLength(0);
    expect(emuCampaign(id)).toMatchObject({ status: "draft", subject: "" });
  });

  it("unsaved Details posted with Send or Schedule are saved first, then sent; a Details refusal sends nothing", async () => {
    const sent = await draftFromTemplate(A, "Send with edits");
    h.emulator.markReviewed(sent);
    expect(await act(A, `/app/campaigns/${sent}`, { intent: "send", ...details(sent, { name: "Send with edits", subject: "Typed just before sending" }) })).toMatchObject({ ok: true });
    expect(emuCampaign(sent)).toMatchObject({ status: "preparing", subject: "Typed just before sending" });
    const order = h.emulator.requests.filter((r) => r.path.startsWith(`/api/campaigns/${sent}`) && r.method !== "GET").map((r) => `${r.method} ${r.path}`);
    expect(order).toEqual([`PUT /api/campaigns/${sent}`, `POST /api/campaigns/${sent}/send`]);

    const scheduled = await draftFromTemplate(A, "Schedule with edits");
    h.emulator.markReviewed(scheduled);
    const r = await act(A, `/app/campaigns/${scheduled}`, { intent: "schedule", zone: NY, scheduledAt: "2027-02-01T10:00", ...details(scheduled, { name: "Schedule with edits", subject: "Typed before scheduling" }) });
    expect(r).toMatchObject({ ok: true });
    expect(emuCampaign(scheduled)).toMatchObject({ status: "scheduled", subject: "Typed before scheduling" });

    const cleared = await draftFromTemplate(A, "Cleared sender");
    h.emulator.markReviewed(cleared);
    const p = problemOf(await act(A, `/app/campaigns/${cleared}`, { intent: "send", ...details(cleared, { subject: "Fine", senderEmail: "" }) }));
    expect(Object.keys(p.fields ?? {})).toEqual(["senderEmail"]);
    expect(sendsOf(cleared)).toHaveLength(0);
    expect(emuCampaign(cleared)).toMatchObject({ status: "draft", subject: "" });
  });
});

describe("a change made meanwhile in the email editor", () => {
  interface Details { name: string; subject: string; previewText: string; senderName: string; senderEmail: string; replyToName: string; replyToEmail: string }
  const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  /** The Details form as the merchant opened the page: its fields and the hidden `loaded` it posts back. */
  const openDetails = async (id: number) => {
    const html = await (await openPage(h.app.url, A, `/app/campaigns/${id}`)).text();
    const loaded = /<input type="hidden" name="loaded" value="([^"]*)"/.exec(html)?.[1];
    expect(loaded, "the Details form carries the values it was loaded with").toBeDefined();
    const shown = (await load<{ campaign: Details }>(A, `/app/campaigns/${id}`, ONE)).campaign;
    const { name, subject, previewText, senderName, senderEmail, replyToName, replyToEmail } = shown;
    return { loaded: unescape(loaded!), name, subject, previewText, senderName, senderEmail, replyToName, replyToEmail };
  };
  /** The email editor (the page's own "Open in the email editor" link) changes the draft. */
  const editInEditor = (id: number, change: { subject?: string; previewText?: string }) => Object.assign(emuCampaign(id)!, change);
  const updatesOf = (id: number) => h.emulator.requests.filter((r) => r.method === "PUT" && r.path === `/api/campaigns/${id}`);

  it("saving another field keeps the subject changed in the editor; changing the same field is refused with a reason, nothing overwritten", async () => {
    const id = await draftFromTemplate(A, "Editor and app");
    editInEditor(id, { subject: "Old subject", previewText: "Old preview" });
    const form = await openDetails(id);
    editInEditor(id, { subject: "NEW subject from the editor" });

    // Only the sender name changed on the page: saved, and the editor's subject stays.
    expect(await act(A, `/app/campaigns/${id}`, { intent: "update", ...form, senderName: "Shop team" })).toMatchObject({ ok: true, toast: "Draft saved" });
    expect(emuCampaign(id)).toMatchObject({ subject: "NEW subject from the editor", previewText: "Old preview", sender: { name: "Shop team" } });

    // The subject changed on the page too (the page was not reloaded): refused, the editor's subject kept.
    const before = updatesOf(id).length;
    const p = problemOf(await act(A, `/app/campaigns/${id}`, { intent: "update", ...form, subject: "Typed in the app" }));
    expect(p).toMatchObject({ title: "Nothing was saved", message: "This campaign was changed in the email editor since you opened it. Reload to see the changes." });
    expect(updatesOf(id).length).toBe(before);
    expect(emuCampaign(id)?.subject).toBe("NEW subject from the editor");

    // After a reload the merchant's change is saved.
    const reloaded = await openDetails(id);
    expect(reloaded.subject).toBe("NEW subject from the editor");
    expect(await act(A, `/app/campaigns/${id}`, { intent: "update", ...reloaded, subject: "Typed in the app" })).toMatchObject({ ok: true, toast: "Draft saved" });
    expect(emuCampaign(id)?.subject).toBe("Typed in the app");
  });

  it("Send now with unsaved details keeps the editor's changes to other fields, and sends nothing over a field changed in both", async () => {
    const id = await draftFromTemplate(A, "Send after editing");
    h.emulator.markReviewed(id);
    editInEditor(id, { subject: "Subject from the app" });
    const form = await openDetails(id);
    editInEditor(id, { previewText: "Preview from the editor" });
    // The send form carries the Details only when they have unsaved changes.
    expect(await act(A, `/app/campaigns/${id}`, { intent: "send", ...form, senderName: "Shop team" })).toMatchObject({ ok: true });
    expect(emuCampaign(id)).toMatchObject({ status: "preparing", subject: "Subject from the app", previewText: "Preview from the editor", sender: { name: "Shop team" } });

    const other = await draftFromTemplate(A, "Schedule after editing");
    h.emulator.markReviewed(other);
    editInEditor(other, { subject: "Subject from the app" });
    const page = await openDetails(other);
    editInEditor(other, { subject: "Subject from the editor" });
    const p = problemOf(await act(A, `/app/campaigns/${other}`, { intent: "schedule", zone: NY, scheduledAt: "2027-02-01T10:00", ...page, subject: "Typed in the app" }));
    expect(p).toMatchObject({ title: "Nothing was saved or sent", message: expect.stringContaining("changed in the email editor since you opened it") });
    expect(sendsOf(other)).toHaveLength(0);
    expect(emuCampaign(other)).toMatchObject({ status: "draft", subject: "Subject from the editor" });
  });
});

describe("lists and labels", () => {
  it("the list is newest first unless another order is picked, and says so", async () => {
    const older = idOf(await act(A, "/app/campaigns", { intent: "create", name: "Older" }));
    const newer = idOf(await act(A, "/app/campaigns", { intent: "create", name: "Newer" }));
    emuCampaign(older)!.createdAt = "2020-01-01T00:00:00.000Z";
    const data = await load<ListData>(A, "/app/campaigns?status=draft", LIST);
    expect(h.emulator.requests.filter((q) => q.path === "/api/campaigns").at(-1)?.query).toMatchObject({ sort: "createdAt", order: "desc" });
    const ids = data.campaigns.map((c) => Number(c.id));
    expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older));
    const html = await (await openPage(h.app.url, A, "/app/campaigns")).text();
    expect(html).not.toContain("Service default");
    expect(html).toMatch(/<option value="createdAt:desc" selected="">Newest first<\/option>/);
  });

  it("an empty tab says what is missing in plain words", async () => {
    const shop = "campaigns-empty.myshopify.com";
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    await h.connect(shop, h.emulator.createAccount().apiKey);
    expect(await (await openPage(h.app.url, shop, "/app/campaigns")).text()).toContain("No draft campaigns");
    expect(await (await openPage(h.app.url, shop, "/app/campaigns?status=scheduled")).text()).toContain("No scheduled campaigns");
  });

  it("the service not answering: the page says the list could not be loaded, offers Try again, and shows no table or empty state", async () => {
    const id = await draftFromTemplate(A, "Behind an outage");
    h.emulator.setFaults({ serverErrors: { count: 1000, status: 503 }, pathPrefix: "/api/campaigns" });
    const data = await load<ListData>(A, "/app/campaigns", LIST);
    expect(data.problem?.title).toBe("Your campaigns could not be loaded: the marketing service is not answering right now.");
    const pages = [
      ["/api/campaigns", "/app/campaigns", "Your campaigns"],
      ["/api/campaigns", `/app/campaigns/${id}`, "This campaign"],
      ["/api/templates", "/app/templates", "Your templates"],
    ] as const;
    for (const [pathPrefix, path, what] of pages) {
      h.emulator.setFaults({ serverErrors: { count: 1000, status: 503 }, pathPrefix });
      const html = await (await openPage(h.app.url, A, path)).text();
      expect(html, path).toContain(`${what} could not be loaded: the marketing service is not answering right now.`);
      expect(html, path).toContain("Try again");
      expect(html, path).not.toContain("Nothing was changed");
      expect(html, path).not.toMatch(/No draft campaigns|Create a campaign, or start from one of your templates|Polaris-IndexTable/);
    }
  });
});

describe("two shops stay apart", () => {
  it("B sees only its own campaigns and cannot read, change or delete A's", async () => {
    const aId = await draftFromTemplate(A, "A's secret campaign");
    const bId = await draftFromTemplate(B, "B's campaign");
    const bList = await load<ListData>(B, "/app/campaigns?status=all", LIST);
    expect(bList.campaigns.map((c) => c.name)).toEqual(["B's campaign"]);
    const aList = await load<ListData>(A, "/app/campaigns?status=all&sort=name&order=asc", LIST);
    expect(aList.campaigns.map((c) => c.id)).not.toContain(String(bId));

    expect((await loadData(h.app.url, B, `/app/campaigns/${aId}`)).status).toBe(404);
    for (const fields of [{ intent: "delete" }, { intent: "send", force: "true" }, { intent: "clone" }, { intent: "test-send", recipients: "owner@b-shop.example" }] as Record<string, string>[]) {
      expect(problemOf(await act(B, `/app/campaigns/${aId}`, fields)).kind).toBe("campaign_not_found");
    }
    expect(emuCampaign(aId)).toMatchObject({ status: "draft", accountId: h.emulator.defaultAccountId });
    expect(h.emulator.state.campaigns.filter((c) => c.accountId === accountB.accountId).map((c) => c.id)).toEqual([bId]);
  });
});
