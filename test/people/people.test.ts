// People in the admin, over real HTTP against the emulator and the fake Admin: search with every
// filter, a person's page and tracked events, the way from a Shopify customer, two shops apart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { loadData, openPage, routeData } from "../admin/support";

const A = "people-a.myshopify.com";
const B = "people-b.myshopify.com";
const NOT_CONNECTED = "people-none.myshopify.com";

const LIST = "routes/app.people._index";
const ONE = "routes/app.people.$idOrEmail";
const BY_CUSTOMER = "routes/app.people.by-customer.($id)";

interface ListData {
  service: { state: string } | null;
  errors: Record<string, string>;
  people: { id: number; email: string; status: string; statusDetails: string | null; tags: string[] }[];
  page: { page: number; lastPage: number; total: number } | null;
  consent: { subscribed: number; waiting: number; unsubscribed: number; blocked: number } | null;
}
interface PersonData {
  person: {
    id: number;
    email: string;
    status: string;
    statusDetails: string;
    tags: string[];
    customFields: { name: string; label: string; value: string }[];
    series: { id: string; name: string }[];
  } | null;
  errors: Record<string, string>;
  events: { at: string; event: string; label: string; summary: string; properties: string }[];
}

let h: PipelineHarness;
let segment: string;
// Shopify customers of the fake Admin, by GraphQL id.
const customers = new Map<string, { email: string | null }>([
  ["gid://shopify/Customer/501", { email: "ada@example.com" }],
  ["gid://shopify/Customer/502", { email: null }],
  ["gid://shopify/Customer/503", { email: "never-synced@example.com" }],
]);

beforeAll(async () => {
  h = await startPipelineHarness();
  h.app.admin.onGraphql("CustomerEmail", (_q, variables) => {
    const c = customers.get(String(variables.id));
    return { customer: c ? { defaultEmailAddress: c.email ? { emailAddress: c.email } : null } : null };
  });
  for (const shop of [A, B, NOT_CONNECTED]) expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
  const b = h.emulator.createAccount({ company: "B Ltd" });
  await h.connect(A);
  await h.connect(B, b.apiKey);

  // What the sync pipeline would have sent, straight through the service's API.
  const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
  await svc.people.upsert({
    email: "ada@example.com",
    source: "shopify",
    skipDoubleOptIn: true,
    statusDetails: "confirmed",
    customFields: { firstName: "Ada", lastName: "Lovelace" },
    tags: { vip: true, customer: true },
    series: { "1": true },
  });
  await svc.people.upsert({ email: "grace@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "unsubscribed", customFields: { firstName: "Grace" }, tags: { customer: true } });
  await svc.people.upsert({ email: "alan@example.org", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed", customFields: { firstName: "Alan" }, tags: { customer: true, churned: true } });
  await svc.events.order("completed", { email: "ada@example.com", source: "shopify", id: "1001", publicId: "#1001", total: 42.5, currency: "USD" });
  await svc.events.cart("abandoned", { email: "ada@example.com", source: "shopify", id: "cart-9", total: 10 });
  await svc.events.order("completed", { email: "ada@example.com", source: "shopify", id: "1002", publicId: "#1002", total: 7 });
  await svc.people.upsert({ email: "new@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "unconfirmed" });
  await svc.events.custom({ email: "new@example.com", source: "shopify", eventName: "wishlistAdded", properties: { productTitle: "Blue mug", quantity: 2, tags: ["a", "b"] } });
  segment = h.emulator.defineSegment("Big spenders", ["ada@example.com", "grace@example.com"]);

  const svcB = createMarketingClient({ baseUrl: h.emulator.url, apiKey: b.apiKey, retries: 0 });
  await svcB.people.upsert({ email: "bonly@example.com", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
});
afterAll(() => h.close());
afterEach(() => h.emulator.clearFaults());

const list = async (shop: string, query = "") => routeData<ListData>(await loadData(h.app.url, shop, `/app/people${query}`), LIST);
const emails = (d: ListData) => d.people.map((p) => p.email).sort();
const person = async (shop: string, key: string, query = "") => routeData<PersonData>(await loadData(h.app.url, shop, `/app/people/${encodeURIComponent(key)}${query}`), ONE);

describe("search", () => {
  it("not connected: an empty state pointing at the Connection page", async () => {
    expect((await list(NOT_CONNECTED)).service).toEqual({ state: "not_connected", pauseReason: null });
  });

  it("by email keyword, status with the active/inactive aliases, tags in and out, segments, a custom field", async () => {
    expect(emails(await list(A))).toEqual(["ada@example.com", "alan@example.org", "grace@example.com", "new@example.com"]);
    expect(emails(await list(A, "?q=example.org"))).toEqual(["alan@example.org"]);
    expect(emails(await list(A, "?status=active"))).toEqual(["ada@example.com", "alan@example.org"]);
    expect(emails(await list(A, "?status=inactive"))).toEqual(["grace@example.com", "new@example.com"]);
    expect(emails(await list(A, "?status=unsubscribed"))).toEqual(["grace@example.com"]);
    expect(emails(await list(A, "?tags=vip"))).toEqual(["ada@example.com"]);
    expect(emails(await list(A, "?tags=customer&notTags=churned"))).toEqual(["ada@example.com", "grace@example.com"]);
    expect(emails(await list(A, `?segments=${segment}`))).toEqual(["ada@example.com", "grace@example.com"]);
    expect(emails(await list(A, `?notSegments=${segment}`))).toEqual(["alan@example.org", "new@example.com"]);
    expect(emails(await list(A, "?field=firstName&value=Grace"))).toEqual(["grace@example.com"]);
    const row = (await list(A, "?q=ada")).people[0];
    expect(row).toMatchObject({ email: "ada@example.com", status: "active", statusDetails: "confirmed", tags: expect.arrayContaining(["vip", "customer"]) });
  });

  it("finds a name as well as an email: a last name, a first name in any case, or both", async () => {
    expect(emails(await list(A, "?q=Lovelace"))).toEqual(["ada@example.com"]);
    expect(emails(await list(A, "?q=lovelace"))).toEqual(["ada@example.com"]);
    expect(emails(await list(A, `?q=${encodeURIComponent("ada lovelace")}`))).toEqual(["ada@example.com"]);
    expect(emails(await list(A, "?q=Grace"))).toEqual(["grace@example.com"]);
    // Filters still apply to what the name found.
    expect(emails(await list(A, "?q=Lovelace&status=unsubscribed"))).toEqual([]);
  });

  it("counts subscribed, waiting for confirmation, unsubscribed and blocked contacts", async () => {
    expect((await list(A)).consent).toEqual({ subscribed: 2, waiting: 1, unsubscribed: 1, blocked: 0 });
    expect((await list(B)).consent).toEqual({ subscribed: 1, waiting: 0, unsubscribed: 0, blocked: 0 });
  });

  it("bad filters are explained on the form and nothing is asked of the service", async () => {
    const before = h.emulator.requests.length;
    const bad = await list(A, "?segments=abc&status=sometimes&field=first%20name&value=x");
    expect(bad.errors).toMatchObject({
      segments: "Segment numbers only, separated by commas (for example 12, 15).",
      status: "Pick a status from the list.",
      field: "A custom field name has only letters, digits, - and _.",
    });
    expect(bad.people).toEqual([]);
    expect((await list(A, "?field=firstName")).errors.value).toBe("Enter the value the custom field must have.");
    expect(h.emulator.requests.length).toBe(before);
  });
});

describe("a person's page", () => {
  it("shows fields, tags, series and consent; by email or by id", async () => {
    const ada = await person(A, "ada@example.com");
    expect(ada.person).toMatchObject({ email: "ada@example.com", status: "active", statusDetails: "confirmed", series: [{ id: "1", name: "Welcome series" }] });
    expect(ada.person?.tags.sort()).toEqual(["customer", "vip"]);
    expect(ada.person?.customFields).toEqual(expect.arrayContaining([{ name: "firstName", label: "First name", value: "Ada" }, { name: "source", label: "Source", value: "shopify" }]));
    const byId = await person(A, String(ada.person!.id));
    expect(byId.person?.email).toBe("ada@example.com");
    const grace = await person(A, "grace@example.com");
    expect(grace.person).toMatchObject({ status: "inactive", statusDetails: "unsubscribed" });
  });

  it("lists the person's tracked events newest first, filtered by event name, keyword and date range", async () => {
    const all = await person(A, "ada@example.com");
    expect(all.events.map((e) => e.event)).toEqual(["order_completed", "cart_abandoned", "order_completed"]);
    expect(all.events[0]?.properties).toContain("#1002");

    const orders = await person(A, "ada@example.com", "?event=order_completed");
    expect(orders.events).toHaveLength(2);
    // The words the table shows find the same events.
    expect(all.events[0]?.label).toBe("Order completed");
    expect((await person(A, "ada@example.com", `?event=${encodeURIComponent("Order completed")}`)).events).toHaveLength(2);
    expect((await person(A, "ada@example.com", `?event=${encodeURIComponent("cart abandoned")}`)).events).toHaveLength(1);
    const one = await person(A, "ada@example.com", "?search=%231001");
    expect(one.events.map((e) => JSON.parse(e.properties).publicId)).toEqual(["#1001"]);

    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await person(A, "ada@example.com", `?from=${today}&to=${today}`)).events).toHaveLength(3);
    expect((await person(A, "ada@example.com", `?to=${yesterday}`)).events).toHaveLength(0);
  });

  it("a bad date is explained on the form; the person is still shown", async () => {
    const bad = await person(A, "ada@example.com", "?from=01/05/2026");
    expect(bad.errors.from).toBe("Use a date like 2026-05-01.");
    expect(bad.person?.email).toBe("ada@example.com");
    const reversed = await person(A, "ada@example.com", "?from=2026-05-02&to=2026-05-01");
    expect(reversed.errors.to).toBe("The end date is before the start date.");
  });

  it("an unknown person or a key that is neither id nor email is a not-found page", async () => {
    expect((await loadData(h.app.url, A, `/app/people/${encodeURIComponent("nobody@example.com")}`)).status).toBe(404);
    expect((await loadData(h.app.url, A, "/app/people/999999")).status).toBe(404);
    expect((await loadData(h.app.url, A, "/app/people/not-an-address")).status).toBe(404);
    const page = await openPage(h.app.url, A, `/app/people/${encodeURIComponent("nobody@example.com")}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("Nobody with this email address or id is in your marketing account");
  });

  it("a person id of 16 digits or more is asked of the service exactly as written (ids past 2^53 not rounded)", async () => {
    const asked = (id: string) => h.emulator.requests.filter((r) => r.method === "GET" && r.path === `/api/people/${id}`).length;
    for (const id of ["1000000000000000", "9007199254740993", "18446744073709551615"]) {
      expect((await loadData(h.app.url, A, `/app/people/${id}`)).status, id).toBe(404); // nobody by that id in the emulator
      expect(asked(id), id).toBe(1);
    }
    expect(asked("9007199254740992")).toBe(0);
    // Longer than any id: not asked at all.
    expect((await loadData(h.app.url, A, `/app/people/${"9".repeat(21)}`)).status).toBe(404);
    expect(asked("9".repeat(21))).toBe(0);
  });
});

describe("in the merchant's words", () => {
  /** The text of every status badge on a page (after Polaris's hidden tone word). */
  const badges = (html: string) => [...html.matchAll(/class="Polaris-Badge[^"]*">(?:<span class="[^"]*visuallyHidden">[^<]*<\/span>)?<span[^>]*>([^<]+)</g)].map((m) => m[1]);

  it("status badges read Subscribed / Not confirmed yet / Unsubscribed, as the status filter does", async () => {
    const html = await (await openPage(h.app.url, A, "/app/people")).text();
    expect(badges(html).sort()).toEqual(["Not confirmed yet", "Subscribed", "Subscribed", "Unsubscribed"]);
    expect(html).toMatch(/<option value="unconfirmed">Not confirmed yet<\/option>/);
    expect(html).toMatch(/<option value="active">Subscribed<\/option>/);
  });

  it("a hard-bounced person (still 'confirmed' in statusDetails) is never shown as subscribed: list and person page agree", async () => {
    const shop = "people-bounced.myshopify.com";
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    const account = h.emulator.createAccount({ company: "Bounce Ltd" });
    await h.connect(shop, account.apiKey);
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: account.apiKey, retries: 0 });
    for (const email of ["bounced@example.com", "fine@example.com"]) await svc.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    h.emulator.markHardBounced("bounced@example.com", account.accountId);
    const text = (html: string) => html.replace(/<script[\s\S]*?<\/script>/g, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ");

    const listHtml = await (await openPage(h.app.url, shop, "/app/people")).text();
    expect(text(listHtml)).toMatch(/bounced@example\.com (?:\S+ )?Bounced or suppressed/);
    expect(text(listHtml)).toMatch(/fine@example\.com (?:\S+ )?Subscribed/);
    expect(badges(listHtml).sort()).toEqual(["Bounced or suppressed", "Subscribed"]);

    const page = await (await openPage(h.app.url, shop, `/app/people/${encodeURIComponent("bounced@example.com")}`)).text();
    expect(badges(page)).toEqual(["Bounced or suppressed"]);
    expect(text(page)).toMatch(/Does not receive email \( ?bounced or suppressed ?\)/);
    expect(text(page)).not.toMatch(/Subscribed|subscribed\)|confirmed/);
  });

  it("a person's events: names in words, the data as a short summary, field names in words, one 'When' column", async () => {
    const ada = await person(A, "ada@example.com");
    expect(ada.events.map((e) => [e.label, e.summary])).toEqual([
      ["Order completed", "Order #1002 · 7.00"],
      ["Cart abandoned", "Cart · 10.00"],
      ["Order completed", "Order #1001 · $42.50"],
    ]);
    const html = await (await openPage(h.app.url, A, "/app/people/ada%40example.com")).text();
    for (const shown of ["Order completed", "Cart abandoned", "Order #1001 · $42.50", "First name", "Last name", ">When<"]) expect(html, shown).toContain(shown);
    expect(html).not.toContain("When (UTC)");
    expect(html).not.toContain("monospace");
    expect(html).not.toMatch(/>firstName</);

    // A shape the app does not know: a few "Key: value" pairs, nested data as a count.
    const other = await person(A, "new@example.com");
    expect(other.events.map((e) => [e.label, e.summary])).toEqual([["Wishlist added", "Product title: Blue mug · Quantity: 2 · Tags: 2 items"]]);
  });

  it("the service not answering: no list, no 'nobody matches', but what failed and Try again", async () => {
    h.emulator.setFaults({ serverErrors: { count: 1000, status: 503 }, pathPrefix: "/api/people" });
    const pages = [
      ["/app/people", "Your contacts"],
      ["/app/people?q=ada", "Your contacts"],
      ["/app/people/ada%40example.com", "This person"],
    ] as const;
    for (const [path, what] of pages) {
      const html = await (await openPage(h.app.url, A, path)).text();
      expect(html, path).toContain(`${what} could not be loaded: the marketing service is not answering right now.`);
      expect(html, path).toContain("Try again");
      expect(html, path).not.toMatch(/Nothing was changed|Nobody matches these filters|No events recorded|Polaris-IndexTable/);
    }
    // Only the events fail: the person is shown, their events are said to be missing.
    h.emulator.setFaults({ serverErrors: { count: 1000, status: 503 }, pathPrefix: "/api/people/ada%40example.com/events" });
    const html = await (await openPage(h.app.url, A, "/app/people/ada%40example.com")).text();
    expect(html).toContain("First name");
    expect(html).toContain("Their tracked events could not be loaded: the marketing service is not answering right now.");
    expect(html).not.toMatch(/No events recorded|Nothing was changed/);
  });
});

describe("from a Shopify customer", () => {
  const from = async (shop: string, path: string) => routeData<{ kind: string; to?: string; email?: string }>(await loadData(h.app.url, shop, path), BY_CUSTOMER);

  it("resolves the customer's email through the Admin API and opens the person page", async () => {
    expect(await from(A, "/app/people/by-customer/501")).toEqual({ kind: "person", to: "/app/people/ada%40example.com" });
    // As Shopify's admin link sends it: ?id= with the numeric id.
    expect(await from(A, "/app/people/by-customer?id=501")).toEqual({ kind: "person", to: "/app/people/ada%40example.com" });
    expect(await from(A, `/app/people/by-customer?id=${encodeURIComponent("gid://shopify/Customer/501")}`)).toMatchObject({ kind: "person" });
    const asked = h.app.admin.calls.filter((c) => c.shop === A && JSON.stringify(c.body).includes("CustomerEmail"));
    expect(asked.at(-1)?.body).toMatchObject({ variables: { id: "gid://shopify/Customer/501" } });
  });

  it("says when the customer has no email, is not in the service, does not exist, or the link is wrong", async () => {
    expect(await from(A, "/app/people/by-customer/502")).toMatchObject({ kind: "no_email" });
    expect(await from(A, "/app/people/by-customer/503")).toMatchObject({ kind: "not_in_service", email: "never-synced@example.com" });
    expect(await from(A, "/app/people/by-customer/599")).toMatchObject({ kind: "no_customer" });
    expect(await from(A, "/app/people/by-customer/abc")).toMatchObject({ kind: "bad_id" });
    expect(await from(NOT_CONNECTED, "/app/people/by-customer/501")).toMatchObject({ kind: "unavailable", service: { state: "not_connected" } });
  });
});

describe("two shops stay apart", () => {
  it("B finds only its own people and cannot open A's", async () => {
    expect(emails(await list(B))).toEqual(["bonly@example.com"]);
    expect(emails(await list(B, "?q=ada"))).toEqual([]);
    expect((await loadData(h.app.url, B, `/app/people/${encodeURIComponent("ada@example.com")}`)).status).toBe(404);
    expect((await loadData(h.app.url, A, `/app/people/${encodeURIComponent("bonly@example.com")}`)).status).toBe(404);
    // B's customer 501 is Ada too, but she is not in B's account.
    expect((await routeData<{ kind: string }>(await loadData(h.app.url, B, "/app/people/by-customer/501"), BY_CUSTOMER)).kind).toBe("not_in_service");
  });
});
