/**
 * What the service's answers mean (issue 31): an event answer that says it failed is a failure, a
 * 403 asking to retry is retried, and ids above 2^53 keep every digit. Against the emulator over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "../../app/services/marketing/client.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

describe("§4.5 an event answered success: false", () => {
  it("is a failure with the service's words, retried by the client, and nothing is counted as stored", async () => {
    const c = h.client({ retries: 2 });
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    h.emu.setFaults({ eventsNotAccepted: { message: "Event quota exceeded for this person" } });
    const e = await failure(c.events.order("completed", { email, source: "shopify", id: "1001", total: 12 }));
    expect(e).toMatchObject({ kind: "not_accepted", status: 200, retryable: true, body: expect.objectContaining({ success: false }) });
    expect(e.message).toContain("Event quota exceeded for this person");
    // tried three times (retries: 2), like a 5xx of an event
    expect(h.emu.requests.filter((r) => r.path === "/api/events/order/completed")).toHaveLength(3);
    expect(h.emu.personEvents(email)).toEqual([]);
  });

  it("without a message it still fails, for custom events too; a later success: true goes through", async () => {
    const c = h.client({ retries: 1 });
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    h.emu.setFaults({ eventsNotAccepted: { count: 1 } });
    // the first answer says false, the retry is taken
    await expect(c.events.custom({ email, source: "shopify", eventName: "wishlist_added" })).resolves.toMatchObject({ success: true });
    expect(h.emu.personEvents(email).map((ev) => ev.event)).toEqual(["wishlist_added"]);
    h.emu.setFaults({ eventsNotAccepted: true });
    const e = await failure(h.client({ retries: 0 }).events.custom({ email, source: "shopify", eventName: "wishlist_added" }));
    expect(e).toMatchObject({ kind: "not_accepted", retryable: true });
    expect(e.message).toMatch(/did not accept/);
  });
});

describe("§7 a 403 whose message asks to retry", () => {
  it("is retry_later (retryable) in one place; billing and plugin 403s keep their kinds", async () => {
    const c = h.client();
    const tpl = (await c.templates.list()).data[0]!;
    const campaign = await c.campaigns.create({ name: "Spring", templateId: tpl.id });
    // §7: the eligibility failure asks to retry and its status is not shown — a 403 is one answer
    h.emu.setFaults({ eligibilityCheckFails: { status: 403 } });
    const e = await failure(c.campaigns.send(campaign.id, { force: true }));
    expect(e).toMatchObject({ kind: "retry_later", status: 403, retryable: true });
    h.emu.setFaults({ inactiveAccount: true });
    expect(await failure(c.campaigns.send(campaign.id, { force: true }))).toMatchObject({ kind: "account_inactive", retryable: false });
    h.emu.setFaults({ pluginKey: true });
    expect(await failure(c.campaigns.send(campaign.id, { force: true }))).toMatchObject({ kind: "plugin_key_not_allowed", retryable: false });
  });
});

describe("§2 ids above 2^53 stay exact, in responses and requests", () => {
  // A second emulator whose ids start at 2^53: the first campaign is 9007199254740993, which a JS
  // number reads as …992. Person ids are rendered as JSON strings (the spec's samples), campaign ids
  // as JSON integers.
  let big: Emulator;
  beforeAll(async () => {
    big = await startEmulator({ port: 0, idBase: 2n ** 53n });
  });
  afterAll(() => big?.close());
  const client = () => createMarketingClient({ baseUrl: big.url, apiKey: big.apiKey, retries: 0 });

  it("people: created, read, listed, updated by id and deleted by id with the exact id", async () => {
    const c = client();
    const email = uniqueEmail("big");
    const p = await c.people.upsert({ email, source: "shopify" });
    expect(p.id).toBe("9007199254741993");
    expect((await c.people.get(p.id)).email).toBe(email);
    expect((await c.people.list({ email })).data.map((x) => x.id)).toEqual(["9007199254741993"]);

    const updated = await c.people.upsert({ id: p.id, source: "shopify", tags: { vip: true } });
    expect(updated).toMatchObject({ id: p.id, email, tags: ["vip"] });
    // §4.1 types the id as an integer: it goes out as a JSON integer with every digit
    expect(big.requests.at(-1)?.body).toMatchObject({ id: 9007199254741993n });

    await c.perform({ op: "person.delete", idOrEmail: p.id });
    expect(big.person(email)).toBeUndefined();
  });

  it("campaigns: an id rendered as a JSON integer above 2^53 is read exactly and used in paths", async () => {
    const c = client();
    const tpl = (await c.templates.list()).data[0]!;
    const created = await c.campaigns.create({ name: "Big", templateId: tpl.id });
    expect(created.id).toBe("9007199254740993");
    expect(big.requests.at(-1)?.responseBody).toMatchObject({ data: { id: 9007199254740993n } });
    expect((await c.campaigns.get(created.id)).name).toBe("Big");
    expect((await c.campaigns.update(created.id, { subject: "Hello" })).subject).toBe("Hello");
    expect((await c.campaigns.list()).data.map((x) => x.id)).toContain("9007199254740993");
    const copy = await c.campaigns.clone(created.id);
    expect(copy.id).toBe("9007199254740994");
    await c.campaigns.delete(copy.id);
    expect(big.state.campaigns.map((x) => String(big.state.externalId(x.id)))).toEqual(["9007199254740993"]);
  });

  it("an id that is already an inexact number is refused before anything is sent", async () => {
    const before = big.requests.length;
    const e = await failure(client().campaigns.get(2 ** 53 + 2));
    expect(e).toMatchObject({ kind: "validation", local: true });
    expect(big.requests.length).toBe(before);
  });
});
