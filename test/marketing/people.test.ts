import { describe, expect, it } from "vitest";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();
const today = () => new Date().toISOString().slice(0, 10);
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

describe("POST /api/people (upsert) and §3.2 status transitions", () => {
  it("creates an unconfirmed person and sends a confirmation email when double opt-in is on", async () => {
    const email = uniqueEmail();
    const p = await h.client().people.upsert({ email, source: "shopify", customFields: { firstName: "Ada" } });
    expect(p).toMatchObject({ email, status: "inactive", statusDetails: "unconfirmed", tags: [] });
    expect(p.id).toMatch(/^\d+$/); // an exact decimal string (ids may pass 2^53)
    expect(p.customFields).toMatchObject({ firstName: "Ada", source: "shopify" });
    const confirmations = h.emu.sentEmails.filter((m) => m.kind === "confirmation");
    expect(confirmations.map((m) => m.to)).toEqual([[email]]);
  });

  it("skipDoubleOptIn with statusDetails sets that status and sends no confirmation email", async () => {
    const email = uniqueEmail();
    const p = await h.client().people.upsert({ email, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    expect(p).toMatchObject({ status: "active", statusDetails: "confirmed" });
    expect(h.emu.sentEmails.filter((m) => m.to.includes(email))).toEqual([]);
  });

  it("skipDoubleOptIn with status inactive only becomes unsubscribed, never emailed", async () => {
    const email = uniqueEmail();
    const p = await h.client().people.upsert({ email, source: "shopify", skipDoubleOptIn: true, status: "inactive" });
    expect(p).toMatchObject({ status: "inactive", statusDetails: "unsubscribed" });
    expect(h.emu.sentEmails).toEqual([]);
  });

  it("an account without double opt-in creates confirmed people without a confirmation email", async () => {
    const { apiKey } = h.emu.createAccount({ doubleOptIn: false });
    const p = await h.client({ apiKey }).people.upsert({ email: uniqueEmail(), source: "shopify" });
    expect(p.statusDetails).toBe("confirmed");
    expect(h.emu.sentEmails).toEqual([]);
  });

  it("an existing person changes statusDetails (unsubscribe) and re-upserting does not resend a confirmation", async () => {
    const email = uniqueEmail();
    const c = h.client();
    await c.people.upsert({ email, source: "shopify" });
    const p = await c.people.upsert({ email, source: "shopify", statusDetails: "unsubscribed" });
    expect(p).toMatchObject({ status: "inactive", statusDetails: "unsubscribed" });
    await c.people.upsert({ email, source: "shopify", customFields: { lastName: "L" } });
    expect(h.emu.sentEmails.filter((m) => m.kind === "confirmation")).toHaveLength(1);
  });

  it("refuses any status change on a blocked person and `active` on a hard-bounced one", async () => {
    const c = h.client();
    const blocked = uniqueEmail("blocked");
    const bounced = uniqueEmail("bounced");
    await c.people.upsert({ email: blocked, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    await c.people.upsert({ email: bounced, source: "shopify", skipDoubleOptIn: true, statusDetails: "unsubscribed" });
    h.emu.markBlocked(blocked);
    h.emu.markHardBounced(bounced);
    const e1 = await failure(c.people.upsert({ email: blocked, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" }));
    expect(e1).toMatchObject({ kind: "validation", status: 422, local: false });
    expect(Object.keys(e1.errors!)).toContain("status");
    const e2 = await failure(c.people.upsert({ email: bounced, source: "shopify", skipDoubleOptIn: true, status: "active" }));
    expect(e2.kind).toBe("validation");
    expect((await c.people.get(blocked)).statusDetails).toBe("blocked");
    expect((await c.people.get(bounced)).status).toBe("inactive");
  });

  it("keeps the first source, maps tags/series booleans, tracks events with an eventUuid, and changes email", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify", tags: { vip: true, old: true }, series: { "1": true } });
    const p = await c.people.upsert({
      email,
      source: "woocommerce",
      tags: { old: false, repeat: true },
      series: { "1": false, "2": true },
      events: [{ eventName: "pageView", url: "/products/x" }],
      customFields: { phoneNumber: "+441234", referenceId: "cust-9" },
    });
    expect(p.customFields.source).toBe("shopify");
    expect(p.tags.sort()).toEqual(["repeat", "vip"]);
    expect(p.series).toEqual([{ id: "2", name: "Win-back series" }]);
    expect(p.eventUuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["pageView"]);

    const moved = uniqueEmail("moved");
    const after = await c.people.upsert({ email, emailChange: moved, source: "shopify" });
    expect(after.email).toBe(moved);
    expect((await c.people.check(email)).exists).toBe(false);
    expect((await c.people.get(moved)).id).toBe(p.id);
  });

  it("updates by id", async () => {
    const c = h.client();
    const p = await c.people.upsert({ email: uniqueEmail(), source: "shopify" });
    const q = await c.people.upsert({ id: p.id, source: "shopify", customFields: { firstName: "ById" } });
    expect(q.id).toBe(p.id);
    expect(q.customFields.firstName).toBe("ById");
  });

  it("the service answers 422 with email/id/source keys when both identifiers and the source are missing", async () => {
    // bypasses local validation on purpose to see the service's own rule
    const e = await failure(h.client().request({ method: "POST", path: "/api/people", body: {} }));
    expect(e).toMatchObject({ kind: "validation", status: 422 });
    expect(Object.keys(e.errors!).sort()).toEqual(["email", "id", "source"]);
  });
});

describe("GET /api/people/{idOrEmail}, /check/{email}, DELETE", () => {
  it("gets by id and by an email containing + and @, with series", async () => {
    const c = h.client();
    const email = uniqueEmail();
    const p = await c.people.upsert({ email, source: "shopify", series: { "1": true } });
    expect(await c.people.get(p.id)).toMatchObject({ id: p.id, email, series: [{ id: "1", name: "Welcome series" }] });
    expect((await c.people.get(email)).id).toBe(p.id);
    const paths = h.emu.requests.filter((r) => r.method === "GET").map((r) => r.path);
    expect(paths).toContain(`/api/people/${encodeURIComponent(email)}`);
  });

  it("check tells whether an address exists and echoes it", async () => {
    const c = h.client();
    const email = uniqueEmail();
    expect(await c.people.check(email)).toEqual({ exists: false, email });
    await c.people.upsert({ email, source: "shopify" });
    expect(await c.people.check(email)).toEqual({ exists: true, email });
  });

  it("unknown person → person_not_found (get, delete, events)", async () => {
    const c = h.client();
    for (const p of [c.people.get("nobody@shopper.example"), c.people.delete(999_999), c.people.events("nobody@shopper.example")]) {
      const e = await failure(p);
      expect(e).toMatchObject({ kind: "person_not_found", status: 404, retryable: false, message: "Person not found" });
    }
  });

  it("deletes permanently (empty body handled)", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    await expect(c.people.delete(email)).resolves.toBeUndefined();
    expect(h.emu.requests.at(-1)).toMatchObject({ method: "DELETE", status: 204 });
    expect((await c.people.check(email)).exists).toBe(false);
  });
});

describe("GET /api/people (filters, pagination)", () => {
  async function seed() {
    const c = h.client();
    const a = await c.people.upsert({ email: "alice@brand.example", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed", tags: { vip: true }, customFields: { city: "Paris" } });
    const b = await c.people.upsert({ email: "bob@brand.example", source: "shopify", tags: { vip: true, churned: true }, customFields: { city: "Rome" } });
    const d = await c.people.upsert({ email: "dora@other.example", source: "shopify", skipDoubleOptIn: true, statusDetails: "unsubscribed" });
    return { c, a, b, d };
  }

  it("filters by status (incl. aliases), tags with exclusion, email keyword and custom field", async () => {
    const { c } = await seed();
    const emails = async (f: Parameters<typeof c.people.list>[0]) => (await c.people.list(f)).data.map((p) => p.email).sort();
    expect(await emails({ status: "active" })).toEqual(["alice@brand.example"]);
    expect(await emails({ status: "confirmed" })).toEqual(["alice@brand.example"]);
    expect(await emails({ status: "inactive" })).toEqual(["bob@brand.example", "dora@other.example"]);
    expect(await emails({ status: "unconfirmed" })).toEqual(["bob@brand.example"]);
    expect(await emails({ tags: ["vip"] })).toEqual(["alice@brand.example", "bob@brand.example"]);
    expect(await emails({ tags: ["vip", "-churned"] })).toEqual(["alice@brand.example"]);
    expect(await emails({ email: "brand" })).toEqual(["alice@brand.example", "bob@brand.example"]);
    expect(await emails({ fields: { city: "Rome" } })).toEqual(["bob@brand.example"]);
    const sent = h.emu.requests.find((r) => r.query["filter[field-city]"]);
    expect(sent?.query["filter[field-city]"]).toBe("Rome");
  });

  it("filters by segments with exclusion", async () => {
    const { c } = await seed();
    const s1 = h.emu.defineSegment("Brand", ["alice@brand.example", "bob@brand.example"]);
    const s2 = h.emu.defineSegment("Bob", ["bob@brand.example"]);
    const list = await c.people.list({ segments: [s1, `-${s2}`] });
    expect(list.data.map((p) => p.email)).toEqual(["alice@brand.example"]);
  });

  it("list items normalise `tags: null` to [] and omit series", async () => {
    await seed();
    const list = await h.client().people.list({ email: "dora" });
    expect(h.emu.requests.at(-1)?.responseBody).toMatchObject({ data: [{ tags: null }] });
    expect(list.data[0]!.tags).toEqual([]);
    expect(list.data[0]!.series).toBeUndefined();
  });

  it("returns the §2.1 envelope with relative links, and iterate() follows links.next to the last page", async () => {
    const c = h.client();
    for (let i = 0; i < 23; i++) await c.people.upsert({ email: `bulk${i}@bulk.example`, source: "shopify" });
    const first = await c.people.list({ perPage: 10, email: "bulk" });
    expect(first.meta).toMatchObject({ currentPage: 1, lastPage: 3, from: 1, to: 10, total: 23, perPage: 10, path: "/api/people" });
    expect(first.links.prev).toBeNull();
    expect(first.links.next).toMatch(/^\/api\/people\?.*page=2/);
    expect(first.links.last).toMatch(/page=3/);

    h.emu.requests.length = 0;
    const seen: string[] = [];
    for await (const p of c.people.iterate({ perPage: 10, email: "bulk" })) seen.push(p.email);
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    expect(h.emu.requests.map((r) => [r.query.page ?? "1", r.query["filter[email]"]])).toEqual([
      ["1", "bulk"],
      ["2", "bulk"],
      ["3", "bulk"],
    ]);
  });

  it("an empty page has from/to null, no next link and lastPage 1", async () => {
    const page = await h.client().people.list({ email: "no-such-keyword" });
    expect(page.data).toEqual([]);
    expect(page.meta).toMatchObject({ from: null, to: null, total: 0, lastPage: 1 });
    expect(page.links.next).toBeNull();
  });
});

describe("GET /api/people/{idOrEmail}/events", () => {
  it("lists, filters and paginates a person's events, newest first", async () => {
    const c = h.client();
    const email = uniqueEmail();
    const events = Array.from({ length: 12 }, (_, i) => ({ eventName: i % 2 ? "pageView" : "order_completed", n: i, note: i === 5 ? "needle" : "hay" }));
    await c.people.upsert({ email, source: "shopify", events });

    const page1 = await c.people.events(email, { perPage: 5 });
    expect(page1.meta).toMatchObject({ total: 12, lastPage: 3, perPage: 5 });
    expect(page1.data[0]).toMatchObject({ event: "pageView", properties: { n: 11 } });
    expect(h.emu.requests.at(-1)?.query.per_page).toBe("5");

    const all = [];
    for await (const e of c.people.iterateEvents(email, { perPage: 5 })) all.push(e);
    expect(all).toHaveLength(12);

    expect((await c.people.events(email, { event: "order_completed" })).meta.total).toBe(6);
    expect((await c.people.events(email, { search: "needle" })).data.map((e) => e.properties.n)).toEqual([5]);
    expect((await c.people.events(email, { dateFrom: today(), dateTo: today() })).meta.total).toBe(12);
    expect((await c.people.events(email, { dateTo: yesterday() })).meta.total).toBe(0);
  });

  it("a date not in Y-m-d → 422 keyed filter.date_from (service) and a local error naming dateFrom (client)", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const server = await failure(c.request({ method: "GET", path: `/api/people/${encodeURIComponent(email)}/events`, query: { "filter[date_from]": "01/02/2024" } }));
    expect(server).toMatchObject({ kind: "validation", status: 422 });
    expect(Object.keys(server.errors!)).toEqual(["filter.date_from"]);

    const before = h.emu.requests.length;
    const local = await failure(c.people.events(email, { dateFrom: "01/02/2024" }));
    expect(local).toMatchObject({ kind: "validation", status: 0, local: true });
    expect(local.errors).toHaveProperty("dateFrom");
    expect(h.emu.requests.length).toBe(before);
  });
});
