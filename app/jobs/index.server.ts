/**
 * The worker's jobs, one line each: where the features meet the engine. The runner
 * (pipeline/runner.server.ts) knows none of them; planning gets the features' topic handlers here.
 */
import { logger } from "../logger.server";
import { runHistoryImportStep, wakeBackfillForBulkOperation } from "../backfill/backfill.server";
import { completeWebhooks, fetchUnknownObjects } from "../backfill/lookup.server";
import { runReconcileStep } from "../backfill/reconcile.server";
import { campaignActivityStep } from "../campaigns/marketing-activity.server";
import { handleCompliance } from "../compliance/compliance.server";
import { confirmConsentOrigin } from "../compliance/consent-origin.server";
import { runConsentReturnStep } from "../consent-return/consent-return.server";
import { runSegmentImportStep } from "../segments/member-import.server";
import { runSignupStep } from "../signups/signups.server";
import { storefrontStep } from "../storefront/tracker.server";
import { checkInstallation } from "../shops/installation.server";
import { confirmLifecycle, handleLifecycle } from "../shops/lifecycle.server";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { fireDueTimers } from "../pipeline/abandonment.server";
import { pruneCounterHistory } from "../pipeline/counters.server";
import { DeliveryLane } from "../pipeline/deliver.server";
import { planDeliveries as planWith, planUnits, type TopicHandlers } from "../pipeline/plan-deliveries.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { journaledBacklog, moveSomeJournaledDeliveries } from "../pipeline/record.server";
import { pruneOldRows } from "../pipeline/retention.server";
import { startRunner, type JobTable, type Worker, type WorkerOptions } from "../pipeline/runner.server";
import { BACKFILL_STATUS, CALL_STATUS, DELIVERY_STATUS, TIMER_STATUS } from "../pipeline/status";
import { upkeepQueueTables } from "../pipeline/upkeep.server";
import { yieldToWebhooks } from "../pipeline/webhook-priority.server";

export type { Worker } from "../pipeline/runner.server";

/** The 30-day chart plus a day of margin. */
const COUNTER_HISTORY_DAYS = 31;

/** The topics planning hands on, by role, and the look-ups that complete a batch first. */
export const TOPIC_HANDLERS: TopicHandlers = {
  completeWebhooks,
  fetchUnknownObjects,
  confirmLifecycle: (deliveries) => confirmLifecycle(deliveries, checkInstallation),
  confirmConsentOrigin,
  lifecycle: handleLifecycle,
  compliance: handleCompliance,
  bulk: wakeBackfillForBulkOperation,
};

/** One planning pass with the app's topic handlers (tests and benchmarks call it directly). */
export function planDeliveries(workerId: string, policy: PipelinePolicy, callsPlanned?: (shops: Set<string>) => void): Promise<number> {
  return planWith(workerId, policy, TOPIC_HANDLERS, { callsPlanned });
}

/**
 * The jobs, in the order the runner takes them within a cadence. Planning and delivery share the
 * worker's delivery lane: calls in flight outlive a round, the lane claims more itself as answers
 * free places and wakes the loop when it runs empty. While webhooks arrive it leaves claiming to
 * the loop's rounds, which rest between units (webhook-priority.server.ts): refilling itself, it
 * delivered a fifth more during a burst and raised the acknowledgements' p99 on PGlite by 1–3 ms.
 */
export const JOBS: JobTable = (worker) => {
  /** A policy yieldToWebhooks shrank: webhooks are arriving in this process. */
  const givingWay = (policy: PipelinePolicy) => policy.batchSize < worker.policy.batchSize;
  const lane = new DeliveryLane(worker.id, {
    refill: async () => {
      if (worker.stopping()) return null;
      const now = await yieldToWebhooks(worker.policy);
      return givingWay(now) ? null : now;
    },
    onEmpty: worker.wakeUp,
  });
  const log = logger().child({ worker: worker.id });
  return [
    // Deliveries acknowledged into PGlite's journal are moved in as they come (the journal's own
    // timer); this takes in a few more before planning looks for work, unless a move is under way.
    { name: "journal move", cadence: { kind: "first" }, soft: true, run: moveSomeJournaledDeliveries, backlog: journaledBacklog },
    {
      name: "plan",
      cadence: { kind: "round" },
      // Each planning transaction tells the lane which shops it planned calls for, as it commits.
      // While webhooks arrive (a smaller policy) the rounds claim: a claim after every planning
      // unit of 8 slowed planning during a flood's acknowledgements (bench:fairness --send http).
      run: (policy) =>
        planUnits(worker.id, policy, TOPIC_HANDLERS, policy.planUnitsAtOnce, (shops) => void lane.plannedMore(givingWay(policy) ? [] : shops, policy)),
      dueSql: (due) => `EXISTS (SELECT 1 FROM "WebhookDelivery"
                    WHERE status IN ('${DELIVERY_STATUS.queued}','${DELIVERY_STATUS.running}') AND "runAt" <= ${due})`,
      leases: { table: "WebhookDelivery", free: DELIVERY_STATUS.queued, running: DELIVERY_STATUS.running },
    },
    {
      name: "deliver",
      cadence: { kind: "round" },
      run: (policy) => lane.topUp(policy),
      inFlight: () => lane.size,
      dueSql: (due) => `EXISTS (SELECT 1 FROM "OutboundCall" c JOIN "Shop" s ON s.domain = c.shop
                    WHERE c.status IN ('${CALL_STATUS.queued}','${CALL_STATUS.running}') AND c."runAt" <= ${due}
                      AND ${canReceiveDeliveriesSql("s")})`,
      leases: { table: "OutboundCall", free: CALL_STATUS.queued, running: CALL_STATUS.running },
      close: () => lane.close(),
    },
    {
      name: "timers",
      cadence: { kind: "side" },
      run: (policy) => fireDueTimers(worker.id, policy),
      dueSql: (due) => `EXISTS (SELECT 1 FROM "AbandonmentTimer"
                    WHERE status IN ('${TIMER_STATUS.pending}','${TIMER_STATUS.running}') AND "dueAt" <= ${due})`,
      leases: { table: "AbandonmentTimer", free: TIMER_STATUS.pending, running: TIMER_STATUS.running },
    },
    {
      name: "history import",
      cadence: { kind: "side" },
      run: (policy) => runHistoryImportStep(worker.id, policy),
      dueSql: (due) => `EXISTS (SELECT 1 FROM "BackfillRun" WHERE status IN ('${BACKFILL_STATUS.queued}','${BACKFILL_STATUS.running}') AND "runAt" <= ${due})`,
      leases: { table: "BackfillRun", free: BACKFILL_STATUS.queued, running: BACKFILL_STATUS.running },
    },
    { name: "reconcile", cadence: { kind: "side" }, soft: true, run: (policy) => runReconcileStep(worker.id, policy) },
    { name: "segment import", cadence: { kind: "side" }, run: (policy) => runSegmentImportStep(worker.id, policy) },
    // Unsubscribes and blocks at the service back to Shopify (app/consent-return), every consentReturnEveryMs.
    { name: "consent return", cadence: { kind: "side" }, soft: true, run: (policy) => runConsentReturnStep(worker.id, policy) },
    // Signups at the service's own forms become Shopify customers (app/signups), on the same cadence.
    { name: "signups", cadence: { kind: "side" }, soft: true, run: (policy) => runSignupStep(worker.id, policy) },
    // The daily tracker refresh (app/storefront): throttled inside, not counted as queue work.
    { name: "tracker refresh", cadence: { kind: "always" }, run: () => storefrontStep(worker.id) },
    // Campaigns in Shopify's Marketing section: retries and states, throttled inside.
    { name: "campaign activity", cadence: { kind: "always" }, run: () => campaignActivityStep() },
    {
      name: "upkeep",
      cadence: { kind: "lull", everyMs: (policy) => policy.upkeepCheckMs },
      soft: true,
      run: async () => {
        await upkeepQueueTables();
      },
    },
    {
      name: "prune",
      cadence: { kind: "every", everyMs: (policy) => policy.pruneEveryMs },
      run: async (policy) => {
        const pruned = await pruneOldRows(policy.retentionDays);
        if (pruned.calls || pruned.deliveries) log.info(pruned, "pruned old rows");
        // The health chart shows 30 days of hourly buckets; older ones go.
        await pruneCounterHistory(new Date(Date.now() - COUNTER_HISTORY_DAYS * 86_400_000));
      },
    },
  ];
};

/** A sync worker running the app's jobs: the entry of the sync pipeline (app/bin, app/server, tests, the demo). */
export function startWorker(options: WorkerOptions = {}): Worker {
  return startRunner(JOBS, options);
}
