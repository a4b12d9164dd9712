/**
 * What the service's answers mean (issue 31): an event answer that says it failed is a failure, and
 * a 403 asking to retry is retried. Against the emulator over HTTP.
 */
import { describe, expect, it } from "vitest";
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
