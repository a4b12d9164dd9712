import { countServiceCall } from "../observability/metrics.server";
import { database } from "../db.server";
import type { PreparedStatement } from "../db/migrate.server";
import { logger } from "../logger.server";
import type { MarketingClient } from "../services/marketing/client.server";
import { isMarketingServiceError, isPermanentRefusalForPerson, type MarketingServiceError } from "../services/marketing/marketing-error";
import type { ServiceCall } from "../services/marketing/schemas";
import { pauseShop, serviceClientsFor } from "../shops/connection.server";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { isCompleted } from "./abandonment.server";
import { claimRows, fairShareCandidates, GIVE_BACK_CLAIM, nextCursor } from "./claim.server";
import { bumpCounters, counterCtes, counterRows, type CounterDelta } from "./counters.server";
import { callKind, contentHash } from "./decide";
import { retryDelayMs, type PipelinePolicy } from "./policy";
import { CALL_STATUS } from "./status";
import { messageOf } from "../errors";

interface ClaimedCall {
  id: string;
  shop: string;
  objectKey: string;
  kind: string;
  call: unknown;
  attempts: number;
  createdAt: Date;
  retryFrom: Date;
  /** Planned from imported history: after the shop's live calls. */
  background: boolean;
}

type Result =
  | { status: "delivered" }
  | { status: "retry"; error: string; response?: unknown; delayMs: number; giveBackAttempt?: boolean; holdShopMs?: number }
  | { status: "dead"; error: string; response?: unknown }
  | { status: "refused"; error: string; response?: unknown }
  | { status: "paused"; error: string };

/**
 * Calls claimed ahead, in windows: up to two windows wait beside the calls in flight, claimed again
 * once fewer than one wait. With one window claimed again below half, the lane ran out of claimed
 * calls 15 % of the time on PGlite while its claim waited behind planning's statements; with two,
 * 1–2 % (bench:delivery, 2026-11-27). Three made each claim dearer (it skips the queued calls
 * behind every call held) and measured no better.
 */
const CLAIM_AHEAD_WINDOWS = 2;

/** Errors that mean the shop's key no longer works: stop the shop, keep its calls. */
const PAUSING = new Set(["unauthenticated", "account_inactive"]);

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
function claimCalls(
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

/** Calls in the order to send them: round-robin between shops, each shop's in claim order. */
export function interleaveByShop<T extends { shop: string }>(items: T[]): T[] {
  const byShop = new Map<string, T[]>();
  for (const item of items) {
    const list = byShop.get(item.shop);
    if (list) list.push(item);
    else byShop.set(item.shop, [item]);
  }
  const lists = [...byShop.values()];
  const out: T[] = [];
  for (let i = 0; out.length < items.length; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}

/**
 * One worker's calls in flight. It keeps up to `batchSize` of them at the service and starts the
 * next as each answer comes back, instead of sending a batch and waiting for its slowest answer:
 * with the service 20 ms away and 1 % of its answers 500 ms late, whole batches delivered 223–240
 * calls/s against 2,100 for 64 calls kept in flight (bench:delivery --service-latency 20
 * --service-tail 0.01:500). Calls are claimed ahead, up to two windows' worth waiting beside the
 * window, so no place waits for a claim statement. Results are written beside the next calls: a
 * crash re-sends only the calls whose result was not written yet (claimed calls not yet sent are
 * claimable again once their lease runs out; a worker that stops hands them back at once).
 */
export class DeliveryLane {
  /** Claimed, not sent yet, each with the service clients of its claim. */
  private ready: { call: ClaimedCall; clientFor: ClientFor }[] = [];
  /** Calls at the service per shop. */
  private readonly sending = new Map<string, number>();
  /**
   * Shops whose last answer was a failure (429, 5xx, timeout, network): each gets at most
   * `troubledShopConcurrency` places until an answer succeeds, so a failing or slow account cannot
   * fill the window that every other shop's calls share.
   */
  private readonly troubled = new Set<string>();
  /** Shops whose Retry-After hold is being written (how many writes): no place for them meanwhile. */
  private readonly holdsBeingWritten = new Map<string, number>();
  /** Where the next claim's round-robin over shops starts: after the last shop served. */
  private cursor = "";
  /** Ids of every call claimed whose result is not written yet. */
  private readonly held = new Set<string>();
  /** Sent, not answered yet. */
  private awaiting = 0;
  /** Answered, result not written yet. */
  private writing = 0;
  private refilling = false;
  private closed = false;
  /** The claim under way, if any. */
  private claim: Promise<ClaimedCall[]> | undefined;
  /** The last claim found fewer due calls than it asked for: none again until the worker's round. */
  private dry = false;
  private policy: PipelinePolicy | undefined;
  private readonly writes: ResultWrites;
  private emptied: (() => void)[] = [];

  /**
   * With `refill`, the lane claims again by itself when fewer than a window of claimed calls
   * wait (`refill` first gives way, e.g. to webhooks being acknowledged, then answers the policy to
   * claim with, or null for none), instead of waiting for the worker's next pass, which may be
   * planning. `onEmpty` is told when nothing is in flight any more.
   */
  constructor(
    private readonly workerId: string,
    private readonly options: { refill?: () => Promise<PipelinePolicy | null>; onEmpty?: () => void } = {},
  ) {
    this.writes = new ResultWrites(workerId);
  }

  /** Calls claimed whose result is not written yet. */
  get size(): number {
    return this.held.size;
  }

  /**
   * Claims due calls, up to two windows waiting to be sent, and sends as many as the window
   * has room for; returns how many it claimed. A claim is one statement whatever its size, so it
   * waits until fewer than a window wait, and for results to be written when the database lags.
   */
  async topUp(policy: PipelinePolicy): Promise<number> {
    if (this.closed) return 0;
    this.policy = policy;
    const want = CLAIM_AHEAD_WINDOWS * policy.batchSize - this.ready.length;
    if (this.claim || this.ready.length >= policy.batchSize || this.writing >= policy.batchSize) {
      this.pump();
      return 0;
    }
    // A troubled shop is claimed no more calls than places it may still use (none: left out).
    const limited = new Map([...this.troubled].map((shop) => [shop, Math.max(0, this.room(shop) - this.readyOf(shop))]));
    const skipShops = [...limited].filter(([, n]) => n === 0).map(([shop]) => shop);
    let claimed: ClaimedCall[];
    try {
      this.claim = (async () => {
        const rows = await claimCalls(this.workerId, policy, want, [...this.held], { cursor: this.cursor, skipShops, limited });
        // Closed meanwhile: nothing more is sent.
        if (!this.closed) return rows;
        await this.handBack(rows.map((c) => c.id));
        return [];
      })();
      claimed = await this.claim;
    } finally {
      this.claim = undefined;
    }
    if (this.closed) return 0;
    this.dry = claimed.length < want;
    this.cursor = nextCursor(this.cursor, claimed.map((c) => c.shop));
    // Live calls before history, then by id; shops take turns in the order sent.
    claimed.sort((a, b) => Number(a.background) - Number(b.background) || compareIds(a.id, b.id));
    claimed = interleaveByShop(claimed);
    // One key lookup per claim, for all its shops: a key replaced or removed since is read at the
    // next claim.
    const clients = claimed.length ? serviceClientsFor([...new Set(claimed.map((c) => c.shop))]) : undefined;
    clients?.catch(() => undefined); // a failed lookup fails each call of the claim (retried), below
    const clientFor: ClientFor = async (shop) => (await clients!).get(shop) ?? null;
    for (const call of claimed) {
      this.held.add(call.id);
      this.ready.push({ call, clientFor });
    }
    // A troubled shop keeps no more claimed calls than places it may use.
    for (const shop of new Set(claimed.map((c) => c.shop))) if (this.troubled.has(shop)) this.giveBackBeyond(shop, this.room(shop));
    this.pump();
    return claimed.length;
  }

  /** New calls were planned: a lane whose last claim came back short may claim again at once. */
  plannedMore(): void {
    this.dry = false;
    this.refillIfLow();
  }

  /** Resolves once every claimed call is answered and its result written. */
  drain(): Promise<void> {
    this.pump();
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.emptied.push(resolve));
  }

  /**
   * Stops sending: calls claimed ahead go back to the queue at once (their attempt given back), so
   * other workers need not wait for the leases of a worker shutting down; resolves once the calls
   * at the service are answered and written.
   */
  async close(): Promise<void> {
    this.closed = true;
    const unsent = this.ready.splice(0).map((r) => r.call.id);
    for (const id of unsent) this.held.delete(id);
    await this.handBack(unsent);
    await this.claim?.catch(() => undefined); // a claim under way hands its calls back before it ends
    if (this.size > 0) await new Promise<void>((resolve) => this.emptied.push(resolve));
  }

  private async handBack(ids: string[]): Promise<void> {
    if (!ids.length) return;
    await database()
      .sql.query(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', ${GIVE_BACK_CLAIM}
         WHERE id = ANY($1::bigint[]) AND ${FENCE}`,
        [ids, this.workerId],
      )
      // Their leases run out instead.
      .catch((error) => logger().warn({ worker: this.workerId, calls: ids.length, err: messageOf(error) }, "could not hand back claimed calls"));
  }

  /** Places a shop may still take at the service. */
  private room(shop: string): number {
    if (this.holdsBeingWritten.has(shop)) return 0;
    const policy = this.policy!;
    const cap = this.troubled.has(shop) ? policy.troubledShopConcurrency : policy.shopConcurrency;
    return Math.max(0, cap - (this.sending.get(shop) ?? 0));
  }

  private readyOf(shop: string): number {
    return this.ready.reduce((n, r) => n + (r.call.shop === shop ? 1 : 0), 0);
  }

  /**
   * Hands back a shop's claimed calls not sent yet beyond the first `keep` (a 429, a pause, trouble):
   * they leave the lane at once, and go back to the queue once `after` has settled.
   */
  private giveBackBeyond(shop: string, keep: number, after?: Promise<unknown>): void {
    const extra: string[] = [];
    let kept = 0;
    this.ready = this.ready.filter((r) => {
      if (r.call.shop !== shop || kept++ < keep) return true;
      extra.push(r.call.id);
      this.held.delete(r.call.id);
      return false;
    });
    if (extra.length) {
      void (after ? after.catch(() => undefined).then(() => this.handBack(extra)) : this.handBack(extra));
      this.finishIfEmpty();
    }
  }

  private pump(): void {
    if (this.closed) return;
    const window = this.policy?.batchSize ?? 0;
    while (this.awaiting < window && this.ready.length) {
      const at = this.nextToSend();
      if (at < 0) break;
      const [next] = this.ready.splice(at, 1);
      this.awaiting++;
      countUp(this.sending, next!.call.shop);
      void this.run(next!.call, this.policy!, next!.clientFor);
    }
    this.refillIfLow();
  }

  /**
   * The next call to send: the first waiting call of the shop with the fewest calls at the service
   * (and a place left), so a shop with one change waiting is not queued behind another shop's
   * calls claimed ahead; a shop's own calls go in claim order.
   */
  private nextToSend(): number {
    let at = -1;
    let fewest = Infinity;
    const seen = new Set<string>();
    for (let i = 0; i < this.ready.length; i++) {
      const shop = this.ready[i]!.call.shop;
      if (seen.has(shop)) continue;
      seen.add(shop);
      const sending = this.sending.get(shop) ?? 0;
      if (sending < fewest && this.room(shop) > 0) {
        fewest = sending;
        at = i;
        if (sending === 0) break;
      }
    }
    return at;
  }

  private finishIfEmpty(): void {
    if (this.size > 0) return;
    this.emptied.splice(0).forEach((resolve) => resolve());
    this.options.onEmpty?.();
  }

  private async run(c: ClaimedCall, policy: PipelinePolicy, clientFor: ClientFor): Promise<void> {
    try {
      const result = await deliverOne(c, policy, clientFor).finally(() => {
        this.awaiting--;
        this.writing++;
        countDown(this.sending, c.shop);
      });
      // The service's Retry-After holds the whole shop (every worker's claims skip it), not only this
      // call. From this answer on none of the shop's calls goes out; those claimed ahead go back to
      // the queue once the hold is written, so that none is claimed again meanwhile.
      const hold = result.status === "retry" && result.holdShopMs ? holdShop(c.shop, result.holdShopMs) : undefined;
      this.noteAnswer(c.shop, result, hold);
      if (hold) {
        countUp(this.holdsBeingWritten, c.shop);
        await hold.finally(() => countDown(this.holdsBeingWritten, c.shop));
      }
      this.pump();
      await record(this.workerId, c, result, this.writes);
    } catch (error) {
      // The result could not be written (the database is unreachable): the call stays leased to
      // this worker and is sent again once the lease runs out. At least once, never lost.
      logger().error({ worker: this.workerId, callId: c.id, err: messageOf(error) }, "could not record a call's result; it is sent again after its lease");
    } finally {
      this.held.delete(c.id);
      this.writing--;
      this.pump();
      this.finishIfEmpty();
    }
  }

  /**
   * One account's trouble stays its own: its calls claimed ahead go back (after `hold`, the shop's
   * Retry-After hold being written, if any), its places shrink.
   */
  private noteAnswer(shop: string, result: Result, hold?: Promise<void>): void {
    if (result.status === "delivered") this.troubled.delete(shop);
    else if (result.status === "paused" || hold) {
      // Not sendable before the hold (or the reconnection): other workers must not wait for them.
      this.troubled.add(shop);
      this.giveBackBeyond(shop, 0, hold);
    } else if (result.status === "retry") {
      this.troubled.add(shop);
      this.giveBackBeyond(shop, this.room(shop));
    }
  }

  private refillIfLow(): void {
    const { refill } = this.options;
    if (!refill || this.dry || this.refilling || this.claim || !this.policy || this.ready.length >= this.policy.batchSize) return;
    this.refilling = true;
    void refill()
      .then((policy) => (policy ? this.topUp(policy) : 0))
      // The worker's next pass claims again; a database outage is logged there too.
      .catch((error) => logger().warn({ worker: this.workerId, err: messageOf(error) }, "could not claim more calls"))
      .finally(() => (this.refilling = false));
  }
}

type ClientFor = (shop: string) => Promise<MarketingClient | null>;

/** Per-shop counts that hold only shops above zero (`has` means "some"). */
function countUp(counts: Map<string, number>, shop: string): void {
  counts.set(shop, (counts.get(shop) ?? 0) + 1);
}
function countDown(counts: Map<string, number>, shop: string): void {
  const left = (counts.get(shop) ?? 1) - 1;
  if (left > 0) counts.set(shop, left);
  else counts.delete(shop);
}

/** Claims one batch of due calls and delivers it whole (the benchmark's phases, tests). */
export async function deliverCalls(workerId: string, policy: PipelinePolicy): Promise<number> {
  const lane = new DeliveryLane(workerId);
  const claimed = await lane.topUp(policy);
  await lane.drain();
  return claimed;
}

/**
 * Writes results in groups: the answers that arrive within a few milliseconds share one statement
 * marking the delivered calls and adding to the counters (most calls succeed, and one statement per call was
 * the worker's largest cost; with answers spread out by a service far away, a group per turn of the
 * event loop still wrote one or two calls a statement). A crash re-sends only the calls whose group
 * was not written yet.
 */
class ResultWrites {
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

/** Lease fencing: a result is written only by the worker that still holds the call. */
const FENCE = `"lockedBy" = $2 AND status = '${CALL_STATUS.running}'`;

/**
 * A group of delivered calls marked and counted in one statement, planned once per connection: on
 * PGlite a group of 40 took 1.4–2.0 ms planned anew, 0.6–1.0 ms prepared (2026-11-27).
 */
const WRITE_DELIVERED: PreparedStatement = {
  name: "write_delivered",
  text: `WITH ${counterCtes(3)}, delivered AS (
      UPDATE "OutboundCall" SET status = '${CALL_STATUS.delivered}', "deliveredAt" = now(), "lastError" = NULL, "lockedBy" = NULL, "lockedUntil" = NULL
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
async function record(workerId: string, c: ClaimedCall, r: Result, writes: ResultWrites): Promise<void> {
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
             "lastError" = $4, "lastResponse" = $5::jsonb, attempts = GREATEST(attempts - $6::int, 0), ${release} WHERE id = $1::bigint`,
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
        `UPDATE "OutboundCall" SET status = $3, "lastError" = $4, "lastResponse" = $5::jsonb, ${release} WHERE id = $1::bigint`,
        [r.status === "dead" ? CALL_STATUS.dead : CALL_STATUS.refused, r.error, response]
      );
      if (!written) return;
      if (r.status === "dead") await forgetContent(c);
      return counted([{ shop: c.shop, kind: c.kind, failed: 1, ...(r.status === "dead" ? { dead: 1 } : { skipped: 1 }) }]);
    }
    case "paused":
      // Not the call's fault: give the attempt back and wait for the merchant to reconnect.
      await write(
        `UPDATE "OutboundCall" SET status = '${CALL_STATUS.queued}', attempts = attempts - 1, "lastError" = $3, ${release} WHERE id = $1::bigint`,
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

async function deliverOne(
  c: ClaimedCall,
  policy: PipelinePolicy,
  clientFor: (shop: string) => Promise<MarketingClient | null>
): Promise<Result> {
  // The client validates the call before sending it (a bad one fails as a local validation error).
  const call = c.call as ServiceCall;
  try {
    if (isAbandonedCart(call) && Date.now() - c.createdAt.getTime() > policy.reminderMaxAgeMs)
      return { status: "refused", error: `reminder not sent: more than ${Math.round(policy.reminderMaxAgeMs / 3_600_000)} h old` };
    if (await abandonedCartAlreadyBought(c, call))
      return { status: "refused", error: "checkout completed by an order before sending" };
    const client = await clientFor(c.shop);
    if (!client) return { status: "paused", error: "shop is not connected" };
    try {
      await client.perform(call);
    } catch (error) {
      const resend = isMarketingServiceError(error) ? emailChangeFallback(call, error) : [];
      if (!isMarketingServiceError(error) || !resend.length) throw error;
      // Ids only: the addresses are personal data.
      logger().info({ shop: c.shop, callId: c.id, objectKey: c.objectKey, err: error.kind }, "email change not applicable; sent to the new address");
      for (const next of resend) await client.perform(next);
    }
    return { status: "delivered" };
  } catch (error) {
    if (!isMarketingServiceError(error)) {
      const message = messageOf(error);
      return retryOrDie(c, policy, `unexpected: ${message}`);
    }
    if (PAUSING.has(error.kind)) {
      await pauseShop(c.shop, `${error.kind}: ${error.message}`);
      return { status: "paused", error: error.kind };
    }
    // Deleting a person the service does not have (never synced, or already deleted) has done
    // what it was for: a redaction or a deletion must not become a dead letter for that.
    if (call.op === "person.delete" && error.kind === "person_not_found") return { status: "delivered" };
    const reason = describeError(error);
    if (isRefusalForUnreachablePerson(call, error)) return { status: "refused", error: reason, response: error.body };
    if (error.retryable) {
      // A 429 that says when to come back is flow control, not a failure of the call: it does not
      // use up attempts (a backlog draining under a rate limit for hours would otherwise die of
      // them long before the deadline); the deadline still bounds it.
      const flowControl = error.kind === "rate_limited" && error.retryAfterMs !== undefined;
      return retryOrDie(c, policy, reason, error.body, error.retryAfterMs, flowControl);
    }
    return { status: "dead", error: reason, response: error.body };
  }
}

/**
 * An email change the service cannot apply — the old contact is gone, or the new address already
 * has a contact — still carries the customer's latest data and consent. Dead-lettering it would lose
 * an unsubscribe (or a subscribe) for the address the customer now uses, so the same body is sent
 * to the new address as a plain upsert. When the new address was taken, the old contact stays in the
 * service: an unsubscribe is sent to it too, so neither address keeps mailing a customer who opted
 * out. Empty: the error is handled as usual. Upserts are idempotent, so a retry may repeat them.
 */
export function emailChangeFallback(call: ServiceCall, error: MarketingServiceError): ServiceCall[] {
  if (call.op !== "person.upsert" || call.body.emailChange === undefined) return [];
  const oldGone = error.kind === "person_not_found";
  const newTaken = error.status === 422 && !error.local && error.errors?.emailChange !== undefined;
  if (!oldGone && !newTaken) return [];
  // An id would address the old contact again.
  const { emailChange, id: _oldId, ...body } = call.body;
  const toNew: ServiceCall = { op: "person.upsert", body: { ...body, email: emailChange } };
  if (!newTaken || body.statusDetails !== "unsubscribed") return [toNew];
  const { source, status, statusDetails, skipDoubleOptIn } = body;
  return [toNew, { op: "person.upsert", body: { email: call.body.email, source, status, statusDetails, skipDoubleOptIn } }];
}

/** What support reads: the kind, the message, and the per-field messages when there are some. */
function describeError(error: MarketingServiceError): string {
  const fields = Object.entries(error.errors ?? {}).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
  return `${error.kind}: ${error.message}${fields.length ? ` (${fields.join("; ")})` : ""}`;
}

/**
 * Retries until the deadline (24 h after the call was planned or replayed, by default) or the
 * attempt bound; a retry that would only start after the deadline gives up now.
 */
function retryOrDie(
  c: ClaimedCall,
  policy: PipelinePolicy,
  error: string,
  response?: unknown,
  retryAfterMs?: number,
  flowControl = false
): Result {
  const delayMs = retryDelayMs(c.attempts, policy, retryAfterMs);
  const deadline = c.retryFrom.getTime() + policy.retryDeadlineMs;
  if ((!flowControl && c.attempts >= policy.maxAttempts) || Date.now() + delayMs > deadline) {
    const tried = Math.round((Date.now() - c.retryFrom.getTime()) / 60_000);
    return { status: "dead", error: `gave up after ${c.attempts} attempts; last: ${error} (retried for ${tried} min)`, response };
  }
  return { status: "retry", error, response, delayMs, giveBackAttempt: flowControl, ...(flowControl ? { holdShopMs: delayMs } : {}) };
}

/** No call of the shop is claimed for `ms` (a later hold already set is kept). */
async function holdShop(shop: string, ms: number): Promise<void> {
  await database().sql.query(
    `UPDATE "Shop" SET "deliveryHoldUntil" = GREATEST(COALESCE("deliveryHoldUntil", now()), now() + ($2::bigint * interval '1 millisecond'))
     WHERE domain = $1`,
    [shop, ms],
  );
}

/** Decimal ids (bigint as text) in numeric order. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * SQL for what a dead letter failed of, from its stored `lastError`, without the attempt count and
 * the minutes of the give-up message above (each dead letter of one long outage has its own), so
 * the Problems page shows one group per cause, not one per dead letter.
 */
export function deadLetterCauseSql(lastError: string): string {
  return `regexp_replace(coalesce(${lastError}, ''), '^gave up after [0-9]+ attempts; last: (.*) [(]retried for [0-9]+ min[)]$', 'Gave up retrying: \\1')`;
}

/**
 * The service refuses to change the status of a blocked or hard-bounced person. Retrying cannot
 * help and replaying would not either, so such a refusal is recorded and not retried.
 */
function isRefusalForUnreachablePerson(call: ServiceCall, error: MarketingServiceError): boolean {
  return call.op === "person.upsert" && isPermanentRefusalForPerson(error);
}

function isAbandonedCart(call: ServiceCall): call is Extract<ServiceCall, { op: "event"; type: "cart" }> {
  return call.op === "event" && call.type === "cart" && call.action === "abandoned";
}

/** Right before a cart/abandoned goes out: was the checkout bought meanwhile? */
async function abandonedCartAlreadyBought(c: ClaimedCall, call: ServiceCall): Promise<boolean> {
  if (!isAbandonedCart(call)) return false;
  const cartId = String((call.body as { id?: unknown }).id ?? "");
  const checkoutToken = c.objectKey.startsWith("checkout:") ? c.objectKey.slice("checkout:".length) : undefined;
  return isCompleted(database().sql, c.shop, [cartId, checkoutToken]);
}
