import { database } from "../db.server";
import { pendingMigrations } from "../db/migrate.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";

/**
 * Liveness and readiness of this process, for a load balancer or an orchestrator:
 * - /healthz: the process answers (nothing else is checked: a database outage must not get every
 *   process restarted);
 * - /readyz: the database answers, every migration is applied, and the sync worker runs where this
 *   process should run one. A process that is shutting down is not ready, so traffic drains first.
 */
export interface ProcessRole {
  /** Whether this process runs sync workers (the app with RUN_WORKER_IN_PROCESS, `npm run worker`). */
  workerExpected: boolean;
}

let role: ProcessRole = { workerExpected: false };
let workersRunning = 0;
let shuttingDown = false;

export function declareProcessRole(next: ProcessRole): void {
  role = next;
}

export function workerStarted(): void {
  workersRunning++;
}

export function workerStopped(): void {
  workersRunning = Math.max(0, workersRunning - 1);
}

export function markShuttingDown(): void {
  shuttingDown = true;
}

export interface Readiness {
  ready: boolean;
  checks: { database: string; migrations: string; worker: string; shutdown: string };
}

const DATABASE_CHECK_TIMEOUT_MS = 2_000;

export async function readiness(): Promise<Readiness> {
  const checks: Readiness["checks"] = {
    database: "ok",
    migrations: "ok",
    worker: role.workerExpected ? (workersRunning > 0 ? "ok" : "not running") : "not expected here",
    shutdown: shuttingDown ? "shutting down" : "ok",
  };
  try {
    const sql = database().sql;
    await withTimeout(sql.query("SELECT 1"), DATABASE_CHECK_TIMEOUT_MS);
    const pending = await withTimeout(pendingMigrations(sql), DATABASE_CHECK_TIMEOUT_MS);
    if (pending.length) checks.migrations = `${pending.length} pending: ${pending.join(", ")}`;
  } catch (error) {
    // The answer is public (a load balancer's probe): the reason, which names the database's host
    // and port, goes to the log only.
    logger().warn({ err: messageOf(error) }, "readiness: the database did not answer");
    checks.database = "unreachable";
    checks.migrations = "unknown";
  }
  const ready =
    checks.database === "ok" && checks.migrations === "ok" && checks.worker !== "not running" && !shuttingDown;
  return { ready, checks };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
