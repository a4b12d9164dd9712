import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { config } from "../config.server";
import { database, prisma } from "../db.server";
import { logger } from "../logger.server";
import { forgetClaimer, GIVE_BACK_CLAIM } from "./claim.server";
import { leaseFor, PIPELINE_POLICY, type PipelinePolicy } from "./policy";
import { webhooksRecorded, workerWaitsForWork, yieldToWebhooks } from "./webhook-priority.server";
import { messageOf } from "../errors";
import { workerStarted, workerStopped } from "../observability/health.server";

/** Rows recorded, planned and delivered after which PGlite's statistics are refreshed before their time. */
const ANALYZE_AFTER_CHANGES = 2_000;

/**
 * When a job runs in the loop's round:
 * - "first": before anything else, counted as work (the acknowledgement journal's move);
 * - "round": every round, side by side with the other round jobs, after giving way to webhooks;
 *   what they do counts towards the statistics refresh;
 * - "side": rare next to the round jobs, one after the other, when the round found nothing, when
 *   side work was found last time, or once per poll interval;
 * - "always": every round, throttled inside, not counted as queue work;
 * - "lull": every `everyMs`, the first time after one interval; on PGlite after waiting for a lull
 *   (it holds the one connection), on PostgreSQL beside the traffic;
 * - "every": every `everyMs`, in the round, the first time at once.
 */
export type Cadence =
  | { kind: "first" | "round" | "side" | "always" }
  | { kind: "lull" | "every"; everyMs: (policy: PipelinePolicy) => number };

/** One kind of work the runner does; the runner itself knows none (app/jobs lists them). */
export interface Job {
  name: string;
  cadence: Cadence;
  /** Does one unit; the number of items it handled (0: found nothing). */
  run(policy: PipelinePolicy): Promise<number | void>;
  /** A failure is logged and counts as no work, instead of ending the round. */
  soft?: boolean;
  /** Items held in this process (claimed, not finished): the worker is not idle while any are. */
  inFlight?(): number;
  /** A condition of "due work" in SQL, given the SQL time `due` (now plus a horizon). */
  dueSql?(due: string): string;
  /** Items waiting outside the database (the journal): the worker is not idle while any are. */
  backlog?(): Promise<number>;
  /** The queue whose running rows this job leases: freed at start when their worker died (PGlite). */
  leases?: { table: string; free: string; running: string };
  /** Lets go of what the job holds (calls in flight finish, what was claimed ahead goes back). */
  close?(): Promise<void>;
}

/** What a job table is given for each worker it is started for. */
export interface JobWorker {
  id: string;
  policy: PipelinePolicy;
  stopping(): boolean;
  /** Ends the loop's sleep: there is work again. */
  wakeUp(): void;
}

/** A job table: the jobs of one worker (jobs may share state, such as the delivery lane). */
export type JobTable = (worker: JobWorker) => Job[];

export interface Worker {
  id: string;
  /**
   * Resolves when the queues hold nothing that is due (tests, the demo), nor due within
   * `dueWithinMs`: a retry planned a few milliseconds ahead is work still under way, not idleness.
   */
  idle(options?: { timeoutMs?: number; dueWithinMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  policy?: Partial<PipelinePolicy>;
  id?: string;
}

/** Ids of the workers running in this process: their leases are never orphans. */
const liveWorkers = new Set<string>();

/**
 * THE loop of the sync pipeline, knowing no jobs: it runs those of `table` (app/jobs) at their
 * cadences, gives way to webhooks being acknowledged, sleeps a poll interval when nothing was
 * found and wakes when work arrives. Any number of workers may run, in the app process (PGlite and
 * the default) or alone (`npm run worker`, PostgreSQL).
 */
export function startRunner(table: JobTable, options: WorkerOptions = {}): Worker {
  const merged: PipelinePolicy = { ...PIPELINE_POLICY, ...config().workerPolicy, ...options.policy };
  // A lease given explicitly (tests) is kept as is; the default one outlasts any call in flight.
  const policy: PipelinePolicy = options.policy?.leaseMs
    ? merged
    : { ...merged, leaseMs: leaseFor(merged, config().marketingApiTimeoutMs) };
  const id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = logger().child({ worker: id });
  liveWorkers.add(id);
  let stopping = false;
  let lastAnalyze = 0;
  let changedSinceAnalyze = 0;
  let recordedAtAnalyze = webhooksRecorded();
  let lastSideWork = 0;
  let sideWorkFound = false;
  let wake: (() => void) | undefined;
  // Set by whatever wakes the loop while it works, so that it does not then sleep a whole poll.
  let woken = false;
  const wakeUp = () => {
    woken = true;
    wake?.();
  };
  const jobs = table({ id, policy, stopping: () => stopping, wakeUp });
  const withCadence = (kind: Cadence["kind"]) => jobs.filter((j) => j.cadence.kind === kind);
  const [first, round, side, always, lull, every] = (["first", "round", "side", "always", "lull", "every"] as const).map(withCadence);
  const everyMs = (job: Job) => ("everyMs" in job.cadence ? job.cadence.everyMs(policy) : 0);
  // "every" jobs run at once; "lull" jobs (upkeep) wait their interval first.
  const lastRun = new Map<Job, number>([...every.map((j) => [j, 0] as const), ...lull.map((j) => [j, Date.now()] as const)]);
  const inBackground = new Map<Job, Promise<unknown>>();
  const idleWaiters: { resolve: () => void; dueWithinMs: number }[] = [];

  const failed = (step: string) => (error: unknown) => {
    log.error({ err: messageOf(error) }, `worker ${step} failed`);
    return 0;
  };
  const run = (job: Job, p: PipelinePolicy): Promise<number> => {
    const done = job.run(p).then((n) => n ?? 0);
    return job.soft ? done.catch(failed(job.name)) : done;
  };
  const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);

  async function tick(): Promise<number> {
    let moved = 0;
    for (const job of first) moved += await run(job, policy);
    // Each unit of work first gives way to webhooks being acknowledged in this process. The round
    // jobs run side by side: planning runs while the calls in flight wait on the service; the
    // database and the CPU would otherwise idle through every round trip.
    const roundWork = sum(await Promise.all(round.map((job) => yieldToWebhooks(policy).then((p) => run(job, p)))));
    // Due timers and history imports are rare next to calls: while planning and delivery keep the
    // worker busy they are looked for once per poll interval, not in every round (two claim
    // statements per round, ~5 % of a delivered call's CPU on PGlite).
    let sideWork = 0;
    if (roundWork === 0 || sideWorkFound || Date.now() - lastSideWork >= policy.pollMs) {
      lastSideWork = Date.now();
      for (const job of side) sideWork += await run(job, await yieldToWebhooks(policy));
      sideWorkFound = sideWork > 0;
    }
    for (const job of always) await run(job, policy);
    changedSinceAnalyze += roundWork;
    const pglite = database().kind === "pglite";
    // PGlite has no autovacuum: statistics every analyzeEveryMs, and sooner when the queues changed
    // a lot (a claim planned on statistics of an empty table sorts the whole backlog). Webhooks
    // recorded in this process count as changes: a burst fills the queue before the worker plans it.
    // A worker that has not refreshed them yet does so in its first pass, whatever arrives.
    const changed = changedSinceAnalyze + (webhooksRecorded() - recordedAtAnalyze);
    const stale = lastAnalyze === 0 || (changed >= ANALYZE_AFTER_CHANGES && Date.now() - lastAnalyze > 2_000);
    const analyzeDue = pglite && (stale || Date.now() - lastAnalyze > policy.analyzeEveryMs);
    const lullDue = lull.filter((job) => Date.now() - lastRun.get(job)! > everyMs(job) && !inBackground.has(job));
    if (pglite && (analyzeDue || lullDue.length)) {
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
      for (const job of lullDue) {
        if (busy && Date.now() - lastRun.get(job)! <= 10 * everyMs(job)) continue;
        lastRun.set(job, Date.now());
        await run(job, policy);
      }
    } else {
      // PostgreSQL vacuums beside the traffic: the loop goes on meanwhile.
      for (const job of lullDue) {
        lastRun.set(job, Date.now());
        inBackground.set(job, run(job, policy).finally(() => inBackground.delete(job)));
      }
    }
    for (const job of every) {
      if (Date.now() - lastRun.get(job)! <= everyMs(job)) continue;
      lastRun.set(job, Date.now());
      await run(job, policy);
    }
    return moved + roundWork + sideWork;
  }

  /** Nothing held in this process, nothing due in the queues, nothing waiting in the journal. */
  async function isIdle(horizon: number): Promise<boolean> {
    if (jobs.some((job) => (job.inFlight?.() ?? 0) > 0)) return false;
    if ((await hasDueWork(jobs, horizon).catch(failed("idle check"))) !== false) return false;
    for (const job of jobs) if (job.backlog && (await job.backlog()) > 0) return false;
    return true;
  }

  // Nothing in the loop may reject: a database outage is logged and retried on the next poll,
  // never an unhandled rejection that takes the process down.
  const loop = (async () => {
    if (database().kind === "pglite") await releaseOrphanedLeases(jobs).catch(failed("lease release"));
    workerWaitsForWork();
    while (!stopping) {
      woken = false;
      const work = await tick().catch(failed("tick"));
      if (work === 0 && !woken) {
        const horizon = Math.max(0, ...idleWaiters.map((w) => w.dueWithinMs));
        if (idleWaiters.length && (await isIdle(horizon))) {
          idleWaiters.splice(0).forEach((w) => w.resolve());
        }
        if (!woken) {
          workerWaitsForWork();
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
      for (const job of jobs) await job.close?.();
      await Promise.all(inBackground.values());
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
async function releaseOrphanedLeases(jobs: Job[]): Promise<void> {
  // The crash is not the call's fault: give back the attempt its claim counted. Leases of workers
  // running in this process are theirs (several workers start at once in tests and the demo).
  const release = GIVE_BACK_CLAIM;
  const notLive = `("lockedBy" IS NULL OR NOT ("lockedBy" = ANY($1::text[])))`;
  const live = [...liveWorkers];
  for (const { table, free, running } of jobs.flatMap((j) => (j.leases ? [j.leases] : []))) {
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

/** Anything queued or in flight that a worker could act on now, or within `withinMs`? One statement. */
async function hasDueWork(jobs: Job[], withinMs: number): Promise<boolean> {
  const due = `now() + ${Math.round(withinMs)} * interval '1 millisecond'`;
  const conditions = jobs.flatMap((j) => (j.dueSql ? [j.dueSql(due)] : []));
  if (!conditions.length) return false;
  const [row] = await prisma().$queryRawUnsafe<{ due: boolean }[]>(`SELECT ${conditions.join("\n         OR ")} AS due`);
  return Boolean(row?.due);
}
