/**
 * The members a segment already has when the merchant picks it: Shopify reports only changes
 * (customer.joined_segment / left_segment), so without this a current member would get the tag
 * only the next time they join. Each picked segment (MirroredSegment row, status "queued" when
 * picked) is read from the Admin API's `customerSegmentMembers`, one page per step, and every
 * member is queued as a customer.joined_segment delivery (source "segment-import"): the planner
 * tags them like a live join, behind live webhooks (a history source).
 *
 * The daily-sweep pattern of app/backfill/reconcile.server.ts: a worker claims one row with SKIP
 * LOCKED under a lease; a page's deliveries and the next cursor are written in one transaction
 * that checks the lease, so a crash resumes from the cursor (a re-read page is harmless: the
 * eventId is the same, and deliveries are unique on shop, topic and eventId).
 */
import { z } from "zod";
import { database } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { adminQuery } from "../shopify/admin-api.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { nextTry } from "../pipeline/policy";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import type { DeliverySource } from "../sync/sources";

export const SEGMENT_IMPORT_SOURCE: DeliverySource = "segment-import";
export const IMPORT_STATUS = { queued: "queued", running: "running", done: "done", failed: "failed" } as const;

// 250 members a page: 253 points of the 1,000-point query limit (page size written in, so
// test/foundation/admin-graphql.test.ts can cost it).
const MEMBERS_QUERY = `#graphql
  query SegmentMembers($segmentId: ID!, $after: String) {
    customerSegmentMembers(segmentId: $segmentId, first: 250, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id } }
    }
  }`;

const membersPage = z.object({
  customerSegmentMembers: z.object({
    totalCount: z.number().int().nonnegative(),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
    edges: z.array(z.object({ node: z.object({ id: z.string() }) })),
  }),
});

/**
 * A member's id is gid://shopify/CustomerSegmentMember/<customer number> (assumed: the number is
 * the customer's; docs/customers-and-consent.md): the customer's gid is built from it.
 */
export function memberCustomerGid(memberId: string): string | null {
  const n = /\/(\d+)(?:\?.*)?$/.exec(memberId)?.[1];
  return n ? `gid://shopify/Customer/${n}` : null;
}

interface Claimed {
  shop: string;
  segmentId: string;
  pickedAt: Date;
  cursor: string | null;
  attempts: number;
}

let quietUntil = 0;

/** One page of one queued import (the worker's unit of this work). Returns 1 when it did something. */
export async function runSegmentImportStep(workerId: string, policy: PipelinePolicy): Promise<number> {
  if (Date.now() < quietUntil) return 0;
  const [row] = await database().sql.query<Claimed>(
    `UPDATE "MirroredSegment" m SET "importLockedBy" = $1, "importLockedUntil" = now() + ($2::int * interval '1 millisecond'),
       "importAttempts" = m."importAttempts" + 1, "importStatus" = 'running'
     WHERE (m.shop, m."segmentId") = (
       SELECT q.shop, q."segmentId" FROM "MirroredSegment" q JOIN "Shop" s ON s.domain = q.shop
        WHERE q."importStatus" IN ('queued', 'running') AND q."importRunAt" <= now()
          AND (q."importLockedUntil" IS NULL OR q."importLockedUntil" < now()) AND ${canReceiveDeliveriesSql("s")}
        ORDER BY q."importRunAt" LIMIT 1
        FOR UPDATE OF q SKIP LOCKED)
     RETURNING m.shop, m."segmentId", m."pickedAt" AT TIME ZONE 'UTC' AS "pickedAt", m."importCursor" AS cursor, m."importAttempts" AS attempts`,
    [workerId, policy.leaseMs],
  );
  if (!row) {
    // Picks are rare: an idle worker need not ask on every poll.
    quietUntil = Date.now() + policy.pollMs * 8;
    return 0;
  }
  try {
    await importPage(row, workerId, policy);
  } catch (error) {
    const message = messageOf(error);
    const next = nextTry("segmentImport", { attempts: row.attempts }, policy);
    const giveUp = next.giveUp;
    logger().warn({ shop: row.shop, segment: row.segmentId, attempt: row.attempts, err: message }, giveUp ? "segment member import failed" : "segment member import step failed; will retry");
    // The cursor is kept: "Try again" (or the retry) resumes where it stopped.
    await database().sql.query(
      `UPDATE "MirroredSegment" SET "importRunAt" = now() + ($4::int * interval '1 millisecond'), "importError" = $5,
         "importStatus" = CASE WHEN $6 THEN 'failed' ELSE "importStatus" END, "importLockedBy" = NULL, "importLockedUntil" = NULL
        WHERE shop = $1 AND "segmentId" = $2 AND "importLockedBy" = $3`,
      [row.shop, row.segmentId, workerId, next.delayMs, message, giveUp],
    );
  }
  return 1;
}

async function importPage(row: Claimed, workerId: string, policy: PipelinePolicy): Promise<void> {
  const data = membersPage.parse(
    await adminQuery(row.shop, MEMBERS_QUERY, { segmentId: row.segmentId, after: row.cursor }, { maxWaitMs: Math.floor(policy.leaseMs / 4) }),
  ).customerSegmentMembers;
  const pickedAt = new Date(row.pickedAt).toISOString();
  const segmentNumber = /\/(\d+)$/.exec(row.segmentId)?.[1] ?? row.segmentId;
  const rows = data.edges.flatMap(({ node }) => {
    const customer = memberCustomerGid(node.id);
    if (!customer) return [];
    return [{
      eventId: `${SEGMENT_IMPORT_SOURCE}:${segmentNumber}:${customer.split("/").pop()}:${new Date(pickedAt).getTime()}`,
      // picked_at lets the planner skip a join a later live "left" has overtaken.
      rawBody: JSON.stringify({ customer_id: customer, segment_id: row.segmentId, picked_at: pickedAt }),
    }];
  });
  const finished = !data.pageInfo.hasNextPage || !data.pageInfo.endCursor;
  await database().sql.transaction(async (tx) => {
    const [mine] = await tx.query(`SELECT 1 FROM "MirroredSegment" WHERE shop = $1 AND "segmentId" = $2 AND "importLockedBy" = $3 FOR UPDATE`, [
      row.shop,
      row.segmentId,
      workerId,
    ]);
    if (!mine) throw new Error("lease lost during the segment member import");
    if (rows.length) {
      await tx.query(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source)
         SELECT gen_random_uuid()::text, $1, 'customer.joined_segment', r."eventId", r."eventId", r."rawBody", $3
           FROM jsonb_to_recordset($2::jsonb) AS r("eventId" text, "rawBody" text)
         ON CONFLICT (shop, topic, "eventId") DO NOTHING`,
        [row.shop, JSON.stringify(rows), SEGMENT_IMPORT_SOURCE],
      );
    }
    await tx.query(
      `UPDATE "MirroredSegment" SET "importCursor" = $3, "importTotal" = $4, "importDone" = LEAST("importDone" + $5, $4),
         "importStatus" = $6, "importAttempts" = 0, "importError" = NULL, "importLockedBy" = NULL, "importLockedUntil" = NULL
        WHERE shop = $1 AND "segmentId" = $2`,
      [row.shop, row.segmentId, finished ? null : data.pageInfo.endCursor, data.totalCount, data.edges.length, finished ? IMPORT_STATUS.done : IMPORT_STATUS.running],
    );
  });
  if (finished) logger().info({ shop: row.shop, segment: row.segmentId, total: data.totalCount }, "segment members imported");
}

/** "Try again" in Settings: a failed import resumes from its cursor. */
export async function retrySegmentImport(shop: string, segmentId: string): Promise<boolean> {
  const rows = await database().sql.query(
    `UPDATE "MirroredSegment" SET "importStatus" = 'queued', "importAttempts" = 0, "importError" = NULL, "importRunAt" = now()
      WHERE shop = $1 AND "segmentId" = $2 AND "importStatus" = 'failed' RETURNING shop`,
    [shop, segmentId],
  );
  quietUntil = 0;
  return rows.length > 0;
}
