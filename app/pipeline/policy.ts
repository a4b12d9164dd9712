/** The delivery pipeline's numbers, in one place. */
// Stryker disable ArithmeticOperator: the products below only spell durations (24 h, 15 min); a test restating them would only copy them
export const PIPELINE_POLICY = {
  /**
   * A claimed row belongs to its worker this long; a crashed worker's rows are taken over after
   * it. The worker never runs with a lease shorter than LEASE_PER_TIMEOUT × the service timeout
   * (see leaseFor), so a call in flight always finishes before its lease can pass to another.
   */
  leaseMs: 60_000,
  /** Service calls in flight per worker (its window); up to two windows more wait claimed beside it (deliver.server.ts). */
  batchSize: 64,
  /**
   * Calls of one shop (one marketing account) at the service at once, per worker. A shop whose last
   * answer failed (429, 5xx, timeout) gets troubledShopConcurrency until one succeeds, so a failing
   * or slow account holds at most that many of the places every other shop shares.
   */
  shopConcurrency: 64,
  troubledShopConcurrency: 2,
  /**
   * Shops one claim serves at most (round-robin: the next claim starts after the last one served).
   * 0 claims first come, first served across shops instead: only for benchmarks to compare with.
   */
  fairShareShops: 64,
  /**
   * Deliveries planned per transaction. On PGlite a transaction holds the only connection, but
   * while webhooks arrive the worker plans 8 at a time (webhook-priority.server.ts). A planning
   * transaction is ~9 statements whatever its size, and the calls it plans are what the lane sends
   * next: 128 cost 8 % less of the worker's CPU per delivered call than 64 on PGlite and 12 % less
   * on PostgreSQL (medians of five alternating pairs, docs/scaling.md, 2026-11-27).
   */
  planBatchSize: 128,
  /**
   * Planning units a worker runs at once, each started when the one before it claimed a full
   * batch. A unit waits for Shopify (the consent of new subscribers, lookups) before it writes:
   * with Shopify 150 ms away, one unit at a time planned 3,000 new subscribers at a third of the
   * service's pace (bench:delivery --admin-latency 150, 2026-11-29). While webhooks arrive in the
   * process the units are small (webhook-priority.server.ts) and the worker rests after them as long
   * as they took: four of them kept up with a steady 200 webhooks/s on PGlite where one left a third
   * queued (bench:ack, 2026-11-29).
   */
  planUnitsAtOnce: 4,
  /** Idle wait between polls when there is nothing to do. */
  pollMs: 250,
  /**
   * A call that keeps failing is retried until this long after it was planned (or replayed):
   * longer than real outages (Shopify itself retries webhooks for 4 hours), then it becomes a
   * dead letter that support can replay.
   */
  retryDeadlineMs: 24 * 60 * 60_000,
  /**
   * A safety bound on attempts within the deadline, so that the deadline decides: full jitter
   * waits half the cap on average, about 200 attempts in 24 h (at 200, half the calls of a
   * day-long outage died of attempts first). A 429 with Retry-After uses up none.
   */
  maxAttempts: 400,
  /**
   * An abandoned-cart reminder is not sent once it is older than this (counted from the moment its
   * timer fired): a shop that was paused or disconnected meanwhile must not remind customers days
   * later, of checkouts they may have bought since. It is recorded as refused, with the reason.
   */
  reminderMaxAgeMs: 24 * 60 * 60_000,
  /** Planning and timers fail only on bugs or bad data: a few tries, then recorded as invalid. */
  maxPlanAttempts: 5,
  /** A history import step (Shopify's export, its file): tries before the import is failed with its reason. */
  maxImportStepAttempts: 5,
  /** ...each waiting this many ms per try so far (5 s, 10 s, 15 s, 20 s). */
  importStepRetryStepMs: 5_000,
  /** Failed pages in a row before a segment member import stops and Settings offers "Try again". */
  maxSegmentImportAttempts: 8,
  /**
   * Failed tries of one page after which a sweep of the service's people (consent return, signups)
   * waits for its next interval (consentReturnEveryMs), from the same page.
   */
  sweepTriesPerInterval: 5,
  /** Exponential backoff with full jitter: random(0, min(cap, base * 2^(attempt-1))). */
  backoffBaseMs: 2_000,
  backoffCapMs: 15 * 60_000,
  /** Objects a history import records per step (one transaction, one checkpoint). */
  backfillChunk: 500,
  /** How often a history export still running at Shopify is polled. */
  backfillPollMs: 2_000,
  /**
   * A webhook waiting for an unknown object to be fetched from Shopify (network, throttling, not
   * found) is retried with backoff this long after it arrived; then a consent change is planned with
   * what it carries, a refund or an edit recorded as ignored with the reason.
   */
  lookupDeadlineMs: 6 * 60 * 60_000,
  /** The daily reconciliation sweep: how often, and how far back it overlaps the previous one. */
  reconcileEveryMs: 24 * 60 * 60_000,
  reconcileOverlapMs: 10 * 60_000,
  /** A sweep whose pages keep failing this long after it started is given up until the next one. */
  reconcileDeadlineMs: 6 * 60 * 60_000,
  /**
   * How often each connected shop's unsubscribes and blocks at the service are returned to Shopify
   * (app/consent-return; the demo: 2 minutes).
   */
  consentReturnEveryMs: 15 * 60_000,
  /** Delivered calls and finished deliveries are deleted after this many days. */
  retentionDays: 14,
  pruneEveryMs: 60 * 60_000,
  /** PGlite has no autovacuum: refresh the queue tables' statistics this often. */
  analyzeEveryMs: 30_000,
  /** How often a worker looks whether the queue tables need a VACUUM (upkeep.server.ts). */
  upkeepCheckMs: 5_000,
} as const;
// Stryker restore ArithmeticOperator

export type PipelinePolicy = { -readonly [K in keyof typeof PIPELINE_POLICY]: number };

/** The lease is at least this many service timeouts long. */
export const LEASE_PER_TIMEOUT = 4;

/** The lease a worker uses: the policy's, stretched so a call in flight cannot outlive it. */
export function leaseFor(policy: Pick<PipelinePolicy, "leaseMs">, serviceTimeoutMs: number): number {
  return Math.max(policy.leaseMs, LEASE_PER_TIMEOUT * serviceTimeoutMs);
}

export function backoffMs(attempt: number, policy: Pick<PipelinePolicy, "backoffBaseMs" | "backoffCapMs">): number {
  // 2^attempt overflows to Infinity long before attempts run out; min() keeps it at the cap.
  const ceiling = Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.min(Math.max(0, attempt - 1), 40));
  return Math.round(Math.random() * ceiling);
}

/**
 * The shortest wait after a Retry-After: `Retry-After: 0` or a past date would otherwise re-send at
 * once, and a 429 gives its attempt back, so the call would hammer the service until its deadline.
 */
export const MIN_RETRY_AFTER_MS = 1_000;

/**
 * The wait before the next attempt: the service's Retry-After when it gives one (at least the first
 * backoff step and MIN_RETRY_AFTER_MS), never beyond the cap.
 */
export function retryDelayMs(
  attempt: number,
  policy: Pick<PipelinePolicy, "backoffBaseMs" | "backoffCapMs">,
  retryAfterMs?: number,
): number {
  // Stryker disable next-line ConditionalExpression: Number.isFinite(undefined) is false too; the check narrows the type
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    const floor = Math.max(policy.backoffBaseMs, MIN_RETRY_AFTER_MS);
    return Math.min(Math.max(Math.round(retryAfterMs), floor), policy.backoffCapMs);
  }
  return backoffMs(attempt, policy);
}

/** Background work that is tried again when it fails, each with its own rule (retryRule). */
export type RetriedWork =
  | "serviceCall"
  | "planning"
  | "reminderTimer"
  | "lookup"
  | "reconcileSweep"
  | "historyImportStep"
  | "segmentImport"
  | "serviceSweep";

/** When a kind of work gives up, and how long it waits before its next try otherwise. */
export interface RetryRule {
  /** Gives up once this many tries have failed (the one that just failed included). */
  maxAttempts?: number;
  /** Gives up once this long has passed since the work's `since`. */
  deadlineMs?: number;
  /** The deadline bounds the next try too: gives up now when the wait would end past it. */
  nextTryWithinDeadline?: boolean;
  /** Past maxAttempts it does not give up: it rests this long (its attempts start over). */
  restMs?: number;
  /** Waits this many ms per failed try instead of the exponential backoff. */
  linearStepMs?: number;
}

/** The rule of each kind of work, from the policy's numbers (their reasons are in PIPELINE_POLICY). */
export function retryRule(work: RetriedWork, policy: PipelinePolicy): RetryRule {
  switch (work) {
    case "serviceCall":
      // Retried until the deadline (24 h after the call was planned or replayed) or the attempt bound.
      return { maxAttempts: policy.maxAttempts, deadlineMs: policy.retryDeadlineMs, nextTryWithinDeadline: true };
    case "planning":
    case "reminderTimer":
      return { maxAttempts: policy.maxPlanAttempts };
    case "lookup":
      return { deadlineMs: policy.lookupDeadlineMs };
    case "reconcileSweep":
      return { deadlineMs: policy.reconcileDeadlineMs };
    case "historyImportStep":
      return { maxAttempts: policy.maxImportStepAttempts, linearStepMs: policy.importStepRetryStepMs };
    case "segmentImport":
      return { maxAttempts: policy.maxSegmentImportAttempts };
    case "serviceSweep":
      return { maxAttempts: policy.sweepTriesPerInterval, restMs: policy.consentReturnEveryMs };
  }
}

/** One failed try of some work, as the decision reads it. */
export interface Failure {
  /** Tries so far, the failed one included. */
  attempts: number;
  /** Where the deadline counts from: the work's arrival, a sweep's start, a call's planning or its replay. */
  since?: Date;
  /** The service's Retry-After, when it gave one. */
  retryAfterMs?: number;
  /** Trying again cannot help (data that cannot be used): gives up now. */
  permanent?: boolean;
  /** A 429 that says when to come back: flow control, it uses up no attempt (the deadline still bounds it). */
  flowControl?: boolean;
}

/** What a failure leads to: a next try after `delayMs` (`rest`: a sweep's rest, its attempts start over), or giving up. */
export type NextTry = { giveUp: false; delayMs: number; rest: boolean } | { giveUp: true; delayMs: number };

/**
 * The one place that decides whether failed work is tried again, and when. `delayMs` is given when
 * it gives up too (some work records when it would have run).
 */
export function nextTry(work: RetriedWork, failure: Failure, policy: PipelinePolicy, now = Date.now()): NextTry {
  const rule = retryRule(work, policy);
  const delayMs = rule.linearStepMs !== undefined ? rule.linearStepMs * failure.attempts : retryDelayMs(failure.attempts, policy, failure.retryAfterMs);
  const tooMany = rule.maxAttempts !== undefined && !failure.flowControl && failure.attempts >= rule.maxAttempts;
  if (tooMany && rule.restMs !== undefined) return { giveUp: false, delayMs: rule.restMs, rest: true };
  const deadline = rule.deadlineMs !== undefined && failure.since ? failure.since.getTime() + rule.deadlineMs : Infinity;
  const late = rule.nextTryWithinDeadline ? now + delayMs > deadline : now > deadline;
  if (failure.permanent || tooMany || late) return { giveUp: true, delayMs };
  return { giveUp: false, delayMs, rest: false };
}
