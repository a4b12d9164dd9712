import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "~/db.server";
import { LOCK_FILE, lockDataDir } from "~/db/data-dir-lock.server";
import { seedMigratedPgliteDir } from "../support/database";
import { appProcessEnv, ROOT_DIR, spawnApp, type AppProcess } from "../support/processes";

/**
 * One process per PGlite directory: two would each run their own Postgres on the same files.
 * Real server processes on a real directory: the second is refused naming the first, and the
 * lock of a process killed with SIGKILL is taken over by the next start.
 */

const dataDir = mkdtempSync(path.join(tmpdir(), "ms-lock-"));
const running: AppProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.crash()));
  rmSync(dataDir, { recursive: true, force: true });
});

// Nothing listens there: these tests never deliver.
const env = appProcessEnv({ dataDir, marketingApiUrl: "http://127.0.0.1:9" });
const start = async () => {
  const app = await spawnApp({ env, timeoutMs: 120_000 });
  running.push(app);
  return app;
};
const lockHolder = () => JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), "utf8")) as { pid: number; host: string };

/** Runs a command to its end (bounded) and returns its exit code and output. */
function run(command: string, args: string[], extraEnv: Record<string, string>, timeoutMs = 120_000) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(command, args, { cwd: ROOT_DIR, env: { ...process.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("PGlite data directory lock", () => {
  it("refuses to serve embedded PGlite with the worker off: no other process could deliver what it records", { timeout: 120_000 }, async () => {
    const error = await spawnApp({ env: { ...env, PGLITE_DATA_DIR: path.join(dataDir, "no-worker"), RUN_WORKER_IN_PROCESS: "false" } }).then(
      (app) => {
        running.push(app);
        return undefined;
      },
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/exited before listening \(code 1/);
    expect(error?.message).toContain("RUN_WORKER_IN_PROCESS=false needs DATABASE_URL");
  });

  it("refuses a second server on the same directory, naming the first (pid, host, start time)", { timeout: 240_000 }, async () => {
    const first = await start();
    expect(lockHolder()).toMatchObject({ pid: first.child.pid, host: hostname() });

    const second = spawnApp({ env, timeoutMs: 120_000 });
    const error = await second.then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/exited before listening \(code 1/);
    expect(error?.message).toContain(`is in use by process ${first.child.pid} on ${hostname()}`);
    expect(error?.message).toMatch(/started \d{4}-\d\d-\d\dT/);

    // The first one is unharmed: it still answers, and still holds the lock.
    expect((await fetch(first.url)).status).toBeLessThan(500);
    expect(lockHolder().pid).toBe(first.child.pid);

    // The Prisma CLI on the same directory is refused too, rather than opening it beside the app.
    const cli = await run(process.execPath, [path.join(ROOT_DIR, "node_modules/prisma/build/index.js"), "migrate", "status"], {
      PGLITE_DATA_DIR: dataDir,
      DATABASE_URL: "",
    });
    expect(cli.code).not.toBe(0);
    expect(cli.output).toContain(`is in use by process ${first.child.pid}`);

    // A clean stop releases it.
    await first.stop();
    expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
  });

  it("takes over the lock of a server killed with SIGKILL", { timeout: 240_000 }, async () => {
    const killed = await start();
    await killed.crash();
    // kill -9 ran no handler: the lock is still there, naming a process that is gone.
    expect(lockHolder().pid).toBe(killed.child.pid);

    const next = await start();
    expect(lockHolder().pid).toBe(next.child.pid);
    expect((await fetch(next.url)).status).toBeLessThan(500);
    await next.stop();
  });

  it("a lock held on another host (a re-created container) is refused with how to clear it, and clearing it works", () => {
    const dir = path.join(dataDir, "other-host");
    mkdirSync(dir, { recursive: true });
    const lockPath = path.join(dir, LOCK_FILE);
    writeFileSync(lockPath, JSON.stringify({ pid: 4242, host: "marketing-sync-7f9c-old", startedAt: "2026-11-01T00:00:00.000Z", purpose: "app" }));
    expect(() => lockDataDir(dir)).toThrow(`on marketing-sync-7f9c-old`);
    expect(() => lockDataDir(dir)).toThrow(`delete ${lockPath} and start again`);
    rmSync(lockPath);
    lockDataDir(dir).release();
  });

  it("refuses a second open of the same directory within one process; memory:// is never locked", { timeout: 120_000 }, async () => {
    const dir = path.join(dataDir, "in-process");
    await seedMigratedPgliteDir(dir);
    const db = openDatabase({ kind: "pglite", dataDir: dir });
    try {
      expect(() => openDatabase({ kind: "pglite", dataDir: dir })).toThrow(`is in use by process ${process.pid}`);
      const a = openDatabase({ kind: "pglite", dataDir: "memory://" });
      const b = openDatabase({ kind: "pglite", dataDir: "memory://" });
      await Promise.all([a.close(), b.close()]);
    } finally {
      await db.close();
    }
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  });
});

describe("PGlite durable mode", () => {
  it("flushes commits with fsync on and reads them back after a reopen", { timeout: 120_000 }, async () => {
    const dir = path.join(dataDir, "durable");
    const first = openDatabase({ kind: "pglite", dataDir: dir, fsync: true });
    try {
      expect(await first.sql.query("SHOW fsync")).toEqual([{ fsync: "on" }]);
      await first.sql.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('acknowledged')");
    } finally {
      await first.close();
    }
    const again = openDatabase({ kind: "pglite", dataDir: dir });
    try {
      expect(await again.sql.query("SELECT v FROM kept")).toEqual([{ v: "acknowledged" }]);
    } finally {
      await again.close();
    }
  });
});

describe("PGlite WAL segments", () => {
  // Zero-filling a new 16 MB segment held the app's one thread for 75–112 ms every ~3,000
  // recorded orders (measured 2026-11-25, commit b7768e4); only its last byte is written now.
  it("starts a new WAL segment without writing 16 MB of zeros first", { timeout: 120_000 }, async () => {
    const dir = path.join(dataDir, "wal");
    await seedMigratedPgliteDir(dir);
    const db = openDatabase({ kind: "pglite", dataDir: dir });
    try {
      await db.sql.query("SELECT pg_switch_wal()");
      await db.sql.exec("CREATE TABLE filler (v text); INSERT INTO filler SELECT repeat('x', 100) FROM generate_series(1, 1000)");
      const [{ segment }] = await db.sql.query<{ segment: string }>("SELECT pg_walfile_name(pg_current_wal_lsn()) AS segment");
      const file = statSync(path.join(dir, "pg_wal", segment));
      expect(file.size).toBe(16 * 1024 * 1024);
      // What the disk holds of it: the records written so far, not the whole segment.
      expect(file.blocks * 512).toBeLessThan(4 * 1024 * 1024);
    } finally {
      await db.close();
    }
  });
});
