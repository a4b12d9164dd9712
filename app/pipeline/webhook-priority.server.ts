import { setTimeout as sleep } from "node:timers/promises";
import type { PipelinePolicy } from "./policy";

/**
 * Webhook acknowledgements come before delivery work when both share a process (the in-process
 * worker, and always on PGlite, whose queries run on the one JavaScript thread). Shopify gives a
 * webhook 5 s and drops subscriptions that keep failing; a call to the service can wait.
 *
 * Ingest marks itself here; the worker asks before each unit of work, waits while webhooks are
 * being recorded, and takes small batches while they keep arriving. A worker in its own process
 * (`npm run worker`) never sees a webhook, so this costs it nothing.
 */
export const WEBHOOK_PRIORITY = {
  /** Webhooks seen this recently mean "busy": the worker takes small batches. */
  busyWindowMs: 1_000,
  /** The longest the worker waits for a lull, so delivery still moves under a steady stream. */
  maxWaitMs: 200,
  /**
   * While busy, the worker rests as long as its last unit of work took, so it holds the thread at
   * most half the time. Since acknowledgements on PGlite no longer wait for its connection (the
   * journal) nor for a whole transaction (a turn before each statement), a quarter of the time (3)
   * with units of 2 deliveries bought no better p99 and let a steady 25–50 webhooks/s outrun the
   * worker: it delivered ~14 a second (measured 2026-11-25, commit 39de310).
   */
  busyRestFactor: 1,
  /** Batch sizes while busy: one unit of work must stay short next to a 25 ms acknowledgement. */
  busyBatchSize: 32,
  busyPlanBatchSize: 8,
} as const;

interface PriorityState {
  /** Webhooks recorded by this process since it started (the worker counts them as queue changes). */
  recorded: number;
  inFlight: number;
  lastAt: number;
  lulls: (() => void)[];
  /** When the worker's current unit of work began; 0 while it waits for work (no unit under way). */
  unitStartedAt: number;
}
// One per process: the route and the worker share this module (one build, one module graph).
const shared: PriorityState = { recorded: 0, inFlight: 0, lastAt: 0, lulls: [], unitStartedAt: 0 };
function state(): PriorityState {
  return shared;
}

/** Runs an acknowledgement's database work as a webhook in flight. */
export async function asWebhookInFlight<T>(work: () => Promise<T>): Promise<T> {
  const s = state();
  s.inFlight++;
  s.lastAt = Date.now();
  try {
    return await work();
  } finally {
    s.recorded++;
    s.inFlight--;
    s.lastAt = Date.now();
    if (s.inFlight === 0) s.lulls.splice(0).forEach((resolve) => resolve());
  }
}

/** Webhooks this process has recorded since it started. */
export function webhooksRecorded(): number {
  return state().recorded;
}

/** A webhook was seen within busyWindowMs of `now`. */
function busyAt(now: number): boolean {
  return now - state().lastAt <= WEBHOOK_PRIORITY.busyWindowMs;
}

/**
 * How long the worker rests before its next unit while webhooks arrive: as long as its last unit
 * took (from its start to `now`), at most maxWaitMs; nothing after it waited for work.
 */
export function restBeforeNextUnitMs(now = Date.now()): number {
  const s = state();
  if (!busyAt(now) || !s.unitStartedAt) return 0;
  return Math.min((now - s.unitStartedAt) * WEBHOOK_PRIORITY.busyRestFactor, WEBHOOK_PRIORITY.maxWaitMs);
}

/**
 * The worker is about to wait for work (or has just started): the time it waits is not a unit of
 * work, so its next unit does not rest for it. (Counted as one, a worker that woke to a webhook
 * after an idle spell, or one started after another had stopped, first rested the full maxWaitMs.)
 */
export function workerWaitsForWork(): void {
  state().unitStartedAt = 0;
}

/**
 * Waits (at most `maxWaitMs`) until no webhook is being recorded, then returns the policy to use
 * for the next unit of work: the worker's own, or smaller batches while webhooks keep arriving.
 */
export async function yieldToWebhooks(policy: PipelinePolicy): Promise<PipelinePolicy> {
  const s = state();
  const restMs = restBeforeNextUnitMs();
  if (restMs > 0) await sleep(restMs);
  if (s.inFlight > 0) {
    await new Promise<void>((resolve) => {
      const onLull = () => {
        clearTimeout(timer);
        resolve();
      };
      // A stuck acknowledgement must not collect one waiter per poll: drop ours on timeout.
      const timer = setTimeout(() => {
        s.lulls = s.lulls.filter((waiter) => waiter !== onLull);
        resolve();
      }, WEBHOOK_PRIORITY.maxWaitMs);
      s.lulls.push(onLull);
    });
  }
  s.unitStartedAt = Date.now();
  if (!busyAt(Date.now())) return policy;
  return {
    ...policy,
    batchSize: Math.min(policy.batchSize, WEBHOOK_PRIORITY.busyBatchSize),
    planBatchSize: Math.min(policy.planBatchSize, WEBHOOK_PRIORITY.busyPlanBatchSize),
  };
}
