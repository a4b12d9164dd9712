/**
 * Where a delivery came from (WebhookDelivery.source), one line each, beside the topic registry
 * (topics.server.ts). Only "webhook" is news Shopify sent; the others are the app's own imports.
 *
 * - background: its calls wait behind the shop's live calls (OutboundCall.background);
 * - silent: its events go out with `silent: true` (stored without starting automations);
 * - lookup: an object it needs that the app never saw is read from Shopify before it is planned
 *   (app/backfill/lookup.server.ts).
 */
interface SourceFacts {
  background: boolean;
  silent: boolean;
  lookup: boolean;
}

export const DELIVERY_SOURCES = {
  webhook: { background: false, silent: false, lookup: true },
  backfill: { background: true, silent: true, lookup: false },
  // Fetched for a live webhook, whose calls follow it at once.
  lookup: { background: false, silent: true, lookup: false },
  reconcile: { background: true, silent: true, lookup: false },
  // An imported segment member the app never saw is read too, as for a live join.
  "segment-import": { background: true, silent: true, lookup: true },
} as const satisfies Record<string, SourceFacts>;

export type DeliverySource = keyof typeof DELIVERY_SOURCES;

/** A source as an SQL literal, for statements that name one: the compiler checks the name. */
export const sourceSql = (source: DeliverySource): string => `'${source}'`;

const withFlag = (flag: keyof SourceFacts): ReadonlySet<string> =>
  new Set((Object.keys(DELIVERY_SOURCES) as DeliverySource[]).filter((s) => DELIVERY_SOURCES[s][flag]));

/** Sources whose calls wait behind the shop's live calls (history imports). */
export const BACKGROUND_SOURCES = withFlag("background");
/** Sources Shopify did not send as news: their events go out silent. */
export const SILENT_SOURCES = withFlag("silent");
/** Sources whose deliveries may look up an object the app never saw. */
export const LOOKUP_SOURCES = withFlag("lookup");
