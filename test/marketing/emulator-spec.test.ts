/**
 * Issue 31 item 7: the emulator answers to docs/marketing-service-interface.md. Each test names the
 * section it holds the emulator to; where the spec states no refusal, the emulator accepts.
 */
import { describe, expect, it } from "vitest";
import { uniqueEmail, useEmulator } from "./support";

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

  it("§4.5 an event action the spec does not list is stored, not answered 404", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const r = (await c.request({ method: "POST", path: "/api/events/order/refunded", body: { email, source: "shopify", id: "9" } })) as { success: boolean };
    expect(r.success).toBe(true);
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["order_refunded"]);
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
