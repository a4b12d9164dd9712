/**
 * Campaigns sent or scheduled from the app as Shopify external marketing activities, so merchants
 * see them in Shopify's Marketing section beside their other marketing and Shopify attributes
 * sessions and orders to them by their UTM parameters (shopify.dev "Marketing activities",
 * Admin 2026-04: marketingActivityUpsertExternal, marketingActivityDeleteExternal; scope
 * write_marketing_events).
 *
 * The `CampaignActivity` row says what Shopify should show; it is written first and pushed after,
 * so a send never waits on or fails with Shopify. A push that fails leaves the row pending and is
 * retried with backoff by the worker (campaignActivityStep) and whenever the merchant opens the
 * campaigns list or a campaign. Upsert by remoteId makes a retry, or two workers pushing the same
 * row, idempotent. The service tells the caller nothing (spec §6), so the worker also reads the
 * campaigns still under way (scheduled, preparing, sending, paused) to see them sent or failed.
 */
import { z } from "zod";
import { prisma } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { adminQuery } from "../shopify/admin-api.server";
import { handOffUrl } from "../admin/service-errors";
import { noService, serviceAccess } from "../admin/service-access.server";
import type { Campaign } from "../services/marketing/schemas";

/** The UTM parameters of every campaign's store links; utm_campaign is per campaign (utmCampaignFor). */
export const UTM_SOURCE = "marketing-sync";
export const UTM_MEDIUM = "email";

/** Shopify's status once the activity is to be deleted (not a MarketingActivityExternalStatus). */
const DELETED = "DELETED";
/** Campaigns whose state the service may still change on its own. */
const UNDER_WAY = ["scheduled", "preparing", "sending", "paused"];
const STEP_EVERY_MS = 30_000;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_CAP_MS = 3_600_000;
/** A claimed row is left alone by other workers this long (a push has its own timeouts, far shorter). */
const LEASE_MS = 120_000;
const BATCH = 20;

// 10 points (a mutation). Upsert: absent optional fields are removed from the activity, so every
// push sends the whole activity as the row has it.
const UPSERT = `#graphql
  mutation CampaignActivityUpsert($input: MarketingActivityUpsertExternalInput!) {
    marketingActivityUpsertExternal(input: $input) {
      marketingActivity { id }
      userErrors { field message code }
    }
  }`;

const DELETE = `#graphql
  mutation CampaignActivityDelete($remoteId: String!) {
    marketingActivityDeleteExternal(remoteId: $remoteId) {
      deletedMarketingActivityId
      userErrors { field message code }
    }
  }`;

const userErrors = z.array(z.object({ field: z.array(z.string()).nullish(), message: z.string(), code: z.string().nullish() }));
const upsertAnswer = z.object({ marketingActivityUpsertExternal: z.object({ marketingActivity: z.object({ id: z.string() }).nullish(), userErrors }) });
const deleteAnswer = z.object({ marketingActivityDeleteExternal: z.object({ deletedMarketingActivityId: z.string().nullish(), userErrors }) });

/** The activity's remoteId: one per campaign of the shop. */
export const remoteIdOf = (campaignId: string) => `marketing-sync-campaign-${campaignId}`;

/**
 * utm_campaign for a campaign: its name as a slug, with its id so that two campaigns of one name
 * never share it (Shopify refuses a second activity with the same campaign, medium and source).
 */
export function utmCampaignFor(name: string, campaignId: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug ? `${slug}-${campaignId}` : `campaign-${campaignId}`;
}

/** The query string a merchant adds to the store links of a campaign. */
export const utmQuery = (utmCampaign: string) => `utm_source=${UTM_SOURCE}&utm_medium=${UTM_MEDIUM}&utm_campaign=${encodeURIComponent(utmCampaign)}`;

/**
 * The service's campaign status as Shopify's MarketingActivityExternalStatus. Shopify has no
 * "failed": a failed campaign no longer runs, so INACTIVE (completed running).
 */
export function shopifyStatusOf(serviceStatus: string): string {
  switch (serviceStatus) {
    case "scheduled":
      return "SCHEDULED";
    case "preparing":
    case "sending":
      return "ACTIVE";
    case "paused":
      return "PAUSED";
    case "sent":
    case "failed":
      return "INACTIVE";
    default:
      return "UNDEFINED";
  }
}

type Row = NonNullable<Awaited<ReturnType<ReturnType<typeof prisma>["campaignActivity"]["findUnique"]>>>;

const validDate = (iso: string | null | undefined) => (iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso) : null);

/** What the row should hold for the campaign as the service shows it now. */
function wanted(campaign: Pick<Campaign, "id" | "name" | "status" | "scheduledAt" | "sentAt" | "links">, baseUrl: string, before: Row | null, now: Date) {
  const status = shopifyStatusOf(campaign.status);
  const running = ["preparing", "sending", "sent", "failed"].includes(campaign.status);
  const ended = ["sent", "failed"].includes(campaign.status);
  const scheduledStart = validDate(campaign.scheduledAt) ?? before?.scheduledStart ?? null;
  return {
    title: campaign.name.slice(0, 255) || `Campaign ${campaign.id}`,
    remoteUrl: handOffUrl(campaign.links?.campaignUrl, baseUrl) ?? before?.remoteUrl ?? baseUrl,
    serviceStatus: campaign.status,
    status,
    scheduledStart,
    // Shopify takes an absent start as "now" on creation: a scheduled campaign starts when it is due.
    start: running ? (before?.start ?? now) : campaign.status === "scheduled" ? scheduledStart : null,
    end: ended ? (validDate(campaign.sentAt) ?? before?.end ?? now) : null,
  };
}

const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * A campaign the merchant sent or scheduled (`create`), or one the app read again (a page, the
 * worker: only campaigns already recorded). Marks the row pending when Shopify's view changes and
 * pushes it without waiting: the caller never fails because of Shopify.
 */
export async function noteCampaign(shop: string, campaign: Pick<Campaign, "id" | "name" | "status" | "scheduledAt" | "sentAt" | "links">, baseUrl: string, options: { create?: boolean } = {}): Promise<void> {
  try {
    const db = prisma();
    const key = { shop_campaignId: { shop, campaignId: String(campaign.id) } };
    const before = await db.campaignActivity.findUnique({ where: key });
    if (!before && !options.create) return;
    if (before?.status === DELETED) return;
    const next = wanted(campaign, baseUrl, before, new Date());
    const changed =
      !before ||
      before.title !== next.title ||
      before.remoteUrl !== next.remoteUrl ||
      before.status !== next.status ||
      before.serviceStatus !== next.serviceStatus ||
      !sameTime(before.scheduledStart, next.scheduledStart) ||
      !sameTime(before.start, next.start) ||
      !sameTime(before.end, next.end);
    if (!changed) {
      // The state refresh doubles as a retry of a push that failed, once its backoff is over.
      if (before?.pending && before.runAt.getTime() <= Date.now()) void pushCampaignActivity(shop, before.campaignId);
      return;
    }
    await db.campaignActivity.upsert({
      where: key,
      create: { shop, campaignId: String(campaign.id), utmCampaign: utmCampaignFor(campaign.name, String(campaign.id)), ...next, pending: true, runAt: new Date() },
      update: { ...next, pending: true, attempts: 0, runAt: new Date() },
    });
    void pushCampaignActivity(shop, String(campaign.id));
  } catch (error) {
    logger().warn({ shop, campaign: String(campaign.id), err: messageOf(error) }, "campaign activity not noted");
  }
}

/** A page of campaigns read from the service: those recorded in Shopify, noted (one query for the rest). */
export async function noteCampaigns(shop: string, campaigns: Pick<Campaign, "id" | "name" | "status" | "scheduledAt" | "sentAt" | "links">[], baseUrl: string): Promise<void> {
  if (!campaigns.length) return;
  try {
    const recorded = await prisma().campaignActivity.findMany({ where: { shop, campaignId: { in: campaigns.map((c) => String(c.id)) } }, select: { campaignId: true } });
    const ids = new Set(recorded.map((r) => r.campaignId));
    for (const c of campaigns) if (ids.has(String(c.id))) await noteCampaign(shop, c, baseUrl);
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "campaign activities not refreshed");
  }
}

/** The campaign left (unscheduled into a draft copy, deleted): its activity is deleted in Shopify. */
export async function forgetCampaign(shop: string, campaignId: string): Promise<void> {
  try {
    const { count } = await prisma().campaignActivity.updateMany({ where: { shop, campaignId }, data: { status: DELETED, pending: true, attempts: 0, runAt: new Date() } });
    if (count) void pushCampaignActivity(shop, campaignId);
  } catch (error) {
    logger().warn({ shop, campaign: campaignId, err: messageOf(error) }, "campaign activity not marked for deletion");
  }
}

/** Takes pending rows (one campaign's, or the due ones) for LEASE_MS; installed shops only. */
async function claim(where: { shop: string; campaignId: string } | null): Promise<Row[]> {
  const params: unknown[] = [LEASE_MS];
  const filter = where ? `a.shop = $2 AND a."campaignId" = $3` : `a."runAt" <= now()`;
  if (where) params.push(where.shop, where.campaignId);
  const rows = await prisma().$queryRawUnsafe<{ shop: string; campaignId: string }[]>(
    `UPDATE "CampaignActivity" c SET "runAt" = now() + ($1::int * interval '1 millisecond')
       FROM (SELECT a.shop, a."campaignId" FROM "CampaignActivity" a JOIN "Shop" s ON s.domain = a.shop
              WHERE a.pending AND s."uninstalledAt" IS NULL AND ${filter}
              ORDER BY a."runAt" LIMIT ${BATCH} FOR UPDATE OF a SKIP LOCKED) q
      WHERE c.shop = q.shop AND c."campaignId" = q."campaignId"
      RETURNING c.shop, c."campaignId"`,
    ...params,
  );
  if (!rows.length) return [];
  return prisma().campaignActivity.findMany({ where: { OR: rows.map((r) => ({ shop: r.shop, campaignId: r.campaignId })) } });
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** Shopify's answer to one row; throws on anything but success. */
async function push(row: Row): Promise<string | null> {
  // A push waits for Shopify's budget a little, never long: it is retried anyway.
  const options = { maxWaitMs: 5_000 };
  if (row.status === DELETED) {
    const data = deleteAnswer.parse(await adminQuery(row.shop, DELETE, { remoteId: remoteIdOf(row.campaignId) }, options)).marketingActivityDeleteExternal;
    // Never recorded, or already gone: nothing left to delete.
    const problems = data.userErrors.filter((e) => !["MARKETING_ACTIVITY_DOES_NOT_EXIST", "INVALID_REMOTE_ID"].includes(e.code ?? ""));
    if (problems.length) throw new Error(`Shopify refused to delete the activity: ${problems.map((e) => `${e.code ?? ""} ${e.message}`).join("; ")}`);
    return null;
  }
  const input = {
    remoteId: remoteIdOf(row.campaignId),
    title: row.title,
    remoteUrl: row.remoteUrl,
    status: row.status,
    tactic: "NEWSLETTER",
    marketingChannelType: "EMAIL",
    utm: { source: UTM_SOURCE, medium: UTM_MEDIUM, campaign: row.utmCampaign },
    scheduledStart: iso(row.scheduledStart),
    start: iso(row.start),
    end: iso(row.end),
  };
  const data = upsertAnswer.parse(await adminQuery(row.shop, UPSERT, { input }, options)).marketingActivityUpsertExternal;
  if (data.userErrors.length || !data.marketingActivity) {
    throw new Error(`Shopify refused the activity: ${data.userErrors.map((e) => `${e.code ?? ""} ${e.field?.join(".") ?? ""} ${e.message}`).join("; ") || "no activity returned"}`);
  }
  return data.marketingActivity.id;
}

async function pushRow(row: Row): Promise<void> {
  const db = prisma();
  const unchanged = { shop: row.shop, campaignId: row.campaignId, updatedAt: row.updatedAt };
  try {
    const id = await push(row);
    // Changed meanwhile (a newer state): stays pending for the next push.
    if (row.status === DELETED) await db.campaignActivity.deleteMany({ where: unchanged });
    else await db.campaignActivity.updateMany({ where: unchanged, data: { pending: false, attempts: 0, lastError: null, activityId: id, syncedAt: new Date() } });
    await db.campaignActivity.updateMany({ where: { shop: row.shop, campaignId: row.campaignId, pending: true, updatedAt: { not: row.updatedAt } }, data: { runAt: new Date() } });
  } catch (error) {
    const attempts = row.attempts + 1;
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempts - 1, 10));
    // Our own messages and Shopify's: no token or key is in them.
    const message = messageOf(error).slice(0, 500);
    logger().warn({ shop: row.shop, campaign: row.campaignId, attempt: attempts, err: message }, "campaign activity not recorded in Shopify; will retry");
    await db.campaignActivity.updateMany({ where: { shop: row.shop, campaignId: row.campaignId }, data: { attempts, lastError: message, runAt: new Date(Date.now() + delay) } });
  }
}

// One push per campaign at a time in this process: a newer state never overtakes an older one on
// its way to Shopify (the next push of a row changed meanwhile waits for the one in flight).
const inFlight = new Map<string, Promise<void>>();

/** Pushes one campaign's pending activity now, whatever its backoff (the merchant just acted). */
export function pushCampaignActivity(shop: string, campaignId: string): Promise<void> {
  const key = `${shop}\n${campaignId}`;
  const run = (inFlight.get(key) ?? Promise.resolve()).then(async () => {
    try {
      for (const row of await claim({ shop, campaignId })) await pushRow(row);
    } catch (error) {
      logger().warn({ shop, campaign: campaignId, err: messageOf(error) }, "campaign activity push failed");
    }
  });
  inFlight.set(key, run);
  void run.finally(() => {
    if (inFlight.get(key) === run) inFlight.delete(key);
  });
  return run;
}

/** The due pending activities of every installed shop (retries). Returns how many were pushed. */
export async function pushDueCampaignActivities(): Promise<number> {
  const rows = await claim(null);
  for (const row of rows) await pushRow(row);
  return rows.length;
}

// Where the last read of campaigns under way stopped: each step reads the next BATCH, round the
// table, so every campaign is read in turn however many there are.
let underWayCursor: { shop: string; campaignId: string } | null = null;

/** Campaigns still under way, read again at the service: sent, failed or paused meanwhile. */
export async function refreshCampaignsUnderWay(): Promise<number> {
  const where = { serviceStatus: { in: UNDER_WAY }, status: { not: DELETED } };
  const after = underWayCursor
    ? { OR: [{ shop: { gt: underWayCursor.shop } }, { shop: underWayCursor.shop, campaignId: { gt: underWayCursor.campaignId } }] }
    : {};
  const page = (extra: object) =>
    prisma().campaignActivity.findMany({ where: { ...where, ...extra }, orderBy: [{ shop: "asc" }, { campaignId: "asc" }], take: BATCH });
  let rows = await page(after);
  if (!rows.length && underWayCursor) rows = await page({});
  const last = rows.at(-1);
  underWayCursor = last ? { shop: last.shop, campaignId: last.campaignId } : null;
  let read = 0;
  for (const row of rows) {
    const access = await serviceAccess(row.shop);
    if (noService(access)) continue;
    try {
      const campaign = await access.client.campaigns.get(row.campaignId);
      read++;
      await noteCampaign(row.shop, campaign, access.baseUrl);
    } catch (error) {
      const gone = (error as { kind?: string }).kind === "campaign_not_found";
      if (gone) await forgetCampaign(row.shop, row.campaignId);
      else logger().info({ shop: row.shop, campaign: row.campaignId, err: messageOf(error) }, "campaign state not read; read again later");
    }
  }
  return read;
}

let lastStep = 0;

/** The worker's share: every STEP_EVERY_MS, retries due pushes and reads campaigns under way. */
export async function campaignActivityStep(): Promise<number> {
  const now = Date.now();
  if (now - lastStep < STEP_EVERY_MS) return 0;
  lastStep = now;
  try {
    return (await pushDueCampaignActivities()) + (await refreshCampaignsUnderWay());
  } catch (error) {
    logger().warn({ err: messageOf(error) }, "campaign activity step failed");
    return 0;
  }
}

/** What the campaign page says about the campaign's place in Shopify's Marketing section. */
export interface ActivityView {
  utmCampaign: string;
  utmQuery: string;
  /** null: never sent or scheduled from the app */
  state: "recorded" | "pending" | null;
}

export async function activityView(shop: string, campaign: Pick<Campaign, "id" | "name">): Promise<ActivityView> {
  const row = await prisma().campaignActivity.findUnique({ where: { shop_campaignId: { shop, campaignId: String(campaign.id) } } });
  const utmCampaign = row?.utmCampaign ?? utmCampaignFor(campaign.name, String(campaign.id));
  return { utmCampaign, utmQuery: utmQuery(utmCampaign), state: !row || row.status === DELETED ? null : row.pending ? "pending" : "recorded" };
}
