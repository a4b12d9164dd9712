import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { installDatabase, openDatabase, type DatabaseTarget } from "~/db.server";
import { connectShop } from "~/backfill/connect.server";
import { seedMigratedPgliteDir } from "./database";
import { applyTestEnv, TEST_API_KEY, TEST_API_SECRET, TEST_ENCRYPTION_KEY } from "./env";

export const ROOT_DIR = path.resolve(import.meta.dirname, "../..");

export interface AppProcess {
  child: ChildProcess;
  /** Base URL parsed from the "Marketing Sync is listening" log line. */
  url: string;
  /** The last lines of stdout and stderr (JSON logs and anything else), for diagnostics. */
  output(): string[];
  /** Log lines at level error or above (pino level >= 50), the first 50 of them. */
  errors(): string[];
  /** Resolves with the exit code or signal when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** kill -9: no shutdown handler runs. Resolves once the process is gone. */
  crash(): Promise<void>;
  /** SIGTERM (the server's graceful shutdown), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const KEEP_LINES = 200;

/**
 * Starts the production server (`node build/server/serve.js`, as `npm run serve`) as a child process and
 * waits for its "listening" log line. The build must exist (test/global-setup.ts makes it).
 */
export async function spawnApp(options: {
  env: Record<string, string>;
  timeoutMs?: number;
  script?: string;
  /** Sees every output line (stdout and stderr), e.g. to check what the app logs. */
  onLine?: (line: string) => void;
  /** The log message that carries the process's `url` (the worker process logs "workers running"). */
  listeningMessage?: string;
}): Promise<AppProcess> {
  const script = options.script ?? "build/server/serve.js";
  const child = spawn(process.execPath, script.endsWith(".ts") ? ["--import", "tsx", script] : [script], {
    cwd: ROOT_DIR,
    // Only what the app needs, plus PATH/HOME: nothing of the test process's own environment leaks in.
    env: { ...pick(process.env, ["PATH", "HOME", "TMPDIR", "LANG"]), ...options.env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const errors: string[] = [];
  const keep = (line: string) => {
    options.onLine?.(line);
    lines.push(line);
    if (lines.length > KEEP_LINES) lines.shift();
  };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  let alive = true;
  void exited.then(() => (alive = false));

  // Both pipes are read to the end: a full pipe would block the child.
  createInterface({ input: child.stderr! }).on("line", (line) => keep(`[stderr] ${line}`));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      fail(new Error(`app did not report listening within ${options.timeoutMs ?? 60_000} ms`));
    }, options.timeoutMs ?? 60_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      if (alive) child.kill("SIGKILL");
      reject(new Error(`${error.message}\n--- app output ---\n${lines.join("\n")}`));
    };
    createInterface({ input: child.stdout! }).on("line", (line) => {
      keep(line);
      const msg = parseLogLine(line);
      if (typeof msg?.level === "number" && msg.level >= 50 && errors.length < 50) errors.push(line);
      if (msg?.msg === (options.listeningMessage ?? "Marketing Sync is listening") && typeof msg.url === "string") {
        clearTimeout(timer);
        resolve(msg.url);
      }
    });
    child.once("error", fail);
    void exited.then(({ code, signal }) => fail(new Error(`app exited before listening (code ${code}, signal ${signal})`)));
  });

  const signalAndWait = async (signal: NodeJS.Signals) => {
    if (alive) child.kill(signal);
    await exited;
  };
  return {
    child,
    url,
    output: () => [...lines],
    errors: () => [...errors],
    exited,
    crash: () => signalAndWait("SIGKILL"),
    stop: async (graceMs = 10_000) => {
      if (!alive) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => alive && child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => (env[n] === undefined ? [] : [[n, env[n]]])));
}

function parseLogLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The environment of a server child process on a PGlite directory (or, with `databaseUrl`, on
 * PostgreSQL), talking to a service URL.
 */
export function appProcessEnv(options: {
  dataDir?: string;
  databaseUrl?: string;
  marketingApiUrl: string;
  logLevel?: string;
}): Record<string, string> {
  return {
    SHOPIFY_API_KEY: TEST_API_KEY,
    SHOPIFY_API_SECRET: TEST_API_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SHOPIFY_APP_URL: "http://localhost:3000",
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : { PGLITE_DATA_DIR: options.dataDir ?? "memory://" }),
    PORT: "0",
    HOST: "127.0.0.1",
    MARKETING_API_URL: options.marketingApiUrl,
    RUN_WORKER_IN_PROCESS: "true",
    LOG_LEVEL: options.logLevel ?? "info",
    NODE_ENV: "production",
  };
}

/**
 * A migrated PGlite directory with `shop` connected to the service, closed again so that a
 * child process can open it (PGlite allows one process per directory).
 */
export async function prepareConnectedDataDir(dataDir: string, shop: string, service: { url: string; apiKey: string }): Promise<void> {
  await prepareConnectedDatabase({ kind: "pglite", dataDir }, shop, service);
}

/** The same on any database (a PostgreSQL one is left open by nobody, ready for child processes). */
export async function prepareConnectedDatabase(
  target: DatabaseTarget,
  shop: string,
  service: { url: string; apiKey: string },
): Promise<void> {
  applyTestEnv({ ...(target.kind === "pglite" ? { PGLITE_DATA_DIR: target.dataDir } : {}), MARKETING_API_URL: service.url });
  if (target.kind === "pglite") await seedMigratedPgliteDir(target.dataDir);
  const db = openDatabase(target);
  try {
    await db.migrate();
    installDatabase(db);
    await connectShop(shop, { apiKey: service.apiKey, baseUrl: service.url, importHistory: false });
  } finally {
    installDatabase(undefined);
    await db.close();
  }
}
