// The process-level API of the built app: what the entry points (serve, worker) and the
// development tools that host the app (tests, the demo, benchmarks) need, exported from the
// same server build as the Remix handler, so one process holds one copy of every module.
// Built to build/server/runtime.js (see vite.config.ts); app/bin/* are built beside it.
import path from "node:path";
import * as remixBuild from "virtual:remix/server-build";
import type { ServerBuild } from "@remix-run/node";
import { PROJECT_ROOT } from "../project-root.server";

/** The Remix server build (routes, entry, assets manifest) of this same bundle. */
export const serverBuild = remixBuild as unknown as ServerBuild;

/** The client build: static assets. */
export const CLIENT_DIR = path.join(PROJECT_ROOT, "build/client");

export { config, resetConfigForTests, ConfigError, DEV_SECRETS } from "../config.server";
export { database, installDatabase, openDatabase, prisma, type Database } from "../db.server";
export { logger } from "../logger.server";
export { startWorker, type Worker } from "../jobs/index.server";
export { pruneOldRows } from "../pipeline/retention.server";
export { connectShop } from "../backfill/connect.server";
export { checkStoredSecrets } from "../shops/key-rotation.server";
export { startHttpServer, type RunningHttpServer } from "./http.server";
export { routeConsoleThroughLogger } from "./console.server";
export { declareProcessRole, markShuttingDown, workerStarted, workerStopped } from "../observability/health.server";
