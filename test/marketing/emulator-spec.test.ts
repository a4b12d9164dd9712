/**
 * Issue 31 item 7: the emulator answers to docs/marketing-service-interface.md. Each test names the
 * section it holds the emulator to; where the spec states no refusal, the emulator accepts.
 */
import { describe, expect, it } from "vitest";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

describe("the emulator answers to the spec", () => {
  it("§4.1 filter[status]: `active` lists exactly what `confirmed` lists, a hard-bounced person included", async () => {
    const c = h.client();
    const bounced = uniqueEmail("bounced");
    const fine = uniqueEmail("fine");
    for (const email of [bounced, fine]) await c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    h.emu.markHardBounced(bounced);
    const emails = async (status: "active" | "confirmed" | "inactive") => (await c.people.list({ status, perPage: 100 })).data.map((p) => p.email).sort();
    expect(await emails("active")).toEqual(await emails("confirmed"));
    expect((await emails("inactive")).filter((e) => e === bounced || e === fine)).toEqual([]);
  });

  it("§4.1 series: an unknown series id is not refused (no refusal stated); the person is enrolled", async () => {
    const c = h.client();
    const p = await c.people.upsert({ email: uniqueEmail(), source: "shopify", series: { "77": true } });
    expect(p.series?.map((s) => s.id)).toEqual(["77"]);
  });

  it("§4.5 an event action the spec does not list for the type is refused: 422 in §7's format, keyed `action`, nothing stored", async () => {
    const c = h.client({ retries: 0 });
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const e = await failure(c.request({ method: "POST", path: "/api/events/order/refunded", body: { email, source: "shopify", id: "9" } }));
    expect(e).toMatchObject({ kind: "validation", status: 422, message: "The given data was invalid." });
    expect(e.errors?.action?.[0]).toMatch(/created, updated, deleted, completed/);
    for (const [type, action] of [["cart", "completed"], ["product", "purchased"], ["customer", "viewed"], ["user", "renewed"], ["subscription", "paused"]]) {
      const r = await failure(c.request({ method: "POST", path: `/api/events/${type}/${action}`, body: { email, source: "shopify", id: "9" } }));
      expect(r.errors, `${type}/${action}`).toHaveProperty(["action"]);
    }
    expect(h.emu.personEvents(email)).toEqual([]);
    // every listed action is taken
    await c.request({ method: "POST", path: "/api/events/subscription/renewal_failed", body: { email, source: "shopify", id: "9" } });
    expect(h.emu.personEvents(email).map((x) => x.event)).toEqual(["subscription_renewal_failed"]);
  });

  it("§4.4/§5 GET /api/authenticated answers {authenticated: false} for a revoked key; other calls say `Unauthenticated`", async () => {
    const { apiKey } = h.emu.createAccount();
    const c = h.client({ apiKey, retries: 0 });
    expect(await c.authenticated()).toBe(true);
    h.emu.revokeApiKey(apiKey);
    expect(await c.authenticated()).toBe(false);
    expect(h.emu.requests.at(-1)).toMatchObject({ path: "/api/authenticated", status: 200, responseBody: { data: { authenticated: false } } });
    const e = await failure(c.account.get());
    expect(e).toMatchObject({ kind: "unauthenticated", message: "Unauthenticated" });
    // a key the service does not know at all: the `Unauthenticated` answer, on this route too (§5.2)
    expect(await h.client({ apiKey: "mk_live_never_issued", retries: 0 }).authenticated()).toBe(false);
    expect(h.emu.requests.at(-1)).toMatchObject({ path: "/api/authenticated", responseBody: { message: "Unauthenticated" } });
    // the other keys of the account are untouched
    expect(await h.client().authenticated()).toBe(true);
  });

  it("§7/§8 429s without Retry-After (a fault option): the client backs off on its own and the event is stored once", async () => {
    const waits: number[] = [];
    const c = h.client({ retries: 3, sleep: async (ms) => void waits.push(ms) });
    const email = uniqueEmail();
    h.emu.setFaults({ burst429: { count: 2, withoutRetryAfter: true }, pathPrefix: "/api/events" });
    await expect(c.events.order("created", { email, source: "shopify", id: "o-429" })).resolves.toMatchObject({ success: true });
    const sent = h.emu.requests.filter((r) => r.path === "/api/events/order/created");
    expect(sent.map((r) => r.status)).toEqual([429, 429, 200]);
    expect(sent.slice(0, 2).map((r) => r.responseHeaders?.["Retry-After"])).toEqual([undefined, undefined]);
    // one wait before each repeat, from the client's own backoff (Retry-After would set it otherwise)
    expect(waits).toHaveLength(2);
    expect(h.logs.filter((l) => l.error === "rate_limited").map((l) => l.willRetry)).toEqual([true, true]);
    expect(h.emu.state.unattachedEvents.filter((e) => e.properties.id === "o-429")).toHaveLength(1);
    // a share: some 429s carry it, some do not
    h.emu.setFaults({ burst429: { count: 40, withoutRetryAfter: 0.5 }, pathPrefix: "/api/account" });
    for (let i = 0; i < 40; i++) await h.client({ retries: 0 }).account.get().catch(() => undefined);
    const headers = h.emu.requests.filter((r) => r.path === "/api/account").map((r) => r.responseHeaders?.["Retry-After"] !== undefined);
    expect(headers).toContain(true);
    expect(headers).toContain(false);
  });

  it("§4.2 campaign list: an unknown status matches nothing, an unknown sort or order falls back; `preparing` and order without sort stay refused", async () => {
    const c = h.client();
    await c.campaigns.create({ name: "Zed" });
    await c.campaigns.create({ name: "Abe" });
    const list = (query: string) => c.request({ method: "GET", path: `/api/campaigns?${query}` }) as Promise<{ data: { name: string }[] }>;
    expect((await list("status=archived")).data).toEqual([]);
    expect((await list("sort=colour&order=sideways")).data.map((x) => x.name)).toEqual(["Abe", "Zed"]);
    await expect(list("status=preparing")).rejects.toMatchObject({ kind: "validation", errors: { status: expect.any(Array) } });
    await expect(list("order=asc")).rejects.toMatchObject({ kind: "validation", errors: { order: expect.any(Array) } });
  });

  it("§4.1 people list: a filter[status] the spec does not list is not refused; it matches no one", async () => {
    const c = h.client();
    await c.people.upsert({ email: uniqueEmail(), source: "shopify" });
    const r = (await c.request({ method: "GET", path: "/api/people?filter[status]=asleep" })) as { data: unknown[] };
    expect(r.data).toEqual([]);
  });

  it("§8 test-send quota: refused test-sends do not use it up, only sent ones do", async () => {
    const c = h.client({ retries: 0 });
    const tpl = (await c.templates.list()).data[0]!;
    const campaign = await c.campaigns.create({ name: "T", templateId: tpl.id });
    for (let i = 0; i < 8; i++) await c.campaigns.testSend(campaign.id, ["someone@elsewhere.example"]).catch(() => undefined);
    expect(h.emu.requests.filter((r) => r.path.endsWith("/test-send")).map((r) => r.status)).toEqual(Array(8).fill(422));
    await expect(c.campaigns.testSend(campaign.id, ["owner@default-shop.example"])).resolves.toMatchObject({ recipients: ["owner@default-shop.example"] });
  });

  it("§2.1/§2.7 integers stay integers: an empty page has from/to 0, and lastEventTrackedAt is 0 before any event", async () => {
    const c = h.client();
    await c.people.list({ email: "nobody-at-all" });
    expect((h.emu.requests.at(-1)?.responseBody as { meta: Record<string, unknown> }).meta).toMatchObject({ from: 0, to: 0, total: 0 });
    const t = await c.websiteTracker();
    expect((h.emu.requests.at(-1)?.responseBody as { data: Record<string, unknown> }).data.lastEventTrackedAt).toBe(0);
    expect(t.lastEventTrackedAt).toBeNull();
  });
});
