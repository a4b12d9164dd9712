import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { serviceClientsFor } from "../shops/connection.server";
import { claimCalls, handBackCalls, holdShop } from "./call-claims.server";
import { recordResult, ResultWrites } from "./call-results.server";
import { nextCursor } from "./claim.server";
import type { PipelinePolicy } from "./policy";
import { sendCall, type CallResult, type ClaimedCall, type ClientFor } from "./send-call.server";

/*
 * Delivery, in parts: this lane schedules (when to claim, which call goes next, how many per shop);
 * call-claims.server.ts claims due calls fairly between shops and hands them back;
 * send-call.server.ts sends one call and says what became of it; call-results.server.ts writes it.
 */

/**
 * Calls claimed ahead, in windows: up to two windows wait beside the calls in flight, claimed again
 * once fewer than one wait. With one window claimed again below half, the lane ran out of claimed
 * calls 15 % of the time on PGlite while its claim waited behind planning's statements; with two,
 * 1–2 % (bench:delivery, 2026-11-27). Three made each claim dearer (it skips the queued calls
 * behind every call held) and measured no better.
 */
const CLAIM_AHEAD_WINDOWS = 2;

/** Calls in the order to send them: round-robin between shops, each shop's in claim order. */
function interleaveByShop<T extends { shop: string }>(items: T[]): T[] {
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
    if (this.claim || this.ready.length >= policy.batchSize || this.writing >= policy.batchSize) {
      this.pump();
      return 0;
    }
    return this.claimAndSend(policy, CLAIM_AHEAD_WINDOWS * policy.batchSize - this.ready.length, []);
  }

  /**
   * New calls were planned for `shops`. A lane whose last claim came back short may claim again at
   * once; and a shop with none of its calls waiting here gets them claimed now, even while other
   * shops' calls fill the windows claimed ahead. It would otherwise wait until a window of those had
   * gone out: in the demo's flood, a quiet shop's change planned p50 827 ms after it was answered
   * then reached the service 1,161 ms later (bench:fairness --send http, 2026-11-28). Once claimed,
   * it goes out at the next free place (`nextToSend`: fewest calls at the service first).
   */
  async plannedMore(shops: Iterable<string> = [], policy = this.policy): Promise<number> {
    this.dry = false;
    if (!policy || this.closed) return 0;
    this.policy = policy;
    const planned = [...new Set(shops)];
    const waiting = () => new Set(this.ready.map((r) => r.call.shop));
    const newcomers = () => {
      const hasCalls = waiting();
      return planned.filter((shop) => !hasCalls.has(shop) && !this.troubled.has(shop));
    };
    // One claim at a time: a claim under way may already hold the new calls.
    if (newcomers().length) while (this.claim) await this.claim.catch(() => undefined);
    if (this.closed || !newcomers().length || this.writing >= policy.batchSize) {
      this.refillIfLow();
      return 0;
    }
    // The shops with calls waiting here have theirs: this claim is for the others. The calls are
    // planned already: a failed claim is logged, and the worker's next pass claims them.
    return this.claimAndSend(policy, policy.batchSize, [...waiting()]).catch((error) => {
      logger().warn({ worker: this.workerId, err: messageOf(error) }, "could not claim the calls just planned");
      return 0;
    });
  }

  private async claimAndSend(policy: PipelinePolicy, want: number, skip: string[]): Promise<number> {
    // A troubled shop is claimed no more calls than places it may still use (none: left out).
    const limited = new Map([...this.troubled].map((shop) => [shop, Math.max(0, this.room(shop) - this.readyOf(shop))]));
    const skipShops = [...new Set([...skip, ...[...limited].filter(([, n]) => n === 0).map(([shop]) => shop)])];
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
    // A claim that left shops out says nothing of whether more calls are due.
    if (!skip.length) this.dry = claimed.length < want;
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

  private handBack(ids: string[]): Promise<void> {
    return handBackCalls(this.workerId, ids);
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
      const result = await sendCall(c, policy, clientFor).finally(() => {
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
      await recordResult(this.workerId, c, result, this.writes);
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
  private noteAnswer(shop: string, result: CallResult, hold?: Promise<void>): void {
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

/** Decimal ids (bigint as text) in numeric order. */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

