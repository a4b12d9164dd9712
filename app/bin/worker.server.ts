// `npm run worker`: sync workers alone, for scale-out on PostgreSQL (set RUN_WORKER_IN_PROCESS=false
// on the app processes if only these should deliver). Runs from the build (build/server/worker.js).
import { config, ConfigError } from "../config.server";
import { database } from "../db.server";
import { logger } from "../logger.server";
import { startHealthServer } from "../server/health-endpoints.server";
import { declareProcessRole, markShuttingDown } from "../observability/health.server";
import { startWorker } from "../jobs/index.server";
import { routeConsoleThroughLogger } from "../server/console.server";

async function main() {
  const cfg = config();
  if (cfg.database.kind === "pglite") {
    console.error("npm run worker needs DATABASE_URL: with embedded PGlite the worker runs inside the app (npm start).");
    process.exit(1);
  }
  routeConsoleThroughLogger();
  declareProcessRole({ workerExpected: true });
  const db = database();
  await db.migrate();
  const count = Math.max(1, Number(process.env.WORKER_COUNT ?? 1));
  const workers = Array.from({ length: count }, () => startWorker());
  // Probes and metrics of this process (the app's server answers its own).
  const health = await startHealthServer(cfg.workerPort, cfg.host);
  logger().info({ count, url: health.url }, "workers running");
  // Graceful: calls in flight finish, what was claimed ahead goes back to the queue.
  const shutdown = async () => {
    markShuttingDown();
    await Promise.all(workers.map((w) => w.stop()));
    await health.close();
    await db.close();
    logger().info("stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown());
  process.once("SIGTERM", () => void shutdown());
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
