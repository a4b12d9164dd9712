import { database } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { claimRows, fairShareCandidates, GIVE_BACK_CLAIM } from "./claim.server";
import type { PipelinePolicy } from "./policy";
import type { ClaimedCall } from "./send-call.server";
import { CALL_STATUS } from "./status";

/** Lease fencing: a call is written only by the worker that still holds it ($2). */
export const FENCE = `"lockedBy" = $2 AND status = '${CALL_STATUS.running}'`;

/** Head of line per object, and not one of the calls this worker holds still ($4). */
const HEAD_OF_LINE = `q.id <= (SELECT p.id FROM "OutboundCall" p WHERE p.shop = q.shop AND p."objectKey" = q."objectKey"
              AND p.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}') ORDER BY p.id LIMIT 1)
      AND q.id <> ALL($4::bigint[])`;

/**
 * Claims up to `limit` due calls, shared fairly between the shops that have some (round-robin from
 * `cursor`: fairShareCandidates), each shop's live calls before its imported history. Only the
 * oldest waiting call of each Shopify object is claimable (a call in flight holds the ones behind
 * it), so an object's calls reach the service in the order they were planned, however many claims
 * overlap. `inFlight`: calls this worker holds still; a lease of one that ran out (a call slower
 * than the lease) is left to another worker. `skipShops`: shops this worker has enough of already.
 */
export function claimCalls(
  workerId: string,
  policy: PipelinePolicy,
  limit: number,
  inFlight: string[],
  fair: { cursor: string; skipShops: string[]; limited: Map<string, number> },
): Promise<ClaimedCall[]> {
  // The shop check is a scalar subquery, not EXISTS or a join: with real statistics the planner
  // turned EXISTS into a join that fetched a shop's whole queue and sorted it (86 against 7 ms).
  const shopMayReceive = (shop: string) => `COALESCE((SELECT true FROM "Shop" s WHERE s.domain = ${shop} AND ${canReceiveDeliveriesSql("s")}
      AND (s."deliveryHoldUntil" IS NULL OR s."deliveryHoldUntil" <= now())), false)`;
  // fairShareShops 0: first come, first served across shops (benchmarks compare against it).
  const fifo = policy.fairShareShops <= 0;
  return claimRows<ClaimedCall>({
    table: "OutboundCall",
    workerId,
    limit,
    leaseMs: policy.leaseMs,
    due: `q.status = '${CALL_STATUS.queued}' AND q."runAt" <= now()`,
    dueCandidates: fifo ? undefined : fairShareCandidates({
      table: "OutboundCall",
      // Head of line: written as "the smallest waiting id" rather than NOT EXISTS so the
      // (shop, objectKey, id) index serves it even without table statistics (PGlite has no
      // autovacuum); `<=` means `=` (q itself is waiting) but keeps the planner's estimate sane.
      due: `q."runAt" <= now() AND ${HEAD_OF_LINE}`,
      orderBy: `q.background, q."runAt", q.id`,
      shopReady: `w.shop <> ALL($6::text[]) AND ${shopMayReceive("w.shop")}`,
      shopLimit: `(SELECT l.n FROM unnest($8::text[], $9::int[]) AS l(shop, n) WHERE l.shop = r.shop)`,
      cursor: "$5",
      maxShops: "$7::int",
    }),
    // Calls whose lease ran out (a worker died): looked for now and then, oldest first.
    where: `${shopMayReceive("q.shop")} AND ${HEAD_OF_LINE}`,
    params: fifo ? [inFlight] : [
      inFlight,
      fair.cursor,
      fair.skipShops,
      Math.max(1, Math.min(limit, policy.fairShareShops)),
      [...fair.limited.keys()],
      [...fair.limited.values()],
    ],
    paramTypes: fifo ? ["bigint[]"] : ["bigint[]", "text", "text[]", "int", "text[]", "int[]"],
    orderBy: `q."runAt", q.id`,
    key: "id",
    returning: `id::text AS id, shop, "objectKey", kind, call, attempts, "createdAt" AT TIME ZONE 'UTC' AS "createdAt",
      "retryFrom" AT TIME ZONE 'UTC' AS "retryFrom", background`,
  });
}

/** Claimed calls not sent go back to the queue at once, their attempt given back (only those this worker still holds). */
export async function handBackCalls(workerId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await database()
    .sql.query(
      `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', ${GIVE_BACK_CLAIM}
       WHERE id = ANY($1::bigint[]) AND ${FENCE}`,
      [ids, workerId],
    )
    // Their leases run out instead.
    .catch((error) => logger().warn({ worker: workerId, calls: ids.length, err: messageOf(error) }, "could not hand back claimed calls"));
}

/** No call of the shop is claimed for `ms` (a later hold already set is kept). */
export async function holdShop(shop: string, ms: number): Promise<void> {
  await database().sql.query(
    `UPDATE "Shop" SET "deliveryHoldUntil" = GREATEST(COALESCE("deliveryHoldUntil", now()), now() + ($2::bigint * interval '1 millisecond'))
     WHERE domain = $1`,
    [shop, ms],
  );
}
