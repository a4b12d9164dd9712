import { database } from "../db.server";
import type { PreparedStatement } from "../db/migrate.server";
import { logger } from "../logger.server";
import { countServiceCall } from "../observability/metrics.server";
import type { ServiceCall } from "../services/marketing/schemas";
import { FENCE } from "./call-claims.server";
import { bumpCounters, counterCtes, counterRows, type CounterDelta } from "./counters.server";
import { callKind, contentHash } from "./decide";
import type { CallResult, ClaimedCall } from "./send-call.server";
import { CALL_STATUS } from "./status";

/**
 * Writes results in groups: the answers that arrive within a few milliseconds share one statement
 * marking the delivered calls and adding to the counters (most calls succeed, and one statement per call was
 * the worker's largest cost; with answers spread out by a service far away, a group per turn of the
 * event loop still wrote one or two calls a statement). A crash re-sends only the calls whose group
 * was not written yet.
 */
export class ResultWrites {
  private delivered: string[] = [];
  private counters: CounterDelta[] = [];
  private scheduled: Promise<void> | undefined;
  private flushNow: (() => void) | undefined;

  constructor(private readonly workerId: string) {}

  /** Resolves when the group holding this result is written. */
  add(delivered: string | null, counters: CounterDelta[]): Promise<void> {
    if (delivered) this.delivered.push(delivered);
    this.counters.push(...counters);
    this.scheduled ??= new Promise<void>((resolve) => {
      this.flushNow = resolve;
      setTimeout(resolve, RESULT_GROUP_MS);
    }).then(() => this.flush());
    if (this.delivered.length >= RESULT_GROUP_SIZE) this.flushNow?.();
    return this.scheduled;
  }

  private async flush(): Promise<void> {
    this.scheduled = undefined;
    this.flushNow = undefined;
    const ids = this.delivered.splice(0);
    const counters = this.counters.splice(0);
    if (!ids.length) return bumpCounters(counters);
    const written = await database().sql.prepared<{ id: string }>(WRITE_DELIVERED, [ids, this.workerId, counterRows(counters) ?? "[]"]);
    if (written.length < ids.length) logFenced(this.workerId, ids.length - written.length);
  }
}

/** A group of results is written this long after its first, or once it holds this many delivered calls. */
const RESULT_GROUP_MS = 20;
const RESULT_GROUP_SIZE = 64;


/**
 * A group of delivered calls marked and counted in one statement, planned once per connection: on
 * PGlite a group of 40 took 1.4–2.0 ms planned anew, 0.6–1.0 ms prepared (2026-11-27).
 */
const WRITE_DELIVERED: PreparedStatement = {
  name: "write_delivered",
  text: `WITH ${counterCtes(3)}, delivered AS (
      UPDATE "OutboundCall" SET status = '${CALL_STATUS.delivered}', "deliveredAt" = now(), "lastError" = NULL, cause = NULL, "lockedBy" = NULL, "lockedUntil" = NULL
       WHERE id = ANY($1::bigint[]) AND ${FENCE}
      RETURNING id)
    SELECT id::text AS id FROM delivered`,
  types: ["bigint[]", "text", "jsonb"],
};

function logFenced(workerId: string, count: number): void {
  logger().warn({ worker: workerId, calls: count }, "lease lost while calling the service; result left to the new owner");
}

/** SyncCounter.lastLagMs is an int: a lag beyond 24.8 days is shown as that. */
const MAX_LAG_MS = 2 ** 31 - 1;

/** Writes one call's result; resolves once it and its counters are written. */
export async function recordResult(workerId: string, c: ClaimedCall, r: CallResult, writes: ResultWrites): Promise<void> {
  const counted = (counters: CounterDelta[]) => writes.add(null, counters);
  countServiceCall(c.kind, r.status, "error" in r ? r.error : undefined);
  const sql = database().sql;
  const log = { shop: c.shop, callId: c.id, objectKey: c.objectKey, attempt: c.attempts };
  const release = `"lockedBy" = NULL, "lockedUntil" = NULL`;
  const response = "response" in r && r.response !== undefined ? JSON.stringify(r.response) : null;
  const write = async (text: string, params: unknown[]): Promise<boolean> => {
    const rows = await sql.query(`${text} AND ${FENCE} RETURNING 1`, [c.id, workerId, ...params]);
    if (!rows.length) logFenced(workerId, 1);
    return rows.length > 0;
  };
  switch (r.status) {
    case "delivered": {
      const now = new Date();
      return writes.add(c.id, [
        {
          shop: c.shop,
          kind: c.kind,
          delivered: 1,
          lastDeliveredAt: now,
          lastLagMs: Math.min(now.getTime() - c.createdAt.getTime(), MAX_LAG_MS),
        },
      ]);
    }
    case "retry":
      logger().warn({ ...log, err: r.error, retryInMs: r.delayMs }, "service call failed; will retry");
      if (
        !(await write(
          `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', "runAt" = now() + ($3::bigint * interval '1 millisecond'),
             "lastError" = $4, cause = $4, "lastResponse" = $5::jsonb, attempts = GREATEST(attempts - $6::int, 0), ${release} WHERE id = $1::bigint`,
          [r.delayMs, r.error, response, r.giveBackAttempt ? 1 : 0]
        ))
      )
        return;
      return counted([{ shop: c.shop, kind: c.kind, failed: 1 }]);
    case "dead":
    case "refused": {
      logger().error(
        { ...log, err: r.error },
        r.status === "dead" ? "service call dead-lettered" : "service refused the call"
      );
      const written = await write(
        `UPDATE "OutboundCall" SET status = $3, "lastError" = $4, cause = $6, "lastResponse" = $5::jsonb, ${release} WHERE id = $1::bigint`,
        [r.status === "dead" ? CALL_STATUS.dead : CALL_STATUS.refused, r.error, response, (r.status === "dead" && r.cause) || r.error]
      );
      if (!written) return;
      if (r.status === "dead") await forgetContent(c);
      return counted([{ shop: c.shop, kind: c.kind, failed: 1, ...(r.status === "dead" ? { dead: 1 } : { skipped: 1 }) }]);
    }
    case "paused":
      // Not the call's fault: give the attempt back and wait for the merchant to reconnect.
      await write(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', attempts = attempts - 1, "lastError" = $3, cause = $3, ${release} WHERE id = $1::bigint`,
        [r.error]
      );
      return;
  }
}

/**
 * The service never got this content: forget its hash, so the next identical change of the
 * object is sent instead of being skipped as "unchanged" (only if no newer call of the kind
 * was planned since).
 */
async function forgetContent(c: ClaimedCall): Promise<void> {
  const call = c.call as ServiceCall;
  await database().sql.query(
    `UPDATE "ObjectState" SET "contentHashes" = "contentHashes" - $3::text
     WHERE shop = $1 AND "objectKey" = $2 AND "contentHashes" ->> $3::text = $4`,
    [c.shop, c.objectKey, callKind(call), contentHash(call)]
  );
}

