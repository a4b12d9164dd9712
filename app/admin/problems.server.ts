import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import { replayDeadLetters, type ReplayResult } from "../pipeline/dead-letters.server";
import { CALL_STATUS, DELIVERY_OUTCOME, DELIVERY_STATUS, TIMER_STATUS } from "../pipeline/status";
import { topicLabel } from "../sync/topics.server";
import { failureMeaning } from "./plain-words";
import { CALL_CONTEXT_COLUMNS, CALL_CONTEXT_JOIN, callSearchSql, describeObject, describeRow, isRowId, likePattern } from "./calls";

export interface Problem {
  id: string;
  object: string;
  kind: string;
  what: string;
  customer: string | null;
  orderName: string | null;
  attempts: number;
  /** the service's message */
  message: string | null;
  /** what the failure means for the merchant and what to do */
  meaning: string;
  createdAt: string;
}

export interface ProblemGroup {
  /** what failed, as the service or the pipeline said it */
  reason: string;
  /** names the group in "replay all" without echoing the reason (an opaque digest) */
  key: string;
  /** changes that failed of it: a store change counts once however many of its calls failed */
  count: number;
  /** its failed calls (the rows), more than `problems` holds when only the newest are shown */
  calls: number;
  problems: Problem[];
}

interface DeadRow {
  id: string;
  objectKey: string;
  kind: string;
  call: unknown;
  attempts: number;
  lastError: string | null;
  causeKey: string;
  lastResponse: unknown;
  createdAt: Date | string;
  orderName: string | null;
  profile: unknown;
  personEmail: string | null;
}

const NO_REASON = "No reason recorded";
/**
 * One group per cause, as the pipeline stored it (one for every call of an outage, whatever each
 * one's attempts and minutes); a failure stored without a cause reads as its message.
 */
const CAUSE = `coalesce(o.cause, o."lastError", '')`;
/**
 * One store change, however many of its calls failed (a customer edit is a contact update and a
 * customer event); a call planned from no delivery (a reminder, a storefront event) is a change of
 * its own. The home page counts them the same way (openDeadCounts).
 */
const CHANGE = `coalesce(o."deliveryId", 'call:' || o.id::text)`;
const DEAD = `o.status = '${CALL_STATUS.dead}'`;

interface Cause {
  cause: string;
  key: string;
  /** changes */
  count: number;
  /** calls */
  calls: number;
}

/** The causes of the failures `where` selects, the most changes first. */
async function causesOf(where: string, params: unknown[]): Promise<Cause[]> {
  const rows = await database().sql.query<Cause>(
    `SELECT ${CAUSE} AS cause, md5(${CAUSE}) AS key, count(DISTINCT ${CHANGE})::int AS count, count(DISTINCT o.id)::int AS calls
       FROM "OutboundCall" o ${CALL_CONTEXT_JOIN} WHERE ${where} GROUP BY 1`,
    params,
  );
  return rows.sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

/** The service's message from a stored response body, when it has one. */
function serviceMessage(lastResponse: unknown): string | null {
  if (lastResponse && typeof lastResponse === "object" && "message" in lastResponse) {
    const m = (lastResponse as { message: unknown }).message;
    if (typeof m === "string" && m.trim()) return m;
  }
  return null;
}

export interface ProblemList {
  /** the largest causes first, at most `groups` of them */
  groups: ProblemGroup[];
  /** how many causes there are in all (more than `groups.length` when some are not shown) */
  causes: number;
}

/** How many causes the Problems page shows: the largest ones; search finds the others. */
export const PROBLEM_GROUPS_SHOWN = 30;

/**
 * A shop's dead letters grouped by reason (largest group first), optionally only those whose
 * customer e-mail, order name or object id contains `search`. Every dead letter is counted (a
 * day-long outage leaves tens of thousands); each group shows its newest `limit`.
 */
export async function listProblems(shop: string, options: ListOptions = {}): Promise<ProblemList> {
  return groupFailures(shop, DEAD, options);
}

/**
 * Recent failures still being retried automatically (queued after a failed attempt, or replayed and
 * waiting, e.g. for a paused shop to be reconnected), grouped by reason.
 */
export async function listRetrying(shop: string, options: ListOptions = {}): Promise<ProblemList> {
  // Replayed and not yet tried (attempts 0): listReplayed shows them, without the old error.
  return groupFailures(shop, `o.status IN ('${CALL_STATUS.queued}', '${CALL_STATUS.running}') AND o."lastError" IS NOT NULL AND o.attempts > 0`, options);
}

/** What became of a replayed change, in words the page shows. */
export type ReplayOutcome = "sending" | "retrying" | "delivered" | "failed" | "not_needed";

export interface ReplayedItem {
  id: string;
  object: string;
  orderName: string | null;
  what: string;
  customer: string | null;
  outcome: ReplayOutcome;
  replayedAt: string;
}

/** How long a replay stays listed with its outcome. */
export const REPLAYED_WINDOW_MS = 60 * 60_000;

/**
 * Changes replayed in the last hour (a call is created with retryFrom = createdAt, both now(), and
 * only a replay moves retryFrom, to its own now(); a replay within a second of the call counts too) and what became
 * of them: the page shows the real outcome, not the error from before the replay.
 */
export async function listReplayed(shop: string, options: { limit?: number; now?: Date } = {}): Promise<ReplayedItem[]> {
  const since = new Date((options.now ?? new Date()).getTime() - REPLAYED_WINDOW_MS);
  const rows = await database().sql.query<{ id: string; objectKey: string; call: unknown; status: string; attempts: number; retryFrom: Date | string; orderName: string | null; profile: unknown; personEmail: string | null }>(
    `SELECT o.id::text AS id, o."objectKey", o.call, o.status, o.attempts, o."retryFrom" AT TIME ZONE 'UTC' AS "retryFrom", ${CALL_CONTEXT_COLUMNS}
       FROM "OutboundCall" o ${CALL_CONTEXT_JOIN}
      WHERE o.shop = $1 AND o."retryFrom" > o."createdAt" AND o."retryFrom" >= $2
        AND (o.status <> '${CALL_STATUS.superseded}' OR o."lastError" IS DISTINCT FROM 'discarded by the merchant')
      ORDER BY o."retryFrom" DESC, o.id DESC LIMIT $3`,
    [shop, since.toISOString(), options.limit ?? 20],
  );
  return rows.map((r) => {
    const s = describeRow(r.objectKey, r.call, r);
    const pending = r.status === CALL_STATUS.queued || r.status === CALL_STATUS.running;
    const outcome: ReplayOutcome = pending
      ? r.attempts > 0
        ? "retrying"
        : "sending"
      : r.status === CALL_STATUS.delivered
        ? "delivered"
        : r.status === CALL_STATUS.superseded
          ? "not_needed"
          : "failed";
    return { id: r.id, object: s.object, orderName: s.orderName, what: s.what, customer: s.customer, outcome, replayedAt: new Date(r.retryFrom).toISOString() };
  });
}

interface ListOptions {
  search?: string;
  /** rows shown per group (50) */
  limit?: number;
  /** groups shown (PROBLEM_GROUPS_SHOWN) */
  groups?: number;
}

async function groupFailures(shop: string, statusSql: string, options: ListOptions): Promise<ProblemList> {
  const params: unknown[] = [shop];
  let where = `o.shop = $1 AND ${statusSql}`;
  if (options.search?.trim()) {
    params.push(likePattern(options.search.trim()));
    where += ` AND ${callSearchSql(params.length)}`;
  }
  const counts = await causesOf(where, params);
  const shown = counts.slice(0, options.groups ?? PROBLEM_GROUPS_SHOWN);
  if (!shown.length) return { groups: [], causes: 0 };
  // The newest `limit` rows of each shown cause.
  const rows = await database().sql.query<DeadRow>(
    `SELECT o.id::text AS id, o."objectKey", o.kind, o.call, o.attempts, o."lastError", r."causeKey", o."lastResponse", o."createdAt", ${CALL_CONTEXT_COLUMNS}
       FROM (SELECT o.id, md5(${CAUSE}) AS "causeKey", row_number() OVER (PARTITION BY ${CAUSE} ORDER BY o.id DESC) AS rank
               FROM "OutboundCall" o ${CALL_CONTEXT_JOIN}
              WHERE ${where} AND ${CAUSE} = ANY($${params.length + 1}::text[])) r
       JOIN "OutboundCall" o ON o.id = r.id ${CALL_CONTEXT_JOIN}
      WHERE r.rank <= $${params.length + 2}
      ORDER BY o.id DESC`,
    [...params, shown.map((c) => c.cause), options.limit ?? 50],
  );
  const groups = new Map<string, ProblemGroup>(
    shown.map((c) => [c.key, { reason: c.cause.trim() || NO_REASON, key: c.key, count: c.count, calls: c.calls, problems: [] }]),
  );
  for (const r of rows) {
    const s = describeRow(r.objectKey, r.call, r);
    groups.get(r.causeKey)?.problems.push({
      id: r.id,
      object: s.object,
      kind: r.kind,
      what: s.what,
      customer: s.customer,
      orderName: s.orderName,
      attempts: r.attempts,
      message: serviceMessage(r.lastResponse) ?? r.lastError,
      meaning: failureMeaning(r.lastError),
      createdAt: new Date(r.createdAt).toISOString(),
    });
  }
  return { groups: [...groups.values()], causes: counts.length };
}

/** Ids of a shop's dead letters of one group (its `key`), for "replay all". */
export async function deadLetterIdsForReason(shop: string, key: string): Promise<string[]> {
  const rows = await database().sql.query<{ id: string }>(
    `SELECT o.id::text AS id FROM "OutboundCall" o WHERE o.shop = $1 AND ${DEAD} AND md5(${CAUSE}) = $2 ORDER BY o.id`,
    [shop, key],
  );
  return rows.map((r) => r.id);
}

/**
 * Replays dead letters of this shop only (ids of other shops are ignored). Those a later call of
 * the same object and kind has overtaken are not sent (superseded): replay never goes backwards.
 * Counted in changes, as the page counts them: a change is replayed when any of its calls is, and
 * superseded when all of them are.
 */
export async function replayProblems(shop: string, ids: string[]): Promise<ReplayResult> {
  if (!ids.length) return { replayed: 0, superseded: 0 };
  const wanted = ids.filter(isRowId);
  const changeOf = async (status: string) =>
    new Map(
      (
        await database().sql.query<{ id: string; change: string }>(
          `SELECT o.id::text AS id, ${CHANGE} AS change FROM "OutboundCall" o WHERE o.shop = $1 AND o.status = $2 AND o.id = ANY($3::bigint[])`,
          [shop, status, wanted],
        )
      ).map((r) => [r.id, r.change]),
    );
  const dead = await changeOf(CALL_STATUS.dead);
  const calls = await replayDeadLetters(shop, ids);
  if (!calls.replayed && !calls.superseded) return calls;
  if (!calls.superseded) return { replayed: new Set(dead.values()).size, superseded: 0 };
  // The dead letters now superseded are the ones replay did not send; the others went back to the queue.
  const superseded = new Map([...(await changeOf(CALL_STATUS.superseded))].filter(([id]) => dead.has(id)));
  const replayed = new Set([...dead].filter(([id]) => !superseded.has(id)).map(([, change]) => change));
  return { replayed: replayed.size, superseded: new Set([...superseded.values()].filter((c) => !replayed.has(c))).size };
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

// What "could not be used" means, for the list here and the health banner's count. $1 is the shop.
const INVALID_DELIVERIES = `FROM "WebhookDelivery" WHERE shop = $1 AND outcome = '${DELIVERY_OUTCOME.invalid}' AND status = '${DELIVERY_STATUS.done}'`;
const FAILED_REMINDERS = `FROM "AbandonmentTimer" WHERE shop = $1 AND status = '${TIMER_STATUS.failed}'`;

/** How many things of the shop could not be used (listUnprocessed), those since `since` when given. */
export async function countUnprocessed(shop: string, since?: Date): Promise<number> {
  const [{ count }] = await database().sql.query<{ count: number }>(
    `SELECT ((SELECT count(*) ${INVALID_DELIVERIES} AND ($2::timestamp IS NULL OR "finishedAt" >= $2))
           + (SELECT count(*) ${FAILED_REMINDERS} AND ($2::timestamp IS NULL OR "updatedAt" >= $2)))::int AS count`,
    [shop, since?.toISOString() ?? null],
  );
  return count;
}

// Reminders the abandonment timer could not make are listed under this name, not a webhook topic.
const ABANDONED_CHECKOUT = "abandoned checkout";

export interface UnprocessedItem {
  /** what Shopify sent (its topic), or "abandoned checkout" for a reminder that could not be made */
  what: string;
  /** `what` in the merchant's words ("New customer", "Abandoned checkout reminder") */
  label: string;
  object: string | null;
  /** why it could not be used */
  reason: string;
  at: string;
}

/**
 * What the store sent that could not be used at all, newest first: deliveries recorded as invalid
 * (a body or a history-import line that cannot be read or mapped) and abandoned-checkout reminders
 * whose snapshot could not be turned into a call. Nothing of them reached the service, and replay
 * cannot help; they stay listed as long as retention keeps finished deliveries (14 days).
 */
export async function listUnprocessed(shop: string, options: { limit?: number } = {}): Promise<{ count: number; items: UnprocessedItem[] }> {
  const count = await countUnprocessed(shop);
  if (!count) return { count: 0, items: [] };
  const rows = await database().sql.query<{ what: string; object: string | null; reason: string | null; at: Date | string }>(
    `(SELECT topic AS what, "objectKey" AS object, "outcomeDetail" AS reason, "finishedAt" AS at ${INVALID_DELIVERIES} ORDER BY "finishedAt" DESC NULLS LAST LIMIT $2)
     UNION ALL
     (SELECT '${ABANDONED_CHECKOUT}', 'checkout:' || "checkoutToken", "lastError", "updatedAt" ${FAILED_REMINDERS} ORDER BY "updatedAt" DESC LIMIT $2)
     ORDER BY at DESC NULLS LAST LIMIT $2`,
    [shop, options.limit ?? 20],
  );
  return {
    count,
    items: rows.map((r) => ({
      what: r.what,
      label: r.what === ABANDONED_CHECKOUT ? "Abandoned checkout reminder" : topicLabel(r.what),
      object: r.object ? describeObject(r.object) : null,
      reason: r.reason?.trim() || NO_REASON,
      at: new Date(r.at ?? 0).toISOString(),
    })),
  };
}
