import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import type { ServiceCall } from "../services/marketing/schemas";
import { callKind } from "./decide";
import { CALL_STATUS } from "./status";

export interface DeadLetter {
  id: string;
  objectKey: string;
  kind: string;
  call: unknown;
  reason: string | null;
  lastResponse: unknown;
  attempts: number;
  createdAt: Date;
}

/** Calls that exhausted their retries: reason, last response and payload. */
export async function listDeadLetters(shop: string, options: { take?: number } = {}): Promise<DeadLetter[]> {
  const rows = await prisma().outboundCall.findMany({
    where: { shop, status: CALL_STATUS.dead },
    orderBy: { id: "asc" },
    take: options.take ?? 100,
  });
  return rows.map((r) => ({
    id: String(r.id),
    objectKey: r.objectKey,
    kind: r.kind,
    call: r.call,
    reason: r.lastError,
    lastResponse: r.lastResponse,
    attempts: r.attempts,
    createdAt: r.createdAt,
  }));
}

export interface ReplayResult {
  /** Put back in the queue, with a fresh retry deadline. */
  replayed: number;
  /** Not sent: a later call of the same object and kind already carries newer data. */
  superseded: number;
}

/**
 * Puts dead letters back in the queue: one or some (by id), or all of a shop's. Replay never
 * goes backwards: a dead letter that a later call of the same object and kind has overtaken
 * (queued, sent or refused since) is marked superseded instead of sent, so an old subscribe can
 * never undo a newer unsubscribe. Of several dead letters of one object and kind, only the
 * newest is replayed.
 */
export async function replayDeadLetters(shop: string, ids?: string[]): Promise<ReplayResult> {
  const dead = await prisma().outboundCall.findMany({
    where: { shop, status: CALL_STATUS.dead, ...(ids ? { id: { in: ids.map((id) => BigInt(id)) } } : {}) },
    select: { id: true, objectKey: true, call: true },
  });
  if (!dead.length) return { replayed: 0, superseded: 0 };

  // Every later call of the objects concerned, to find what overtook each dead letter.
  const later = await database().sql.query<{ id: string; objectKey: string; call: ServiceCall; status: string }>(
    `SELECT c.id::text AS id, c."objectKey", c.call, c.status FROM "OutboundCall" c
      WHERE c.shop = $1 AND c."objectKey" = ANY($2::text[])
        AND c.id > (SELECT min(d) FROM unnest($3::bigint[]) AS d)`,
    [shop, [...new Set(dead.map((d) => d.objectKey))], dead.map((d) => d.id.toString())],
  );
  const replay: bigint[] = [];
  const superseded: bigint[] = [];
  for (const d of dead) {
    const kind = callKind(d.call as ServiceCall);
    const overtaken = later.some(
      (l) => BigInt(l.id) > d.id && l.objectKey === d.objectKey && callKind(l.call) === kind && l.status !== CALL_STATUS.superseded,
    );
    (overtaken ? superseded : replay).push(d.id);
  }
  await database().sql.transaction(async (tx) => {
    if (superseded.length) {
      await tx.query(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.superseded}', "lastError" = coalesce("lastError", '') || ' (superseded by a later call; not replayed)'
          WHERE shop = $1 AND id = ANY($2::bigint[]) AND status = '${CALL_STATUS.dead}'`,
        [shop, superseded.map(String)],
      );
    }
    if (replay.length) {
      await tx.query(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', attempts = 0, "runAt" = now(), "retryFrom" = now(),
            "lockedBy" = NULL, "lockedUntil" = NULL
          WHERE shop = $1 AND id = ANY($2::bigint[]) AND status = '${CALL_STATUS.dead}'`,
        [shop, replay.map(String)],
      );
    }
  });
  const result = { replayed: replay.length, superseded: superseded.length };
  logger().info({ shop, ...result }, "dead letters replayed");
  return result;
}
