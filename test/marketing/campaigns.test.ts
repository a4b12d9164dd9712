import { describe, expect, it } from "vitest";
import { failure, useEmulator } from "./support";

const h = useEmulator();
const inAnHour = () => new Date(Date.now() + 3_600_000);

/** A draft with email content (copied from the account's first own template). */
async function draftWithContent(name = "Spring sale") {
  const c = h.client();
  const tpl = (await c.templates.list()).data[0]!;
  return { c, campaign: await c.campaigns.create({ name, templateId: tpl.id }) };
}

describe("POST /api/campaigns, clone, GET, PUT, DELETE", () => {
  it("creates a draft (full form) and copies template content", async () => {
    const { campaign } = await draftWithContent();
    expect(campaign).toMatchObject({ name: "Spring sale", status: "draft", builderReviewed: false, scheduledAt: null, sentAt: null });
    // §2.5: a template has no subject, and §3.1 copies only its content
    expect(campaign.subject).toBe("");
    expect(campaign.sender).toEqual({ name: "Default Shop", email: "owner@default-shop.example" });
    expect(campaign.links?.campaignUrl).toContain(`/campaigns/${campaign.id}`);
    expect(h.emu.requests.at(-1)?.status).toBe(201);
  });

  it("unknown templateId → 422 on templateId; missing name → 422 on name (service)", async () => {
    const c = h.client();
    const e = await failure(c.campaigns.create({ name: "X", templateId: "tpl-does-not-exist" }));
    expect(e).toMatchObject({ kind: "validation", status: 422 });
    expect(Object.keys(e.errors!)).toEqual(["templateId"]);
    const e2 = await failure(c.request({ method: "POST", path: "/api/campaigns", body: {} }));
    expect(Object.keys(e2.errors!)).toEqual(["name"]);
  });

  it("clones with a copy-of name, builderReviewed false, content kept; unknown id → campaign_not_found", async () => {
    const { c, campaign } = await draftWithContent("Base");
    h.emu.markReviewed(campaign.id);
    const copy = await c.campaigns.clone(campaign.id);
    expect(copy).toMatchObject({ name: "Copy of Base", status: "draft", builderReviewed: false });
    expect(copy.id).not.toBe(campaign.id);
    expect(h.emu.state.campaignById(copy.id).content).not.toBeNull();
    expect((await c.campaigns.clone(campaign.id, { name: "Named" })).name).toBe("Named");
    const e = await failure(c.campaigns.clone(424242));
    expect(e).toMatchObject({ kind: "campaign_not_found", message: "Campaign not found", status: 404 });
  });

  it("gets one campaign; unknown id → campaign_not_found", async () => {
    const { c, campaign } = await draftWithContent();
    expect(await c.campaigns.get(campaign.id)).toMatchObject({ id: campaign.id, previewText: "" });
    expect((await failure(c.campaigns.get(999))).kind).toBe("campaign_not_found");
  });

  it("updates a draft; empty body → 422 _body; non-draft → 422 status", async () => {
    const { c, campaign } = await draftWithContent();
    const u = await c.campaigns.update(campaign.id, { subject: "New subject", sender: { name: "Shop Team" } });
    expect(u.subject).toBe("New subject");
    expect(u.sender).toEqual({ name: "Shop Team", email: "owner@default-shop.example" });

    const empty = await failure(c.request({ method: "PUT", path: `/api/campaigns/${campaign.id}`, body: {} }));
    expect(Object.keys(empty.errors!)).toEqual(["_body"]);

    await c.campaigns.send(campaign.id, { force: true });
    const nd = await failure(c.campaigns.update(campaign.id, { name: "Late" }));
    expect(nd).toMatchObject({ kind: "validation", status: 422 });
    expect(nd.errors!.status![0]).toMatch(/draft/i);
    expect((await failure(c.campaigns.update(999, { name: "x" }))).kind).toBe("campaign_not_found");
  });

  it("deletes a draft (no body); refuses while sending (422 status), allows preparing (not shown: permissive); unknown → not found", async () => {
    const { c, campaign } = await draftWithContent();
    await expect(c.campaigns.delete(campaign.id)).resolves.toBeUndefined();
    expect((await failure(c.campaigns.get(campaign.id))).kind).toBe("campaign_not_found");

    const { campaign: live } = await draftWithContent("Live");
    await c.campaigns.send(live.id, { force: true }); // preparing
    h.emu.advanceCampaign(live.id, "sending");
    const sending = await failure(c.campaigns.delete(live.id));
    expect(sending).toMatchObject({ kind: "validation", status: 422 });
    expect(Object.keys((await failure(c.campaigns.delete(live.id))).errors!)).toEqual(["status"]);
    h.emu.advanceCampaign(live.id, "sent");
    await c.campaigns.delete(live.id);
    expect((await failure(c.campaigns.delete(live.id))).kind).toBe("campaign_not_found");
    const { campaign: prep } = await draftWithContent("Preparing");
    await c.campaigns.send(prep.id, { force: true });
    await expect(c.campaigns.delete(prep.id)).resolves.toBeUndefined();
  });
});

describe("GET /api/campaigns", () => {
  it("defaults to drafts, `sending` includes preparing, `all` lists everything, sort+order apply", async () => {
    const c = h.client();
    const a = await c.campaigns.create({ name: "Alpha" });
    const { campaign: b } = await draftWithContent("Bravo");
    await c.campaigns.create({ name: "Charlie" });
    await c.campaigns.send(b.id, { force: true });

    expect((await c.campaigns.list()).data.map((x) => x.name)).toEqual(["Charlie", "Alpha"]);
    expect((await c.campaigns.list({ status: "sending" })).data.map((x) => [x.name, x.status])).toEqual([["Bravo", "preparing"]]);
    expect((await c.campaigns.list({ status: "all", sort: "name", order: "asc" })).data.map((x) => x.name)).toEqual(["Alpha", "Bravo", "Charlie"]);
    const item = (await c.campaigns.list({ status: "all", sort: "name", order: "asc" })).data[0]!;
    expect(item.id).toBe(a.id);
    expect(item).not.toHaveProperty("subject"); // list form

    const all: string[] = [];
    for await (const x of c.campaigns.iterate({ status: "all", perPage: 2, sort: "name" })) all.push(x.name);
    expect(all).toEqual(["Charlie", "Bravo", "Alpha"]);
  });

  it("order without sort fails locally naming `order`; the service also refuses it", async () => {
    const c = h.client();
    const local = await failure(c.campaigns.list({ order: "asc" }));
    expect(local).toMatchObject({ kind: "validation", local: true });
    expect(local.errors).toHaveProperty("order");
    const server = await failure(c.request({ method: "GET", path: "/api/campaigns?order=asc" }));
    expect(server).toMatchObject({ kind: "validation", status: 422 });
  });
});

describe("send / schedule (§3.1) and their §7 errors", () => {
  it("sends a reviewed draft → preparing, to the confirmed list only, consuming one send", async () => {
    const c = h.client();
    await c.people.upsert({ email: "yes@shopper.example", source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    await c.people.upsert({ email: "pending@shopper.example", source: "shopify" });
    const { campaign } = await draftWithContent();
    h.emu.markReviewed(campaign.id);
    const before = h.emu.state.account(h.emu.defaultAccountId).sendingLimitRemaining;
    const sent = await c.campaigns.send(campaign.id);
    expect(sent.status).toBe("preparing");
    const mail = h.emu.sentEmails.find((m) => m.kind === "campaign");
    expect(mail?.to).toEqual(["yes@shopper.example"]);
    expect(h.emu.state.account(h.emu.defaultAccountId).sendingLimitRemaining).toBe(before - 1);
    h.emu.advanceCampaign(campaign.id, "sent");
    expect((await c.campaigns.get(campaign.id)).sentAt).not.toBeNull();
  });

  it("not reviewed and no force → review_required with links; force bypasses", async () => {
    const { c, campaign } = await draftWithContent();
    const e = await failure(c.campaigns.send(campaign.id));
    expect(e).toMatchObject({ kind: "review_required", status: 422, retryable: false });
    expect(e.links?.editorUrl).toContain(`/campaigns/${campaign.id}/editor`);
    expect((await c.campaigns.send(campaign.id, { force: true })).status).toBe("preparing");
  });

  it("no email content → validation on errors.campaign", async () => {
    const c = h.client();
    const bare = await c.campaigns.create({ name: "No content" });
    const e = await failure(c.campaigns.send(bare.id, { force: true }));
    expect(e.kind).toBe("validation");
    expect(Object.keys(e.errors!)).toEqual(["campaign"]);
  });

  it("sending limit exhausted → sending_limit naming remaining sends and reset date", async () => {
    const { c, campaign } = await draftWithContent();
    h.emu.updateAccount(h.emu.defaultAccountId, { sendingLimitRemaining: 0 });
    const e = await failure(c.campaigns.schedule(campaign.id, { scheduledAt: inAnHour(), force: true }));
    expect(e).toMatchObject({ kind: "sending_limit", status: 422 });
    expect(e.errors!.send![0]).toMatch(/0 sends remaining.*resets on \d{4}-\d{2}-\d{2}/);
    expect(e.links?.campaignUrl).toBeTruthy();
  });

  it("plan upgrade required → upgrade_required with the upgrade object", async () => {
    const { c, campaign } = await draftWithContent();
    h.emu.updateAccount(h.emu.defaultAccountId, { upgradeRequired: true });
    const e = await failure(c.campaigns.send(campaign.id, { force: true }));
    expect(e.kind).toBe("upgrade_required");
    expect(e.upgrade).toMatchObject({ level: "pro", levelName: "Pro", monthlyAmount: 49 });
  });

  it("send/schedule failing for an unspecified reason (422 errors.campaign asking to retry) → retry_later, retryable", async () => {
    const { c, campaign } = await draftWithContent();
    h.emu.setFaults({ sendFails: true });
    const e = await failure(c.campaigns.send(campaign.id, { force: true }));
    expect(e).toMatchObject({ kind: "retry_later", retryable: true, status: 422 });
    expect(e.message).toMatch(/retry/i);
    expect(e.errors).toHaveProperty("campaign");
    const s = await failure(c.campaigns.schedule(campaign.id, { scheduledAt: inAnHour(), force: true }));
    expect(s).toMatchObject({ kind: "retry_later", retryable: true });
  });

  it("a campaign without email content stays a permanent errors.campaign refusal", async () => {
    const c = h.client();
    const bare = await c.campaigns.create({ name: "Bare" });
    const e = await failure(c.campaigns.send(bare.id, { force: true }));
    expect(e).toMatchObject({ kind: "validation", retryable: false });
    expect(e.errors).toHaveProperty("campaign");
  });

  it.each([422, 503, 409])(
    "eligibility check failure answered %i → recognised by its message asking to retry; the mutation is not retried automatically",
    async (status) => {
      const { c, campaign } = await draftWithContent();
      h.emu.setFaults({ eligibilityCheckFails: { status } });
      const before = h.emu.requests.length;
      const e = await failure(c.campaigns.send(campaign.id, { force: true }));
      expect(e).toMatchObject({ kind: status >= 500 ? "server_error" : "retry_later", retryable: true, status });
      expect(e.message).toMatch(/retry/i);
      expect(h.emu.requests.length - before).toBe(1);
    },
  );

  it("send/schedule on a non-draft → validation on errors.status", async () => {
    const { c, campaign } = await draftWithContent();
    await c.campaigns.send(campaign.id, { force: true });
    const e = await failure(c.campaigns.send(campaign.id, { force: true }));
    expect(e.errors!.status![0]).toMatch(/only draft/i);
    const e2 = await failure(c.campaigns.schedule(campaign.id, { scheduledAt: inAnHour(), force: true }));
    expect(e2.errors!.status![0]).toMatch(/only draft/i);
  });

  it("schedules in UTC rounding seconds up to the next minute (Date or offset string)", async () => {
    const { c, campaign } = await draftWithContent();
    const at = new Date(Date.UTC(2099, 0, 2, 10, 15, 5));
    const s = await c.campaigns.schedule(campaign.id, { scheduledAt: at, force: true });
    expect(s.status).toBe("scheduled");
    expect(s.scheduledAt).toBe("2099-01-02T10:16:00+00:00");
    const { campaign: other } = await draftWithContent("Other");
    const s2 = await c.campaigns.schedule(other.id, { scheduledAt: "2099-01-02T12:00:00+02:00", force: true });
    expect(s2.scheduledAt).toBe("2099-01-02T10:00:00+00:00");
  });

  it("scheduledAt in the past or without an offset: local error on scheduledAt; the service says scheduled_at_invalid", async () => {
    const { c, campaign } = await draftWithContent();
    for (const scheduledAt of ["2020-01-01T00:00:00Z", "2099-01-01T10:00:00", "tomorrow"]) {
      const local = await failure(c.campaigns.schedule(campaign.id, { scheduledAt, force: true }));
      expect(local).toMatchObject({ kind: "validation", local: true });
      expect(local.errors).toHaveProperty("scheduledAt");
      const server = await failure(c.request({ method: "POST", path: `/api/campaigns/${campaign.id}/schedule`, body: { scheduledAt, force: true } }));
      expect(server).toMatchObject({ kind: "scheduled_at_invalid", status: 422 });
    }
  });

  it("send/schedule/test-send on an unknown id → campaign_not_found with the trailing period", async () => {
    const c = h.client();
    for (const p of [c.campaigns.send(777), c.campaigns.schedule(777, { scheduledAt: inAnHour() }), c.campaigns.testSend(777, ["owner@default-shop.example"])]) {
      expect(await failure(p)).toMatchObject({ kind: "campaign_not_found", message: "Campaign not found." });
    }
  });
});

describe("test-send", () => {
  it("sends to verified-domain and account addresses, and does not change the campaign", async () => {
    const { c, campaign } = await draftWithContent();
    const r = await c.campaigns.testSend(campaign.id, ["owner@default-shop.example", "qa@default-shop.example"]);
    expect(r.recipients).toEqual(["owner@default-shop.example", "qa@default-shop.example"]);
    expect(h.emu.sentEmails.filter((m) => m.kind === "test").map((m) => m.to)).toEqual([r.recipients]);
    expect((await c.campaigns.get(campaign.id)).status).toBe("draft");
  });

  it("a recipient off the verified domains → test_send_recipient_rejected naming the address", async () => {
    const { c, campaign } = await draftWithContent();
    const e = await failure(c.campaigns.testSend(campaign.id, ["owner@default-shop.example", "friend@gmail.example"]));
    expect(e).toMatchObject({ kind: "test_send_recipient_rejected", status: 422, rejectedRecipients: ["friend@gmail.example"] });
    expect(h.emu.sentEmails).toEqual([]);
  });

  it("no recipients: local error; the service's 422 on recipients (no address) is plain validation", async () => {
    const { c, campaign } = await draftWithContent();
    const local = await failure(c.campaigns.testSend(campaign.id, []));
    expect(local.errors).toHaveProperty("recipients");
    const dupes = await failure(c.campaigns.testSend(campaign.id, ["a@default-shop.example", "A@default-shop.example"]));
    expect(dupes.errors).toHaveProperty("recipients");
    const eleven = Array.from({ length: 11 }, (_, i) => `u${i}@default-shop.example`);
    expect((await failure(c.campaigns.testSend(campaign.id, eleven))).errors).toHaveProperty("recipients");
    const server = await failure(c.request({ method: "POST", path: `/api/campaigns/${campaign.id}/test-send`, body: {} }));
    expect(server).toMatchObject({ kind: "validation", status: 422 });
    expect(Object.keys(server.errors!)).toEqual(["recipients"]);
  });

  it("a campaign without content → errors.campaign; undeliverable → errors.testSend", async () => {
    const c = h.client();
    const bare = await c.campaigns.create({ name: "Bare" });
    expect(Object.keys((await failure(c.campaigns.testSend(bare.id, ["owner@default-shop.example"]))).errors!)).toEqual(["campaign"]);
    const { campaign } = await draftWithContent();
    h.emu.setFaults({ testSendUndeliverable: true });
    expect(Object.keys((await failure(c.campaigns.testSend(campaign.id, ["owner@default-shop.example"]))).errors!)).toEqual(["testSend"]);
  });

  it("per-minute limit → rate_limited (429) with retryAfterMs; no in-process wait when retries are 0", async () => {
    const { campaign } = await draftWithContent();
    const c = h.client({ retries: 0 });
    for (let i = 0; i < 5; i++) await c.campaigns.testSend(campaign.id, ["owner@default-shop.example"]);
    const e = await failure(c.campaigns.testSend(campaign.id, ["owner@default-shop.example"]));
    expect(e).toMatchObject({ kind: "rate_limited", status: 429, retryable: true });
    expect(e.retryAfterMs).toBeGreaterThan(0);
    expect(e.retryAfterMs).toBeLessThanOrEqual(60_000);
  });
});

describe("403s: inactive account and plugin keys", () => {
  it("an inactive account gets account_inactive on create/clone/update/send/schedule/test-send, but can read", async () => {
    const { campaign } = await draftWithContent();
    const { apiKey, accountId } = h.emu.createAccount({ status: "suspended" });
    const c = h.client({ apiKey });
    expect((await failure(c.campaigns.create({ name: "x" })))).toMatchObject({ kind: "account_inactive", status: 403, retryable: false });
    h.emu.updateAccount(h.emu.defaultAccountId, { status: "cancelled" });
    const d = h.client();
    for (const p of [
      d.campaigns.clone(campaign.id),
      d.campaigns.update(campaign.id, { name: "y" }),
      d.campaigns.send(campaign.id, { force: true }),
      d.campaigns.schedule(campaign.id, { scheduledAt: inAnHour(), force: true }),
      d.campaigns.testSend(campaign.id, ["owner@default-shop.example"]),
    ]) {
      expect((await failure(p)).kind).toBe("account_inactive");
    }
    expect((await d.campaigns.get(campaign.id)).status).toBe("draft");
    expect((await c.account.get()).id).toBe(String(accountId));
  });

  it("the inactiveAccount fault flips an active account", async () => {
    h.emu.setFaults({ inactiveAccount: true });
    expect((await failure(h.client().campaigns.create({ name: "x" }))).kind).toBe("account_inactive");
  });

  it("a content-site plugin key → plugin_key_not_allowed on send/schedule/test-send, may still create", async () => {
    const { campaign } = await draftWithContent();
    const pluginKey = h.emu.createApiKey(h.emu.defaultAccountId, { plugin: true });
    const c = h.client({ apiKey: pluginKey });
    for (const p of [
      c.campaigns.send(campaign.id, { force: true }),
      c.campaigns.schedule(campaign.id, { scheduledAt: inAnHour(), force: true }),
      c.campaigns.testSend(campaign.id, ["owner@default-shop.example"]),
    ]) {
      const e = await failure(p);
      expect(e).toMatchObject({ kind: "plugin_key_not_allowed", status: 403 });
      expect(e.message).toMatch(/dashboard or CLI/);
    }
    expect((await c.campaigns.create({ name: "Allowed" })).status).toBe("draft");
    expect(h.emu.sentEmails).toEqual([]);
  });
});
