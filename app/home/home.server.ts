/**
 * What the home page (Sync health) adds to the sync's own numbers, to answer "is it working, and
 * what did it do": the tracker embed in the live theme (read from Shopify, the Storefront page's
 * one source), the last campaigns, the contacts the service holds (or that they could not be read),
 * contacts synced both ways and the subscribers gained. Every part is read from what happened:
 * the service's own totals, what the app recorded as delivered, what it wrote back to Shopify.
 */
import { consentReturnStatus } from "../consent-return/consent-return.server";
import { database, prisma } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { consentCounts, type ConsentCounts } from "../people/people.server";
import { CALL_STATUS } from "../pipeline/status";
import type { MarketingClient } from "../services/marketing/client.server";
import { liveThemeEmbed, type EmbedView } from "../storefront/onboarding.server";
import { trackerOnStorefront, type TrackerOnStorefront } from "../storefront/tracker-state";
import { noService, serviceAccess } from "../admin/service-access.server";

/** The last campaigns the home page lists. */
export const HOME_CAMPAIGNS = 3;
/** "Subscribers gained" counts this many days back. */
export const GAINED_DAYS = 30;

/** A number the page could not read is said where it would be, never left out. */
export type Readable<T> = { read: true; value: T } | { read: false; reason: string };

export interface HomeCampaign {
  id: string;
  name: string;
  status: string;
  /** sent, scheduled or created, whichever the campaign last reached (ISO) */
  at: string | null;
  atLabel: "Sent" | "Scheduled for" | "Created";
}

export interface BothWays {
  /** Shopify → service: customers the service holds as contacts from this store, each call delivered */
  contactsSynced: number;
  /** customers whose contact call is still on its way (queued or being retried) */
  contactsWaiting: number;
  /** service → Shopify: unsubscribes and blocks the app wrote to Shopify's email consent */
  consentReturned: number;
  lastReturnSweepAt: string | null;
  /** customers who subscribed at Shopify in the last `gainedDays` days and are contacts at the service */
  gained: number;
  gainedDays: number;
}

export interface HomeOverview {
  connected: boolean;
  embed: EmbedView;
  tracker: TrackerOnStorefront;
  /** null: not connected */
  contacts: Readable<ConsentCounts> | null;
  campaigns: Readable<HomeCampaign[]> | null;
  bothWays: BothWays;
}

const NOT_READ = "Your marketing account did not answer just now; this number could not be read. It is read again when the page refreshes.";

export async function homeOverview(shop: string, now = new Date()): Promise<HomeOverview> {
  const access = await serviceAccess(shop);
  const connected = !noService(access);
  const [embed, published, contacts, campaigns, bothWays] = await Promise.all([
    liveThemeEmbed(shop),
    prisma().storefrontState.findUnique({ where: { shop }, select: { trackerSyncedAt: true } }),
    noService(access) ? null : readable(shop, "contact counts", () => consentCounts(access.client)),
    noService(access) ? null : readable(shop, "last campaigns", () => lastCampaigns(access.client)),
    bothWaysCounts(shop, now),
  ]);
  return { connected, embed, tracker: trackerOnStorefront(embed.state, published?.trackerSyncedAt?.toISOString() ?? null), contacts, campaigns, bothWays };
}

async function readable<T>(shop: string, what: string, read: () => Promise<T>): Promise<Readable<T>> {
  try {
    return { read: true, value: await read() };
  } catch (error) {
    logger().info({ shop, err: messageOf(error) }, `${what} not readable`);
    return { read: false, reason: NOT_READ };
  }
}

/** The newest campaigns, whatever their state (§4.2: status `all`, sorted by creation, newest first). */
async function lastCampaigns(client: MarketingClient): Promise<HomeCampaign[]> {
  const page = await client.campaigns.list({ status: "all", page: 1, perPage: HOME_CAMPAIGNS, sort: "createdAt", order: "desc" });
  return page.data.map((c) => {
    if (c.sentAt) return { id: c.id, name: c.name, status: c.status, at: c.sentAt, atLabel: "Sent" as const };
    if (c.scheduledAt && c.status === "scheduled") return { id: c.id, name: c.name, status: c.status, at: c.scheduledAt, atLabel: "Scheduled for" as const };
    return { id: c.id, name: c.name, status: c.status, at: c.createdAt ?? null, atLabel: "Created" as const };
  });
}

/**
 * Both ways, from the app's own records (ObjectState per customer, its calls): a customer counts as
 * a contact once the app planned a contact for it and none of its calls is waiting or could not be
 * delivered; a consent returned is one the app wrote to Shopify (the consent memory's `returnedAt`,
 * app/consent-return). One pass over the shop's customers (the (shop, objectKey) key's range).
 */
async function bothWaysCounts(shop: string, now: Date): Promise<BothWays> {
  const since = new Date(now.getTime() - GAINED_DAYS * 86_400_000).toISOString();
  const [[row], sweep] = await Promise.all([
    database().sql.query<{ synced: number; waiting: number; returned: number; gained: number }>(
      `WITH c AS (
         SELECT o."objectKey", o.state,
                EXISTS (SELECT 1 FROM "OutboundCall" k WHERE k.shop = o.shop AND k."objectKey" = o."objectKey"
                          AND k.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}', '${CALL_STATUS.dead}')) AS pending
           FROM "ObjectState" o
          WHERE o.shop = $1 AND o."objectKey" LIKE 'customer:%' AND coalesce((o.state->>'deleted')::boolean, false) = false
       )
       SELECT count(*) FILTER (WHERE (state->'consent'->>'contact')::boolean AND NOT pending)::int AS synced,
              count(*) FILTER (WHERE (state->'consent'->>'contact')::boolean AND pending)::int AS waiting,
              count(*) FILTER (WHERE state->'consent'->>'returnedAt' IS NOT NULL)::int AS returned,
              count(*) FILTER (WHERE (state->'consent'->>'contact')::boolean AND NOT pending AND state->'consent'->>'state' = 'subscribed'
                                 AND CASE WHEN state->'consent'->>'at' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' THEN (state->'consent'->>'at')::timestamptz END >= $2::timestamptz)::int AS gained
         FROM c`,
      [shop, since],
    ),
    consentReturnStatus(shop),
  ]);
  return {
    contactsSynced: row?.synced ?? 0,
    contactsWaiting: row?.waiting ?? 0,
    consentReturned: row?.returned ?? 0,
    lastReturnSweepAt: sweep?.lastSweepAt ? new Date(sweep.lastSweepAt).toISOString() : null,
    gained: row?.gained ?? 0,
    gainedDays: GAINED_DAYS,
  };
}
