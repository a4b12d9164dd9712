// `npm run serve`: the production server, run from the build (build/server/serve.js, plain node).
// Validates the configuration, applies pending migrations, serves the app, and (unless
// RUN_WORKER_IN_PROCESS=false) runs the sync worker — all from one copy of each module.
import { config, ConfigError } from "../config.server";

async function main() {
  const cfg = config();
  if (!cfg.runWorkerInProcess && cfg.database.kind === "pglite") {
    // No other process can open an embedded database: nothing would ever deliver what this one records.
    console.error("RUN_WORKER_IN_PROCESS=false needs DATABASE_URL: with embedded PGlite the sync worker can only run inside the app.");
    process.exit(1);
  }
  // Loaded after the configuration is known good: the Remix modules read it as they load.
  const { CLIENT_DIR, checkStoredSecrets, database, declareProcessRole, logger, markShuttingDown, routeConsoleThroughLogger, serverBuild, startHttpServer, startWorker } =
    await import("../server/runtime.server");
  routeConsoleThroughLogger();
  const log = logger();
  if (cfg.defaultedSecrets.length) {
    log.warn({ defaulted: cfg.defaultedSecrets }, "using development secrets (allowed only with a local SHOPIFY_APP_URL)");
  }
  declareProcessRole({ workerExpected: cfg.runWorkerInProcess });
  const db = database();
  const migrations = await db.migrate();
  log.info({ database: db.kind, applied: migrations.applied }, "database ready");
  await checkStoredSecrets(); // shops whose stored key this ENCRYPTION_KEY cannot open are paused

  const http = await startHttpServer({ build: serverBuild, clientDir: CLIENT_DIR, port: cfg.port, host: cfg.host });
  log.info({ url: http.url }, "Marketing Sync is listening");
  const worker = cfg.runWorkerInProcess ? startWorker() : undefined;

  // Graceful: not ready (traffic drains), requests under way answered, the worker's calls in flight
  // finished and what it claimed ahead handed back to the queue, then the database closed.
  const shutdown = async (signal: string) => {
    log.info({ signal }, "shutting down");
    markShuttingDown();
    await http.close();
    await worker?.stop();
    await db.close();
    log.info("stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  // One clear line for configuration mistakes and a held PGlite directory; a stack for anything unexpected.
  if (error instanceof ConfigError || (error instanceof Error && error.name === "DataDirLockedError")) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
