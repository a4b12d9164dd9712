import { setImmediate as nextTurn } from "node:timers/promises";
import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import type { ServiceCall } from "../services/marketing/schemas";
import { callKind } from "./decide";
import { PIPELINE_POLICY } from "./policy";
import { CALL_STATUS } from "./status";
import { yieldToWebhooks } from "./webhook-priority.server";

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
 * never undo a newer unsubscribe, and nothing older than a person's deletion brings them back.
 * Of several dead letters of one object and kind, only the newest is replayed.
 */
export async function replayDeadLetters(shop: string, ids?: string[]): Promise<ReplayResult> {
  const result: ReplayResult = { replayed: 0, superseded: 0 };
  const wanted = ids
    ? ids
        .filter((id) => /^\d{1,19}$/.test(id))
        .map(BigInt)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .map(String)
    : (
        await database().sql.query<{ id: string }>(
          `SELECT id::text AS id FROM "OutboundCall" WHERE shop = $1 AND status = '${CALL_STATUS.dead}' ORDER BY id`,
          [shop],
        )
      ).map((r) => r.id);
  // In slices, oldest first, each decided and written on its own and then giving way to webhooks:
  // a day-long outage leaves tens of thousands of dead letters, and on PGlite one statement over
  // all of them held the one thread (and every webhook waiting) for seconds. A crash part-way
  // leaves the rest dead, to be replayed again.
  for (let i = 0; i < wanted.length; i += REPLAY_SLICE) {
    await nextTurn();
    await yieldToWebhooks(PIPELINE_POLICY);
    const done = await replaySlice(shop, wanted.slice(i, i + REPLAY_SLICE));
    result.replayed += done.replayed;
    result.superseded += done.superseded;
  }
  if (result.replayed || result.superseded) logger().info({ shop, ...result }, "dead letters replayed");
  return result;
}

/** Dead letters replayed per transaction: a few ms of PGlite's thread each. */
const REPLAY_SLICE = 500;

async function replaySlice(shop: string, ids: string[]): Promise<ReplayResult> {
  return database().sql.transaction(async (tx) => {
    // Each id looked up by primary key (the fence keeps the planner from reading all the shop's
    // dead letters through (shop, status) instead, as it does while that index's statistics are
    // missing), and locked until this slice is written.
    const dead = await tx.query<KindRow>(
      `SELECT c.id::text AS id, c."objectKey", ${KIND_FIELDS}
         FROM unnest($2::bigint[]) AS w(id)
         JOIN LATERAL (SELECT * FROM "OutboundCall" o WHERE o.id = w.id OFFSET 0) c ON true
        WHERE c.shop = $1 AND c.status = '${CALL_STATUS.dead}'
        ORDER BY c.id FOR UPDATE OF c`,
      [shop, ids],
    );
    if (!dead.length) return { replayed: 0, superseded: 0 };
    // The newest call of each object and kind planned since the oldest of these (by object, the
    // same fence): a dead letter older than it has been overtaken (comparing each dead letter
    // with every later call took minutes at 70,000).
    const later = await tx.query<KindRow>(
      `SELECT c.id::text AS id, c."objectKey", ${KIND_FIELDS}
         FROM unnest($2::text[]) AS k("objectKey")
         JOIN LATERAL (SELECT * FROM "OutboundCall" o WHERE o.shop = $1 AND o."objectKey" = k."objectKey" AND o.id >= $3::bigint OFFSET 0) c ON true
        WHERE c.status <> '${CALL_STATUS.superseded}'`,
      [shop, [...new Set(dead.map((d) => d.objectKey))], dead[0].id],
    );
    const newest = new Map<string, bigint>();
    // A person deleted since (customers/delete): nothing older of that object may bring them back.
    const deleted = new Map<string, bigint>();
    for (const l of later) {
      const key = `${l.objectKey}\u0000${callKindOfRow(l)}`;
      const id = BigInt(l.id);
      if (id > (newest.get(key) ?? -1n)) newest.set(key, id);
      if (l.op === "person.delete" && id > (deleted.get(l.objectKey) ?? -1n)) deleted.set(l.objectKey, id);
    }
    const replay: string[] = [];
    const superseded: string[] = [];
    for (const d of dead) {
      const overtaken =
        (newest.get(`${d.objectKey}\u0000${callKindOfRow(d)}`) ?? -1n) > BigInt(d.id) || (deleted.get(d.objectKey) ?? -1n) > BigInt(d.id);
      (overtaken ? superseded : replay).push(d.id);
    }
    // Rows locked above: by primary key alone.
    if (superseded.length) {
      await tx.query(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.superseded}', "lastError" = coalesce("lastError", '') || ' (superseded by a later call; not replayed)'
          WHERE id = ANY($1::bigint[])`,
        [superseded],
      );
    }
    if (replay.length) {
      await tx.query(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', attempts = 0, "runAt" = now(), "retryFrom" = now(),
            "lockedBy" = NULL, "lockedUntil" = NULL
          WHERE id = ANY($1::bigint[])`,
        [replay],
      );
    }
    return { replayed: replay.length, superseded: superseded.length };
  });
}

/** What callKind() reads of a call, without the bodies (70,000 of them took a second to parse). */
const KIND_FIELDS = `c.call->>'op' AS op, c.call->>'type' AS type, c.call->>'action' AS action, c.call->'body'->>'eventName' AS "eventName"`;
interface KindRow {
  id: string;
  objectKey: string;
  op: string;
  type: string | null;
  action: string | null;
  eventName: string | null;
}
const callKindOfRow = (r: KindRow) => callKind({ op: r.op, type: r.type, action: r.action, body: { eventName: r.eventName } } as unknown as ServiceCall);
