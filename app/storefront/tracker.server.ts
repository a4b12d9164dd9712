import { z } from "zod";
import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import type { WebsiteTracker } from "../services/marketing/schemas";
import { serviceClientFor } from "../shops/connection.server";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { decryptSecret } from "../secrets.server";
import { adminQuery } from "../shopify/admin-api.server";
import { parseSettings } from "../sync/settings";
import { STOREFRONT_POLICY } from "./storefront-policy";
import { pruneRateWindows, pruneStorefrontCarts } from "./rate-limit.server";
import { messageOf } from "../errors";

/**
 * The tracker snippet on the storefront: fetched from the service (GET /api/account/website-tracker
 * /{mode}) and written to the app-data metafield the theme app embed reads. Runs on connect (the
 * admin's connection action), on a tracker-mode change, and daily from the worker
 * (refreshDueTrackers, which also picks up connected shops it has never published). Entry: syncTracker.
 */

/**
 * What the metafield holds (type json); the Liquid block reads `.mode`, `.snippet` and `.appId`.
 * appId: this app's numeric id (of its `gid://shopify/App/<id>`), which the loader hands to
 * Shopify's visitor API as `options.appId` (shopify.dev, Web Pixels API "Emitting data", Visitor API).
 */
export const trackerMetafieldSchema = z.strictObject({
  mode: z.enum(["modern", "legacy", "compat"]),
  snippet: z.string().min(1).max(60_000),
  appId: z.string().regex(/^\d{1,20}$/).optional(),
  syncedAt: z.string(),
});
export type TrackerMetafield = z.infer<typeof trackerMetafieldSchema>;

export class UnsafeSnippet extends Error {}

// One complete <script> element: attributes (quoted values may hold ">"), then its text up to the
// first </script>. Anything else (an unclosed <script>, <style>, <textarea>, <title>, "<!--")
// would swallow the block's </template> and the rest of the page into the inert template.
const SCRIPT_ELEMENT = /\s*<script(?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*>([\s\S]*?)<\/script\s*>\s*/iy;

/** Why the snippet is not only complete <script> elements, or null when it is. */
function notOnlyScripts(snippet: string): string | null {
  SCRIPT_ELEMENT.lastIndex = 0;
  let at = 0;
  while (at < snippet.length) {
    const match = SCRIPT_ELEMENT.exec(snippet);
    if (!match) return `it is not only complete <script> elements (at character ${at}: ${JSON.stringify(snippet.slice(at, at + 40))})`;
    // "<!--" in a script's text can make the parser skip its </script>.
    if (/<!--|<\/script/i.test(match[1])) return `a <script> element's text contains "<!--" or "</script" (at character ${at})`;
    at = SCRIPT_ELEMENT.lastIndex;
  }
  return at === 0 ? "it is empty" : null;
}

/**
 * The metafield value for a snippet. Refused: a snippet that contains the API key (it would
 * reach every visitor), or anything but complete <script> elements (it could close the block's
 * <template> early, or keep it from closing and blank the page).
 */
export function trackerMetafieldValue(tracker: Pick<WebsiteTracker, "mode" | "snippet"> & { appId?: string }, apiKey: string, now = new Date()): TrackerMetafield {
  if (apiKey && tracker.snippet.includes(apiKey)) throw new UnsafeSnippet("the tracker snippet contains the API key: not published");
  if (/<\/template/i.test(tracker.snippet)) throw new UnsafeSnippet("the tracker snippet contains </template>: not published");
  const problem = notOnlyScripts(tracker.snippet);
  if (problem) throw new UnsafeSnippet(`the tracker snippet from the marketing service is refused, ${problem}: not published`);
  return trackerMetafieldSchema.parse({ mode: tracker.mode, snippet: tracker.snippet.trim(), appId: tracker.appId, syncedAt: now.toISOString() });
}

const INSTALLATION_QUERY = `#graphql
  query MarketingSyncInstallation { currentAppInstallation { id app { id } } }`;
const installationSchema = z.object({
  currentAppInstallation: z.object({ id: z.string().min(1), app: z.object({ id: z.string().min(1) }).nullish() }),
});

/** `gid://shopify/App/1234` → `1234`, the form Shopify's visitor API example passes as appId. */
const numericAppId = (gid: string | undefined): string | undefined => /^gid:\/\/shopify\/App\/(\d{1,20})$/.exec(gid ?? "")?.[1];

const METAFIELDS_SET = `#graphql
  mutation MarketingSyncTracker($metafields: [MetafieldsSetInput!]!) {
    metafieldsSet(metafields: $metafields) { metafields { id } userErrors { field message } }
  }`;
const metafieldsSetSchema = z.object({
  metafieldsSet: z.object({
    metafields: z.array(z.object({ id: z.string() })).nullish(),
    userErrors: z.array(z.object({ message: z.string() })),
  }),
});

const METAFIELDS_DELETE = `#graphql
  mutation MarketingSyncTrackerDelete($metafields: [MetafieldIdentifierInput!]!) {
    metafieldsDelete(metafields: $metafields) { userErrors { field message } }
  }`;
const metafieldsDeleteSchema = z.object({
  metafieldsDelete: z.object({ userErrors: z.array(z.object({ message: z.string() })) }),
});

const WEB_PIXEL_CREATE = `#graphql
  mutation MarketingSyncWebPixel($settings: JSON!) {
    webPixelCreate(webPixel: { settings: $settings }) { webPixel { id } userErrors { code field message } }
  }`;
const webPixelCreateSchema = z.object({
  webPixelCreate: z.object({
    webPixel: z.object({ id: z.string() }).nullish(),
    userErrors: z.array(z.object({ code: z.string().nullish(), message: z.string() })),
  }),
});

const ADMIN_WAIT = { maxWaitMs: STOREFRONT_POLICY.adminWaitMs };

/** The web pixel extension runs on a shop only once the app has created it there; TAKEN: it has. */
async function ensureWebPixel(shop: string): Promise<void> {
  const answer = webPixelCreateSchema.parse(await adminQuery(shop, WEB_PIXEL_CREATE, { settings: JSON.stringify({ proxyPath: STOREFRONT_POLICY.appProxyPath }) }, ADMIN_WAIT));
  const errors = answer.webPixelCreate.userErrors.filter((e) => e.code !== "TAKEN");
  if (errors.length) throw new Error(`webPixelCreate: ${errors.map((e) => e.message).join("; ")}`);
}

export type TrackerSyncResult =
  | { status: "synced"; mode: TrackerMetafield["mode"]; lastEventTrackedAt: number | null }
  | { status: "skipped"; reason: "not_connected" }
  | { status: "failed"; error: string };

/**
 * Fetches the snippet for the shop's tracker mode and writes it to the metafield. Never throws:
 * a failure is recorded (the admin shows it) and retried by the worker later.
 */
export async function syncTracker(shop: string): Promise<TrackerSyncResult> {
  try {
    const row = await prisma().shop.findUnique({ where: { domain: shop }, select: { settings: true, serviceKeyEnc: true } });
    const client = await serviceClientFor(shop);
    if (!client || !row?.serviceKeyEnc) return { status: "skipped", reason: "not_connected" };
    // The Admin API first: without an offline session (never installed) the service is not asked.
    const installation = installationSchema.parse(await adminQuery(shop, INSTALLATION_QUERY, {}, ADMIN_WAIT));
    const mode = parseSettings(row.settings ?? {}).trackerMode;
    const tracker = await client.websiteTracker(mode);
    const appId = numericAppId(installation.currentAppInstallation.app?.id);
    const value = trackerMetafieldValue({ mode, snippet: tracker.snippet, appId }, decryptSecret(row.serviceKeyEnc, shop));
    const metafield = {
      ownerId: installation.currentAppInstallation.id,
      namespace: STOREFRONT_POLICY.metafieldNamespace,
      key: STOREFRONT_POLICY.metafieldKey,
      type: "json",
      value: JSON.stringify(value),
    };
    const answer = metafieldsSetSchema.parse(await adminQuery(shop, METAFIELDS_SET, { metafields: [metafield] }, ADMIN_WAIT));
    const errors = answer.metafieldsSet.userErrors;
    if (errors.length) throw new Error(`metafieldsSet: ${errors.map((e) => e.message).join("; ")}`);
    await ensureWebPixel(shop);
    await recordSync(shop, { mode, error: null, nextInMs: STOREFRONT_POLICY.trackerRefreshMs });
    logger().info({ shop, mode }, "tracker snippet published to the storefront");
    return { status: "synced", mode, lastEventTrackedAt: tracker.lastEventTrackedAt };
  } catch (error) {
    const message = messageOf(error);
    await recordSync(shop, { mode: null, error: message.slice(0, 500), nextInMs: STOREFRONT_POLICY.trackerRetryMs }).catch(() => {});
    logger().warn({ shop, err: message }, "tracker snippet not published; will retry");
    return { status: "failed", error: message };
  }
}

export type TrackerRemoval = { status: "removed" } | { status: "pending"; error: string };

/**
 * On disconnect: the storefront stops loading the old account's tracker. Never throws: until
 * Shopify confirms the removal it stays pending, and the worker retries it (refreshDueTrackers).
 */
export async function removeTracker(shop: string): Promise<TrackerRemoval> {
  // Recorded first, so a crash mid-call still leaves the removal to the worker.
  await prisma().storefrontState.upsert({ where: { shop }, create: { shop, removalPending: true }, update: { removalPending: true } });
  try {
    const installation = installationSchema.parse(await adminQuery(shop, INSTALLATION_QUERY, {}, ADMIN_WAIT));
    const metafield = { ownerId: installation.currentAppInstallation.id, namespace: STOREFRONT_POLICY.metafieldNamespace, key: STOREFRONT_POLICY.metafieldKey };
    const answer = metafieldsDeleteSchema.parse(await adminQuery(shop, METAFIELDS_DELETE, { metafields: [metafield] }, ADMIN_WAIT));
    const errors = answer.metafieldsDelete.userErrors;
    if (errors.length) throw new Error(`metafieldsDelete: ${errors.map((e) => e.message).join("; ")}`);
    await prisma().storefrontState.update({
      where: { shop },
      data: { removalPending: false, trackerMode: null, trackerSyncedAt: null, trackerSyncError: null, lockedBy: null, lockedUntil: null },
    });
    logger().info({ shop }, "tracker snippet removed from the storefront");
    return { status: "removed" };
  } catch (error) {
    const message = messageOf(error);
    const next = new Date(Date.now() + STOREFRONT_POLICY.trackerRetryMs);
    await prisma()
      .storefrontState.update({ where: { shop }, data: { trackerSyncError: message.slice(0, 500), nextSyncAt: next, lockedBy: null, lockedUntil: null } })
      .catch(() => {});
    logger().warn({ shop, err: message }, "tracker snippet not removed; will retry");
    return { status: "pending", error: message };
  }
}

async function recordSync(shop: string, r: { mode: string | null; error: string | null; nextInMs: number }): Promise<void> {
  const next = new Date(Date.now() + r.nextInMs);
  // A publish for the connected account overwrites the old one: nothing is left to remove.
  const synced = r.error === null ? { trackerMode: r.mode, trackerSyncedAt: new Date(), removalPending: false } : {};
  await prisma().storefrontState.upsert({
    where: { shop },
    create: { shop, ...synced, trackerSyncError: r.error, nextSyncAt: next },
    update: { ...synced, trackerSyncError: r.error, nextSyncAt: next, lockedBy: null, lockedUntil: null },
  });
}

/**
 * The worker's daily refresh: claims at most one shop whose refresh is due (FOR UPDATE SKIP LOCKED
 * with a lease, so many workers on one PostgreSQL never refresh a shop twice): a connected shop is
 * republished; a disconnected one whose tracker removal failed is retried. Returns the number
 * handled (0 or 1). (An uninstalled shop is left: Shopify drops the app's metafields itself.)
 */
export async function refreshDueTrackers(workerId: string): Promise<number> {
  // Connected shops the storefront does not know yet (connected before it existed, or outside the
  // admin) are enrolled, due at once.
  await database().sql.query(
    `INSERT INTO "StorefrontState" (shop, "nextSyncAt", "updatedAt")
     SELECT s.domain, now(), now() FROM "Shop" s
      WHERE ${canReceiveDeliveriesSql("s")} AND NOT EXISTS (SELECT 1 FROM "StorefrontState" t WHERE t.shop = s.domain)
     ON CONFLICT (shop) DO NOTHING`,
  );
  const [claimed] = await database().sql.query<{ shop: string; removalPending: boolean }>(
    `UPDATE "StorefrontState" SET "lockedBy" = $1, "lockedUntil" = now() + ($2::int * interval '1 millisecond')
      WHERE shop = (
        SELECT t.shop FROM "StorefrontState" t JOIN "Shop" s ON s.domain = t.shop
         WHERE t."nextSyncAt" <= now() AND (t."lockedUntil" IS NULL OR t."lockedUntil" < now())
           AND ((${canReceiveDeliveriesSql("s")}) OR (t."removalPending" AND s."uninstalledAt" IS NULL))
         ORDER BY t."nextSyncAt" LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
      RETURNING shop, "removalPending"`,
    [workerId, STOREFRONT_POLICY.trackerLeaseMs],
  );
  if (!claimed) return 0;
  // Reconnected since: publishing the new account's tracker replaces the old one.
  if (claimed.removalPending && !(await serviceClientFor(claimed.shop))) await removeTracker(claimed.shop);
  else await syncTracker(claimed.shop);
  return 1;
}

/** The tracker's state for the admin: what is published, and when the tracker last saw an event. */
export async function trackerStatus(shop: string) {
  const state = await prisma().storefrontState.findUnique({ where: { shop } });
  let lastEventTrackedAt: number | null = null;
  let serviceError: string | null = null;
  const client = await serviceClientFor(shop);
  if (client) {
    try {
      lastEventTrackedAt = (await client.websiteTracker(state?.trackerMode === "legacy" || state?.trackerMode === "compat" ? state.trackerMode : "modern")).lastEventTrackedAt;
    } catch (error) {
      serviceError = messageOf(error);
    }
  }
  return {
    publishedMode: state?.trackerMode ?? null,
    publishedAt: state?.trackerSyncedAt?.toISOString() ?? null,
    syncError: state?.trackerSyncError ?? null,
    lastEventTrackedAt: lastEventTrackedAt === null ? null : new Date(lastEventTrackedAt * 1000).toISOString(),
    serviceError,
  };
}

let lastCheck = 0;
let lastPrune = 0;

/**
 * The worker's storefront step: the due tracker refresh (looked for at most once a minute per
 * process) and the hourly drop of ended rate-limit windows. Never throws.
 */
export async function storefrontStep(workerId: string): Promise<number> {
  const now = Date.now();
  if (now - lastCheck < 60_000) return 0;
  lastCheck = now;
  try {
    if (now - lastPrune > 3_600_000) {
      lastPrune = now;
      await pruneRateWindows();
      await pruneStorefrontCarts();
    }
    return await refreshDueTrackers(workerId);
  } catch (error) {
    logger().warn({ err: messageOf(error) }, "storefront step failed");
    return 0;
  }
}
