/**
 * What became of a picked segment's current members (the member import's deliveries, source
 * "segment-import"): tagged means the service confirmed the tag (every call of the member's
 * delivery delivered, or nothing to send because the contact already had it); a member the plan
 * skipped is counted with the reason in the merchant's words ("not subscribed"). Read from the
 * deliveries and their calls, so Settings shows what the service confirmed, not what was queued.
 */
import { database } from "../db.server";
import { CALL_STATUS, DELIVERY_OUTCOME, DELIVERY_STATUS } from "../pipeline/status";
import { gidNumber } from "../sync/payloads";
import { SEGMENT_IMPORT_SOURCE } from "./member-import.server";

export interface ImportOutcome {
  /** the service confirmed the tag */
  tagged: number;
  /** read from Shopify, not yet planned or sent (or being retried) */
  waiting: number;
  /** could not be delivered (on Problems) or refused by the service */
  failed: number;
  /** not tagged, per reason in the merchant's words, largest first */
  skipped: { reason: string; count: number }[];
  /** members whose outcome was read (deliveries are pruned after 14 days) */
  counted: number;
}

/** A planner's skip reason (app/sync/mappers/customers.ts, consent.ts, lookups) in the merchant's words. */
export function skipReasonWords(detail: string | null): string {
  const d = detail ?? "";
  if (/no usable email/.test(d)) return "have no email address";
  if (/non-subscribers are not pushed|no contact to update/.test(d)) return "are not subscribed";
  if (/redacted/.test(d)) return "had their data erased";
  if (/consent "invalid"/.test(d)) return "have an email address that cannot receive mail";
  if (/customer was deleted|Shopify has no customer/.test(d)) return "are no longer customers in Shopify";
  if (/left the segment/.test(d)) return "left the segment since";
  if (/not mirrored as a tag/.test(d)) return "were read after the segment was un-picked";
  return d ? `could not be used (${d})` : "could not be used";
}

/** Per picked segment (gid) of the shop, the outcome of its current pick's member import. */
export async function importOutcomes(shop: string, picks: { segmentId: string; pickedAt: Date }[]): Promise<Map<string, ImportOutcome>> {
  const out = new Map<string, ImportOutcome>();
  if (!picks.length) return out;
  // eventId: segment-import:<segment number>:<customer number>:<picked at, ms> (member-import.server.ts).
  const rows = await database().sql.query<{ segment: string; picked: string; state: string; detail: string | null; count: number }>(
    `SELECT split_part(d."eventId", ':', 2) AS segment, split_part(d."eventId", ':', 4) AS picked, s.state,
            CASE WHEN s.state = 'skipped' THEN coalesce(d."outcomeDetail", d.outcome) END AS detail, count(*)::int AS count
       FROM "WebhookDelivery" d
       LEFT JOIN LATERAL (
         SELECT count(*) FILTER (WHERE o.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}')) AS pending,
                count(*) FILTER (WHERE o.status IN ('${CALL_STATUS.dead}', '${CALL_STATUS.refused}', '${CALL_STATUS.superseded}')) AS failed
           FROM "OutboundCall" o WHERE o."deliveryId" = d.id) c ON true
       CROSS JOIN LATERAL (SELECT CASE
           WHEN d.status <> '${DELIVERY_STATUS.done}' THEN 'waiting'
           WHEN d.outcome = '${DELIVERY_OUTCOME.unchanged}' THEN 'tagged'
           WHEN d.outcome <> '${DELIVERY_OUTCOME.planned}' THEN 'skipped'
           WHEN c.pending > 0 THEN 'waiting'
           WHEN c.failed > 0 THEN 'failed'
           ELSE 'tagged' END AS state) s
      WHERE d.shop = $1 AND d.source = $2 AND d.topic = 'customer.joined_segment'
      GROUP BY 1, 2, 3, 4`,
    [shop, SEGMENT_IMPORT_SOURCE],
  );
  for (const pick of picks) {
    const number = gidNumber(pick.segmentId) ?? pick.segmentId;
    // Within a millisecond: the pick time is read through two drivers that may round its microseconds apart.
    const pickedMs = new Date(pick.pickedAt).getTime();
    const mine = rows.filter((r) => r.segment === number && Math.abs(Number(r.picked) - pickedMs) <= 1);
    const sum = (state: string) => mine.filter((r) => r.state === state).reduce((n, r) => n + r.count, 0);
    const reasons = new Map<string, number>();
    for (const r of mine.filter((r) => r.state === "skipped")) {
      const words = skipReasonWords(r.detail);
      reasons.set(words, (reasons.get(words) ?? 0) + r.count);
    }
    out.set(pick.segmentId, {
      tagged: sum("tagged"),
      waiting: sum("waiting"),
      failed: sum("failed"),
      skipped: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
      counted: mine.reduce((n, r) => n + r.count, 0),
    });
  }
  return out;
}
