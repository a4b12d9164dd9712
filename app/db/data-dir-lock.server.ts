import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { z } from "zod";

/**
 * An exclusive lock on a PGlite data directory. PGlite has no postmaster.pid of its own: two
 * processes on one directory would each run their own Postgres on the same files and corrupt them.
 *
 * The lock is a file in the directory naming its holder (pid, host, start time). A holder that
 * died without releasing it (kill -9, power loss) is recognised by its pid being gone (or the
 * machine having rebooted) and the lock is taken over at once. Hand-written rather than a lockfile
 * library: those judge staleness by an mtime that must be refreshed on a timer (PGlite blocks the
 * thread for seconds at a time, which would count as dead) and do not say who holds the lock.
 */

export const LOCK_FILE = "marketing-sync.lock";
/** Guards the stale-lock takeover so that two starters cannot both take it over. */
const TAKEOVER_DIR = `${LOCK_FILE}.takeover`;
/** A takeover guard older than this was left by a process that died in the middle of one. */
const TAKEOVER_STALE_MS = 10_000;

const holderSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  startedAt: z.string(),
  /** What holds it: "app" (server, worker, scripts) or "prisma-cli". */
  purpose: z.string().default("app"),
  /** Linux boot id: a lock from before a reboot is stale whatever its pid. */
  bootId: z.string().optional(),
});
export type LockHolder = z.infer<typeof holderSchema>;

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `PGlite data directory ${dataDir} is in use by process ${holder.pid} on ${holder.host} ` +
        `(${holder.purpose}, started ${holder.startedAt}). PGlite allows one process per directory: ` +
        `stop that process, or use PostgreSQL (DATABASE_URL) to run several.` +
        // A holder on another host cannot be checked from here (a re-created container has a new
        // hostname): say how to clear a lock its dead owner left.
        (holder.host === hostname()
          ? ""
          : ` If that host no longer runs it (a re-created container), delete ${path.join(path.resolve(dataDir), LOCK_FILE)} and start again.`),
    );
    this.name = "DataDirLockedError";
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  readonly holder: LockHolder;
  /** Removes the lock file (if it is still ours). Idempotent. */
  release(): void;
}

// Directories this process holds: a second open in the same process is refused too.
const heldKey = Symbol.for("marketing-sync.data-dir-locks");
function held(): Set<string> {
  const g = globalThis as typeof globalThis & { [heldKey]?: Set<string> };
  g[heldKey] ??= new Set();
  return g[heldKey];
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether the holder is certainly gone (only decidable for a holder on this machine). */
function isStale(holder: LockHolder, lockPath: string): boolean {
  if (holder.host !== hostname()) return false;
  const boot = bootId();
  if (holder.bootId && boot && holder.bootId !== boot) return true;
  // Our own pid, yet we do not hold it: left by an earlier process that had the same pid (containers).
  if (holder.pid === process.pid) return !held().has(lockPath);
  return !pidAlive(holder.pid);
}

function readHolder(lockPath: string): LockHolder | "missing" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(lockPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
  try {
    return holderSchema.parse(JSON.parse(text));
  } catch {
    return "unreadable";
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs fn while holding the takeover guard (a directory: mkdir is atomic). */
function withTakeoverGuard<T>(dataDir: string, fn: () => T): T {
  const guard = path.join(dataDir, TAKEOVER_DIR);
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(guard);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - statSync(guard).mtimeMs > TAKEOVER_STALE_MS) rmdirSync(guard);
      } catch {
        // gone already, or taken by another process: try again
      }
      if (attempt > 200) throw new Error(`could not take over the lock of ${dataDir}: ${guard} is held`, { cause: error });
      sleepSync(25);
    }
  }
  try {
    return fn();
  } finally {
    rmdirSync(guard);
  }
}

/**
 * Takes the lock on `dataDir` (which must exist) or throws DataDirLockedError naming the holder.
 * A lock left by a process that is gone is taken over.
 */
export function lockDataDir(dataDir: string, purpose = "app"): DataDirLock {
  const lockPath = path.join(path.resolve(dataDir), LOCK_FILE);
  const holder: LockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), purpose, bootId: bootId() };
  for (let attempt = 0; attempt < 50; attempt++) {
    if (held().has(lockPath)) {
      throw new DataDirLockedError(dataDir, readHolderOr(lockPath, holder));
    }
    let fd: number;
    try {
      fd = openSync(lockPath, "wx", 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const current = readHolder(lockPath);
      if (current === "missing") continue; // released meanwhile
      if (current === "unreadable") {
        // Being written by a starter right now, or garbage: give a writer a moment, then judge by age.
        if (attempt < 10 || Date.now() - statSync(lockPath).mtimeMs < 2_000) {
          sleepSync(20);
          continue;
        }
      } else if (!isStale(current, lockPath)) {
        throw new DataDirLockedError(dataDir, current);
      }
      // Stale: remove it under the guard, and only if it is still the one we judged.
      withTakeoverGuard(path.dirname(lockPath), () => {
        const again = readHolder(lockPath);
        if (JSON.stringify(again) === JSON.stringify(current)) {
          // Renamed aside first, so that a crash here leaves no half-removed lock.
          const aside = `${lockPath}.stale-${process.pid}`;
          renameSync(lockPath, aside);
          unlinkSync(aside);
        }
      });
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(holder));
    } finally {
      closeSync(fd);
    }
    held().add(lockPath);
    const onExit = () => release();
    // A clean exit (including process.exit in a signal handler) releases it; kill -9 leaves it stale.
    process.once("exit", onExit);
    let released = false;
    function release() {
      if (released) return;
      released = true;
      process.removeListener("exit", onExit);
      held().delete(lockPath);
      const current = readHolder(lockPath);
      if (typeof current === "object" && current.pid === holder.pid && current.startedAt === holder.startedAt) {
        try {
          unlinkSync(lockPath);
        } catch {
          // already gone
        }
      }
    }
    return { dataDir, holder, release };
  }
  throw new Error(`could not lock ${dataDir}: its lock file keeps changing`);
}

function readHolderOr(lockPath: string, fallback: LockHolder): LockHolder {
  const current = readHolder(lockPath);
  return typeof current === "object" ? current : fallback;
}
