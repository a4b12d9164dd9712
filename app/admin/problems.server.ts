import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import { replayDeadLetters, type ReplayResult } from "../pipeline/dead-letters.server";
import { deadLetterCauseSql } from "../pipeline/deliver.server";
import { CALL_STATUS } from "../pipeline/status";
import { callSearchSql, describeObject, likePattern, summariseCall } from "./calls";
import { maskEmailsIn } from "./privacy";

export interface Problem {
  id: string;
  object: string;
  kind: string;
  what: string;
  customer: string | null;
  orderName: string | null;
  attempts: number;
  /** the service's message (e-mail addresses masked) */
  message: string | null;
  createdAt: string;
}

export interface ProblemGroup {
  /** what failed, as the merchant reads it (e-mail addresses masked) */
  reason: string;
  /** names the group in "replay all" without echoing the reason (an opaque digest) */
  key: string;
  count: number;
  problems: Problem[];
}

interface DeadRow {
  id: string;
  objectKey: string;
  kind: string;
  call: unknown;
  attempts: number;
  lastError: string | null;
  cause: string;
  causeKey: string;
  lastResponse: unknown;
  createdAt: Date | string;
}

const NO_REASON = "No reason recorded";
/** One group per cause: the give-up message's attempt count and minutes left out. */
const CAUSE = deadLetterCauseSql(`o."lastError"`);
const CAUSE_KEY = `md5(${CAUSE})`;

/** The service's message from a stored response body, when it has one. */
function serviceMessage(lastResponse: unknown): string | null {
  if (lastResponse && typeof lastResponse === "object" && "message" in lastResponse) {
    const m = (lastResponse as { message: unknown }).message;
    if (typeof m === "string" && m.trim()) return m;
  }
  return null;
}

/**
 * A shop's dead letters grouped by reason (largest group first), optionally only those whose
 * customer e-mail, order name or object id contains `search`. Shows at most `limit` per group.
 */
export async function listProblems(shop: string, options: { search?: string; limit?: number } = {}): Promise<ProblemGroup[]> {
  return groupFailures(shop, `o.status = '${CALL_STATUS.dead}'`, options);
}

/** Recent failures still being retried automatically (queued after a failed attempt), grouped by reason. */
export async function listRetrying(shop: string, options: { search?: string; limit?: number } = {}): Promise<ProblemGroup[]> {
  return groupFailures(shop, `o.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}') AND o.attempts > 0 AND o."lastError" IS NOT NULL`, options);
}

async function groupFailures(shop: string, statusSql: string, options: { search?: string; limit?: number }): Promise<ProblemGroup[]> {
  const params: unknown[] = [shop];
  let where = `o.shop = $1 AND ${statusSql}`;
  if (options.search?.trim()) {
    params.push(likePattern(options.search.trim()));
    where += ` AND ${callSearchSql(params.length)}`;
  }
  const rows = await database().sql.query<DeadRow>(
    `SELECT o.id::text AS id, o."objectKey", o.kind, o.call, o.attempts, o."lastError", ${CAUSE} AS cause, ${CAUSE_KEY} AS "causeKey",
         o."lastResponse", o."createdAt"
       FROM "OutboundCall" o WHERE ${where} ORDER BY o.id DESC LIMIT 2000`,
    params,
  );
  const groups = new Map<string, ProblemGroup>();
  const limit = options.limit ?? 50;
  for (const r of rows) {
    const g = groups.get(r.causeKey) ?? { reason: maskEmailsIn(r.cause.trim()) || NO_REASON, key: r.causeKey, count: 0, problems: [] };
    g.count++;
    if (g.problems.length < limit) {
      const s = summariseCall(r.call);
      g.problems.push({
        id: r.id,
        object: describeObject(r.objectKey),
        kind: r.kind,
        what: s.what,
        customer: s.customer,
        orderName: s.orderName,
        attempts: r.attempts,
        message: maskEmailsIn(serviceMessage(r.lastResponse) ?? r.lastError),
        createdAt: new Date(r.createdAt).toISOString(),
      });
    }
    groups.set(r.causeKey, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** Ids of a shop's dead letters of one group (its `key`), for "replay all". */
export async function deadLetterIdsForReason(shop: string, key: string): Promise<string[]> {
  const rows = await database().sql.query<{ id: string }>(
    `SELECT o.id::text AS id FROM "OutboundCall" o WHERE o.shop = $1 AND o.status = '${CALL_STATUS.dead}' AND ${CAUSE_KEY} = $2 ORDER BY o.id`,
    [shop, key],
  );
  return rows.map((r) => r.id);
}

/**
 * Replays dead letters of this shop only (ids of other shops are ignored). Those a later call of
 * the same object and kind has overtaken are not sent (superseded): replay never goes backwards.
 */
export async function replayProblems(shop: string, ids: string[]): Promise<ReplayResult> {
  if (!ids.length) return { replayed: 0, superseded: 0 };
  return replayDeadLetters(shop, ids);
}

/**
 * Discards dead letters: they are marked superseded (never sent again) rather than deleted, so the
 * record of what failed stays until retention removes it. Only this shop's dead letters change.
 */
export async function discardProblems(shop: string, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const { count } = await prisma().outboundCall.updateMany({
    where: { shop, status: CALL_STATUS.dead, id: { in: ids.map((id) => BigInt(id)) } },
    data: { status: CALL_STATUS.superseded, lastError: "discarded by the merchant" },
  });
  if (count) logger().info({ shop, count }, "dead letters discarded");
  return count;
}
