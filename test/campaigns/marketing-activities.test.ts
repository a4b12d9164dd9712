// Campaigns in Shopify's Marketing section (issue 46, item 5), over real HTTP: a campaign sent or
// scheduled from the app becomes an external marketing activity in the fake Shopify Admin (which
// holds it to Shopify's 2026-04 schema), follows the campaign's state, and a Shopify outage never
// stops a send: the activity is recorded once Shopify answers again.
import { afterAll, beforeAll, expect, it } from "vitest";
import { failMarketingActivities, marketingActivities } from "../../dev/shopify/fake-marketing-activities";
import { pushDueCampaignActivities, refreshCampaignsUnderWay } from "~/campaigns/marketing-activity.server";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";

const ONE = "routes/app.campaigns.$id";
const LIST = "routes/app.campaigns._index";
type Result = { ok: boolean; intent: string; toast?: string; goTo?: string };

describeEachDatabase("campaigns as Shopify marketing activities", (database) => {
  let h: PipelineHarness;
  const shop = `activities-${database}.myshopify.com`;

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    await h.connect(shop);
  });
  afterAll(() => h.close());

  const act = async (path: string, fields: Record<string, string>) => actionData<Result>(await postForm(h.app.url, shop, path, fields));
  const activities = () => marketingActivities(h.app.admin, shop);
  const activityOf = (id: number) => activities().find((a) => a.remoteId === `marketing-sync-campaign-${id}`);
  /** A reviewed draft with content and a subject, ready to go out. */
  const readyDraft = async (name: string) => {
    const created = await act("/app/templates", { intent: "create", name, templateId: "tpl-1" });
    const id = Number(created.goTo!.split("/").at(-1));
    const c = h.emulator.state.campaigns.find((x) => x.id === id)!;
    c.subject = `${name}: news`;
    h.emulator.markReviewed(id);
    return id;
  };
  const openCampaign = async (id: number) => routeData<{ activity: { state: string | null; utmQuery: string } }>(await loadData(h.app.url, shop, `/app/campaigns/${id}`), ONE);

  it("sending a campaign creates an activity with its title, dashboard URL, UTM parameters and status; sent, it is updated", async () => {
    const id = await readyDraft("Spring Sale: 20% off!");
    expect(await act(`/app/campaigns/${id}`, { intent: "send" })).toMatchObject({ ok: true });

    await expect.poll(() => activityOf(id)?.status).toBe("ACTIVE");
    const created = activityOf(id)!;
    expect(created).toMatchObject({
      title: "Spring Sale: 20% off!",
      remoteUrl: `${h.emulator.url}/dashboard/campaigns/${id}`,
      tactic: "NEWSLETTER",
      marketingChannelType: "EMAIL",
      utm: { source: "marketing-sync", medium: "email", campaign: `spring-sale-20-off-${id}` },
      end: null,
    });
    expect(created.start).toBeTruthy();

    // The page tells the merchant the parameters to add (the service cannot set the links' UTM).
    const page = await openCampaign(id);
    expect(page.activity).toMatchObject({ state: "recorded", utmQuery: `utm_source=marketing-sync&utm_medium=email&utm_campaign=spring-sale-20-off-${id}` });

    // The service finishes sending; the campaign's page, read again, brings Shopify up to date.
    h.emulator.advanceCampaign(id, "sent");
    await openCampaign(id);
    await expect.poll(() => activityOf(id)?.status).toBe("INACTIVE");
    expect(activityOf(id)).toMatchObject({ id: created.id, start: created.start, utm: created.utm });
    expect(activityOf(id)!.end).toBeTruthy();
    expect(activities().filter((a) => a.remoteId === created.remoteId)).toHaveLength(1);
  });

  it("scheduling creates a scheduled activity; the service sending it later updates the same activity", async () => {
    const id = await readyDraft("Winter newsletter");
    expect(await act(`/app/campaigns/${id}`, { intent: "schedule", zone: "UTC", scheduledAt: "2030-01-15T09:30" })).toMatchObject({ ok: true });
    await expect.poll(() => activityOf(id)?.status).toBe("SCHEDULED");
    const scheduled = activityOf(id)!;
    expect(scheduled).toMatchObject({ title: "Winter newsletter", scheduledStart: "2030-01-15T09:30:00.000Z", start: "2030-01-15T09:30:00.000Z", end: null });

    // Nobody opens the page: the worker reads the campaigns under way.
    h.emulator.advanceCampaign(id, "sending");
    await refreshCampaignsUnderWay();
    await expect.poll(() => activityOf(id)?.status).toBe("ACTIVE");
    h.emulator.advanceCampaign(id, "sent");
    // ...or the campaigns list shows it.
    await routeData(await loadData(h.app.url, shop, "/app/campaigns?status=all"), LIST);
    await expect.poll(() => activityOf(id)?.status).toBe("INACTIVE");
    expect(activityOf(id)).toMatchObject({ id: scheduled.id, scheduledStart: "2030-01-15T09:30:00.000Z" });
  });

  it("Shopify failing does not stop the send; the activity is recorded once Shopify answers again", async () => {
    const id = await readyDraft("Outage special");
    failMarketingActivities(h.app.admin, true);
    try {
      expect(await act(`/app/campaigns/${id}`, { intent: "send" })).toMatchObject({ ok: true, toast: "Sending to your whole confirmed list" });
      expect(h.emulator.state.campaigns.find((c) => c.id === id)?.status).toBe("preparing");
      const row = () => h.app.db.prisma.campaignActivity.findUnique({ where: { shop_campaignId: { shop, campaignId: String(id) } } });
      await expect.poll(async () => (await row())?.attempts).toBe(1);
      expect(await row()).toMatchObject({ pending: true, status: "ACTIVE" });
      expect((await row())?.lastError).toMatch(/Internal error/);
      expect(activityOf(id)).toBeUndefined();
      expect((await openCampaign(id)).activity.state).toBe("pending");

      // Still failing when the retry comes: still pending, tried again later.
      await h.app.db.prisma.campaignActivity.update({ where: { shop_campaignId: { shop, campaignId: String(id) } }, data: { runAt: new Date(Date.now() - 1000) } });
      await pushDueCampaignActivities();
      expect((await row())?.attempts).toBe(2);

      failMarketingActivities(h.app.admin, false);
      // The backoff over (as time passing would), the worker's retry records it.
      await h.app.db.prisma.campaignActivity.update({ where: { shop_campaignId: { shop, campaignId: String(id) } }, data: { runAt: new Date(Date.now() - 1000) } });
      expect(await pushDueCampaignActivities()).toBeGreaterThanOrEqual(1);
      expect(activityOf(id)).toMatchObject({ status: "ACTIVE", title: "Outage special" });
      expect(await row()).toMatchObject({ pending: false, attempts: 0, lastError: null });
      expect((await openCampaign(id)).activity.state).toBe("recorded");
    } finally {
      failMarketingActivities(h.app.admin, false);
    }
  });

  it("a failed push is retried by the campaign's state refresh too (opening its page)", async () => {
    const id = await readyDraft("Refresh retry");
    failMarketingActivities(h.app.admin, true);
    expect(await act(`/app/campaigns/${id}`, { intent: "send" })).toMatchObject({ ok: true });
    const row = () => h.app.db.prisma.campaignActivity.findUnique({ where: { shop_campaignId: { shop, campaignId: String(id) } } });
    await expect.poll(async () => (await row())?.attempts).toBe(1);
    failMarketingActivities(h.app.admin, false);
    await h.app.db.prisma.campaignActivity.update({ where: { shop_campaignId: { shop, campaignId: String(id) } }, data: { runAt: new Date(Date.now() - 1000) } });
    await openCampaign(id);
    await expect.poll(() => activityOf(id)?.status).toBe("ACTIVE");
  });

  it("a shop that has not accepted write_marketing_events yet: the send goes out, the activity waits and is recorded once the scope is granted", async () => {
    const id = await readyDraft("Before the new scope");
    const granted = h.app.admin.shops.get(shop)!.scopes.split(",");
    h.app.admin.grantScopes(shop, granted.filter((s) => s !== "write_marketing_events"));
    try {
      expect(await act(`/app/campaigns/${id}`, { intent: "send" })).toMatchObject({ ok: true });
      const row = () => h.app.db.prisma.campaignActivity.findUnique({ where: { shop_campaignId: { shop, campaignId: String(id) } } });
      await expect.poll(async () => (await row())?.attempts).toBe(1);
      expect((await row())?.lastError).toMatch(/Access denied.*write_marketing_events/);
      expect(activityOf(id)).toBeUndefined();
    } finally {
      h.app.admin.grantScopes(shop, granted);
    }
    await h.app.db.prisma.campaignActivity.update({ where: { shop_campaignId: { shop, campaignId: String(id) } }, data: { runAt: new Date(Date.now() - 1000) } });
    await pushDueCampaignActivities();
    expect(activityOf(id)).toMatchObject({ status: "ACTIVE", title: "Before the new scope" });
  });

  it("moving a scheduled campaign back to draft deletes its activity", async () => {
    const id = await readyDraft("Not yet");
    expect(await act(`/app/campaigns/${id}`, { intent: "schedule", zone: "UTC", scheduledAt: "2030-02-01T10:00" })).toMatchObject({ ok: true });
    await expect.poll(() => activityOf(id)?.status).toBe("SCHEDULED");
    expect(await act(`/app/campaigns/${id}`, { intent: "unschedule" })).toMatchObject({ ok: true });
    await expect.poll(() => activityOf(id)).toBeUndefined();
    await expect.poll(() => h.app.db.prisma.campaignActivity.count({ where: { shop, campaignId: String(id) } })).toBe(0);
  });
});
