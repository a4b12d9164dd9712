import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { config } from "../config.server";
import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import { runBackfillStep } from "../backfill/backfill.server";
import { runSegmentImportStep } from "../segments/member-import.server";
import { runConsentReturnStep } from "../consent-return/consent-return.server";
import { runSignupStep } from "../signups/signups.server";
import { storefrontStep } from "../storefront/tracker.server";
import { campaignActivityStep } from "../campaigns/marketing-activity.server";
import { fireDueTimers } from "./abandonment.server";
import { forgetClaimer, GIVE_BACK_CLAIM } from "./claim.server";
import { DeliveryLane } from "./deliver.server";
import { journaledBacklog, moveSomeJournaledDeliveries } from "./record.server";
import { planDeliveries } from "./plan-deliveries.server";
import { leaseFor, PIPELINE_POLICY, type PipelinePolicy } from "./policy";
import { BACKFILL_STATUS, CALL_STATUS, DELIVERY_STATUS, TIMER_STATUS } from "./status";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { pruneCounterHistory } from "./counters.server";
import { pruneOldRows } from "./retention.server";
import { upkeepQueueTables } from "./upkeep.server";
import { webhooksRecorded, yieldToWebhooks } from "./webhook-priority.server";
import { messageOf } from "../errors";
import { workerStarted, workerStopped } from "../observability/health.server";

/** Rows recorded, planned and delivered after which PGlite's statistics are refreshed before their time. */
const ANALYZE_AFTER_CHANGES = 2_000;

/** The 30-day chart plus a day of margin. */
const COUNTER_HISTORY_DAYS = 31;

export interface Worker {
  id: string;
  /**
   * Resolves when the queues hold nothing that is due (tests, the demo), nor due within
   * `dueWithinMs`: a retry planned a few milliseconds ahead is work still under way, not idleness.
   */
  idle(options?: { timeoutMs?: number; dueWithinMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

/** Ids of the workers running in this process: their leases are never orphans. */
const liveWorkers = new Set<string>();

/**
 * THE entry of the sync pipeline: a loop that plans recorded deliveries, delivers due calls and
 * fires due abandonment timers. Any number of workers may run, in the app process (PGlite and
 * the default) or alone (`npm run worker`, PostgreSQL).
 */
export function startWorker(options: { policy?: Partial<PipelinePolicy>; id?: string } = {}): Worker {
  const merged: PipelinePolicy = { ...PIPELINE_POLICY, ...config().workerPolicy, ...options.policy };
  // A lease given explicitly (tests) is kept as is; the default one outlasts any call in flight.
  const policy: PipelinePolicy = options.policy?.leaseMs
    ? merged
    : { ...merged, leaseMs: leaseFor(merged, config().marketingApiTimeoutMs) };
  const id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = logger().child({ worker: id });
  liveWorkers.add(id);
  let stopping = false;
  let lastPrune = 0;
  let lastAnalyze = 0;
  let changedSinceAnalyze = 0;
  let recordedAtAnalyze = webhooksRecorded();
  let lastSideWork = 0;
  let lastUpkeep = Date.now();
  let upkeepInFlight: Promise<unknown> | undefined;
  let sideWorkFound = false;
  let wake: (() => void) | undefined;
  // Set by whatever wakes the loop while it works, so that it does not then sleep a whole poll.
  let woken = false;
  const wakeUp = () => {
    woken = true;
    wake?.();
  };
  // Calls in flight outlive a round: the lane claims more itself as answers free places, and wakes
  // the loop when it runs empty. While webhooks arrive it leaves claiming to the loop's rounds,
  // which rest between units (webhook-priority.server.ts): refilling itself, it delivered a fifth
  // more during a burst and raised the acknowledgements' p99 on PGlite by 1–3 ms.
  const lane = new DeliveryLane(id, {
    refill: async () => {
      if (stopping) return null;
      const now = await yieldToWebhooks(policy);
      return now.batchSize < policy.batchSize ? null : now;
    },
    onEmpty: wakeUp,
  });
  const idleWaiters: { resolve: () => void; dueWithinMs: number }[] = [];

  async function tick(): Promise<number> {
    // Deliveries acknowledged into PGlite's journal are moved in as they come (the journal's own
    // timer); this takes in a few more before planning looks for work, unless a move is under way.
    const moved = await moveSomeJournaledDeliveries().catch(failed("journal move"));
    // Each unit of work first gives way to webhooks being acknowledged in this process.
    // Planning runs while the calls in flight wait on the service: the database and the CPU
    // would otherwise idle through every round trip.
    const [planned, delivered] = await Promise.all([
      yieldToWebhooks(policy)
        .then((p) => planDeliveries(id, p))
        .then((n) => {
          if (n) lane.plannedMore();
          return n;
        }),
      yieldToWebhooks(policy).then((p) => lane.topUp(p)),
    ]);
    // Due timers and history imports are rare next to calls: while planning and delivery keep the
    // worker busy they are looked for once per poll interval, not in every round (two claim
    // statements per round, ~5 % of a delivered call's CPU on PGlite).
    let fired = 0;
    let imported = 0;
    if (planned + delivered === 0 || sideWorkFound || Date.now() - lastSideWork >= policy.pollMs) {
      lastSideWork = Date.now();
      fired = await fireDueTimers(id, await yieldToWebhooks(policy));
      imported = await runBackfillStep(id, await yieldToWebhooks(policy));
      imported += await runSegmentImportStep(id, await yieldToWebhooks(policy));
      // Unsubscribes and blocks at the service back to Shopify (app/consent-return), every consentReturnEveryMs.
      imported += await runConsentReturnStep(id, await yieldToWebhooks(policy)).catch(failed("consent return"));
      // Signups at the service's own forms become Shopify customers (app/signups), on the same cadence.
      imported += await runSignupStep(id, await yieldToWebhooks(policy)).catch(failed("signups"));
      sideWorkFound = fired + imported > 0;
    }
    await storefrontStep(id); // the daily tracker refresh (app/storefront): throttled inside, not counted as queue work
    await campaignActivityStep(); // campaigns in Shopify's Marketing section: retries and states, throttled inside
    changedSinceAnalyze += planned + delivered;
    const pglite = database().kind === "pglite";
    // PGlite has no autovacuum: statistics every analyzeEveryMs, and sooner when the queues changed
    // a lot (a claim planned on statistics of an empty table sorts the whole backlog). Webhooks
    // recorded in this process count as changes: a burst fills the queue before the worker plans it.
    // A worker that has not refreshed them yet does so in its first pass, whatever arrives.
    const changed = changedSinceAnalyze + (webhooksRecorded() - recordedAtAnalyze);
    const stale = lastAnalyze === 0 || (changed >= ANALYZE_AFTER_CHANGES && Date.now() - lastAnalyze > 2_000);
    const analyzeDue = pglite && (stale || Date.now() - lastAnalyze > policy.analyzeEveryMs);
    const upkeepDue = Date.now() - lastUpkeep > policy.upkeepCheckMs && !upkeepInFlight;
    if (pglite && (analyzeDue || upkeepDue)) {
      // ANALYZE and VACUUM hold PGlite's one connection and the one thread: after one wait for a
      // lull. While webhooks keep arriving, VACUUM waits unless long overdue; statistics are still
      // refreshed when stale, because every claim planned without them sorts the whole backlog
      // (10 ms against 5 ms for a busy-sized batch at 3,000 queued, on every claim), while one
      // refresh from a small sample holds the thread once (16 ms at 3,000 rows).
      const busy = (await yieldToWebhooks(policy)).batchSize < policy.batchSize;
      if (analyzeDue && (!busy || stale || Date.now() - lastAnalyze > 10 * policy.analyzeEveryMs)) {
        lastAnalyze = Date.now();
        changedSinceAnalyze = 0;
        recordedAtAnalyze = webhooksRecorded();
        await refreshQueueStatistics();
      }
      if (upkeepDue && (!busy || Date.now() - lastUpkeep > 10 * policy.upkeepCheckMs)) {
        lastUpkeep = Date.now();
        await upkeepQueueTables().catch(failed("upkeep"));
      }
    } else if (upkeepDue) {
      // PostgreSQL vacuums beside the traffic: the loop goes on meanwhile.
      lastUpkeep = Date.now();
      upkeepInFlight = upkeepQueueTables()
        .catch(failed("upkeep"))
        .finally(() => (upkeepInFlight = undefined));
    }
    if (Date.now() - lastPrune > policy.pruneEveryMs) {
      lastPrune = Date.now();
      const pruned = await pruneOldRows(policy.retentionDays);
      if (pruned.calls || pruned.deliveries) log.info(pruned, "pruned old rows");
      // The health chart shows 30 days of hourly buckets; older ones go.
      await pruneCounterHistory(new Date(Date.now() - COUNTER_HISTORY_DAYS * 86_400_000));
    }
    return moved + planned + delivered + fired + imported;
  }

  const failed = (step: string) => (error: unknown) => {
    log.error({ err: messageOf(error) }, `worker ${step} failed`);
    return 0;
  };
  // Nothing in the loop may reject: a database outage is logged and retried on the next poll,
  // never an unhandled rejection that takes the process down.
  const loop = (async () => {
    if (database().kind === "pglite") await releaseOrphanedLeases().catch(failed("lease release"));
    while (!stopping) {
      woken = false;
      const work = await tick().catch(failed("tick"));
      if (work === 0 && !woken) {
        const horizon = Math.max(0, ...idleWaiters.map((w) => w.dueWithinMs));
        if (idleWaiters.length && lane.size === 0 && (await hasDueWork(horizon).catch(failed("idle check"))) === false && (await journaledBacklog()) === 0) {
          idleWaiters.splice(0).forEach((w) => w.resolve());
        }
        if (!woken) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, policy.pollMs);
          });
        }
      }
    }
  })();
  workerStarted();
  log.info("worker started");

  return {
    id,
    idle: ({ timeoutMs = 60_000, dueWithinMs = 0 } = {}) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`worker not idle after ${timeoutMs} ms`)), timeoutMs);
        idleWaiters.push({
          dueWithinMs,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        wakeUp();
      }),
    stop: async () => {
      stopping = true;
      wakeUp();
      await loop;
      await lane.close();
      await upkeepInFlight;
      forgetClaimer(id);
      liveWorkers.delete(id);
      workerStopped();
      log.info("worker stopped");
    },
  };
}

/**
 * PGlite belongs to one process, so at start every lease still held belongs to a process that
 * died (kill -9, power loss): hand the work back now instead of waiting for the leases to expire.
 * On PostgreSQL other live workers may hold leases; there, expiry does this.
 */
async function releaseOrphanedLeases(): Promise<void> {
  // The crash is not the call's fault: give back the attempt its claim counted. Leases of workers
  // running in this process are theirs (several workers start at once in tests and the demo).
  const release = GIVE_BACK_CLAIM;
  const notLive = `("lockedBy" IS NULL OR NOT ("lockedBy" = ANY($1::text[])))`;
  const live = [...liveWorkers];
  const tables = [
    ["WebhookDelivery", DELIVERY_STATUS.queued, DELIVERY_STATUS.running],
    ["OutboundCall", CALL_STATUS.queued, CALL_STATUS.running],
    ["AbandonmentTimer", TIMER_STATUS.pending, TIMER_STATUS.running],
    ["BackfillRun", BACKFILL_STATUS.queued, BACKFILL_STATUS.running],
  ] as const;
  for (const [table, free, running] of tables) {
    await prisma().$executeRawUnsafe(`UPDATE "${table}" SET status = '${free}', ${release} WHERE status = '${running}' AND ${notLive}`, live);
  }
}

/**
 * PGlite has no autovacuum: the worker refreshes the statistics the claims are planned with.
 * Only the columns the queue statements filter and sort on, from a small sample: a full ANALYZE
 * read the wide bodies too and held the thread 0.4–2 s at 6,000–200,000 rows (this: 6–100 ms).
 */
export async function refreshQueueStatistics(): Promise<void> {
  await database().sql.transaction(async (tx) => {
    await tx.exec(`SET LOCAL default_statistics_target = 10`);
    await tx.exec(
      `ANALYZE "WebhookDelivery" (id, status, "runAt", "lockedUntil", "receivedAt", source),
         "OutboundCall" (id, shop, "objectKey", status, "runAt", "lockedUntil", "createdAt", "deliveryId"),
         "AbandonmentTimer" (shop, status, "dueAt", "lockedUntil"),
         "Shop" (domain, "serviceKeyEnc", "pausedAt", "uninstalledAt")`,
    );
  });
}

/** Anything queued or in flight that a worker could act on now, or within `withinMs`? */
async function hasDueWork(withinMs: number): Promise<boolean> {
  const due = `now() + ${Math.round(withinMs)} * interval '1 millisecond'`;
  const [row] = await prisma().$queryRawUnsafe<{ due: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM "WebhookDelivery"
                    WHERE status IN ('${DELIVERY_STATUS.queued}','${DELIVERY_STATUS.running}') AND "runAt" <= ${due})
         OR EXISTS (SELECT 1 FROM "OutboundCall" c JOIN "Shop" s ON s.domain = c.shop
                    WHERE c.status IN ('${CALL_STATUS.queued}','${CALL_STATUS.running}') AND c."runAt" <= ${due}
                      AND ${canReceiveDeliveriesSql("s")})
         OR EXISTS (SELECT 1 FROM "AbandonmentTimer"
                    WHERE status IN ('${TIMER_STATUS.pending}','${TIMER_STATUS.running}') AND "dueAt" <= ${due})
         OR EXISTS (SELECT 1 FROM "BackfillRun" WHERE status IN ('${BACKFILL_STATUS.queued}','${BACKFILL_STATUS.running}') AND "runAt" <= ${due}) AS due`
  );
  return Boolean(row?.due);
}
