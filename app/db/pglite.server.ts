import { spawnSync } from "node:child_process";
import { existsSync, fsyncSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.server";

/**
 * Embedded PGlite, opened the way the app needs it:
 *
 * - **One process per directory**: the directory is locked (see data-dir-lock.server.ts).
 * - **Memory**: a fresh directory is initialised (initdb) in a short-lived child process. initdb
 *   runs a second Postgres instance with its own WebAssembly memory and file-system bundle, and
 *   the process keeps that memory after it is done (about 850 MB RSS against 310 MB for opening
 *   an existing directory); in a child it is all returned to the system when the child exits.
 * - **Durability: development only by default.** PGlite runs Postgres with fsync off, and its
 *   Node file system (Emscripten's NODEFS) implements no fsync at all, so a commit sits in the
 *   OS page cache: it survives kill -9 of the process (the crash test), not a power loss or an OS
 *   crash. `fsync: true` flushes the WAL at every commit through a real fsync(2) (DurableNodeFS).
 *   Measured here (2 shared cores, virtio disk): a commit's p50 goes from 0.1–0.3 ms to 2.8–4 ms,
 *   and that fsync blocks the one JavaScript thread, so 200 acknowledgements/s would spend most
 *   of the thread waiting on the disk; delivery throughput drops about 7% (638 → 592 calls/s).
 *   Production deployments use PostgreSQL, which has real durability and many connections.
 */

export interface PgliteTarget {
  /** A directory, or "memory://" (tests: nothing on disk, no lock). */
  dataDir: string;
  /** Flush every commit to disk (default false: see "Durability" above). */
  fsync?: boolean;
  /**
   * "memory://" only: start from this dump (PGlite dumpDataDir) instead of running initdb. Tests
   * load one migrated template: initdb and the migrations took 9–26 s per database, loading 2.4–3.4 s
   * (measured 2026-11-27, load average 18 on 2 cores).
   */
  loadDataDir?: Blob;
}

/** A data directory on disk, not "memory://": locked, and files beside the database are possible. */
export const pgliteOnDisk = (dataDir: string): boolean => !dataDir.includes("://");

/** Postgres settings of every PGlite we open (memory: sized for a single-connection app). */
export function pgliteStartParams(fsync: boolean): string[] {
  const defaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams ?? [
    "--single", "-F", "-O", "-j", "-c", "search_path=public", "-c", "exit_on_error=false",
  ];
  // "-F" turns fsync off; fdatasync is a no-op in Emscripten, so the WAL must use fsync.
  const base = fsync ? defaults.filter((p) => p !== "-F") : defaults;
  return [
    ...base,
    ...(fsync ? ["-c", "wal_sync_method=fsync"] : []),
    // Prisma stores DateTime as UTC in "timestamp without time zone"; raw SQL must agree.
    "-c", "TimeZone=UTC",
    // Otherwise each new 16 MB WAL segment is first written full of zeros, which held the one
    // thread for 75–112 ms every ~3,000 recorded orders (measured 2026-11-25, commit b7768e4).
    "-c", "wal_init_zero=off",
    ...PGLITE_MEMORY_SETTINGS,
  ];
}

/**
 * Settings that bound the memory Postgres touches inside PGlite's WebAssembly heap. PGlite's
 * default shared_buffers is 128 MB, all of it touched at start-up (about 120 MB RSS more than
 * 16 MB); the queue's working set is small and the OS page cache sits behind it. One backend
 * only, so shared memory for 100 connections is waste.
 */
export const PGLITE_MEMORY_SETTINGS = [
  "-c", "shared_buffers=16MB",
  "-c", "max_connections=5",
  "-c", "work_mem=4MB",
  "-c", "maintenance_work_mem=16MB",
  "-c", "temp_buffers=4MB",
];

/** NODEFS plus the fsync Emscripten leaves out, so that Postgres's fsync reaches the disk. */
class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS["init"]>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun ?? [];
    result.emscriptenOpts.preRun = [
      (mod: { NODEFS: { stream_ops: Record<string, unknown> } }) => {
        mod.NODEFS.stream_ops.fsync = (stream: { nfd?: number }) => {
          if (stream.nfd !== undefined) fsyncSync(stream.nfd);
          return 0;
        };
      },
      ...preRun,
    ] as typeof preRun;
    return result;
  }
}

/**
 * PGlite whose statements let the event loop in between them. PGlite runs each statement
 * synchronously on the one JavaScript thread and chains the next one through promises that are
 * already resolved, so a transaction of ten statements ran as one uninterrupted task: an
 * acknowledgement's request could not even be read until the worker's transaction had committed
 * (event-loop delay p99 13 ms with the worker in the process; measured 2026-11-25, commit f305fde).
 * A macrotask turn before each statement costs a few microseconds.
 */
export class ThreadSharingPGlite extends PGlite {
  override async execProtocolRaw(message: Uint8Array, options?: Parameters<PGlite["execProtocolRaw"]>[1]): Promise<Uint8Array> {
    if (message[0] === PARSE || message[0] === SIMPLE_QUERY) await new Promise<void>((resolve) => setImmediate(resolve));
    return super.execProtocolRaw(message, options);
  }
}
// Frontend message types that begin a statement (the extended protocol's Parse, a simple Query).
const PARSE = 0x50;
const SIMPLE_QUERY = 0x51;

export interface OpenedPglite {
  pglite: PGlite;
  lock?: DataDirLock;
}

/** Opens PGlite on a target: locks the directory, initialises it in a child if it is new. */
export function openPglite(target: PgliteTarget): OpenedPglite {
  const fsync = target.fsync ?? false;
  const options: PGliteOptions = { startParams: pgliteStartParams(fsync) };
  if (!pgliteOnDisk(target.dataDir)) return { pglite: new ThreadSharingPGlite(target.dataDir, { ...options, loadDataDir: target.loadDataDir }) };

  mkdirSync(target.dataDir, { recursive: true });
  const lock = lockDataDir(target.dataDir);
  try {
    if (!existsSync(path.join(target.dataDir, "PG_VERSION"))) initialiseInChild(target.dataDir, options.startParams);
    const pglite = new ThreadSharingPGlite({ ...options, fs: fsync ? new DurableNodeFS(target.dataDir) : new NodeFS(target.dataDir) });
    return { pglite, lock };
  } catch (error) {
    lock.release();
    throw error;
  }
}

// The child only creates the directory's files and exits; the parent holds the lock meanwhile.
const INITDB_CHILD = `
const { PGlite } = require(process.env.MS_PGLITE_MODULE);
PGlite.create(process.env.MS_PGLITE_DIR, { startParams: JSON.parse(process.env.MS_PGLITE_START_PARAMS) })
  .then((pg) => pg.close())
  .catch((error) => { console.error(error); process.exit(1); });
`;

/** Runs PGlite's first-run initdb on `dataDir` in a child process (blocks start-up, once). */
export function initialiseInChild(dataDir: string, startParams = pgliteStartParams(false)): void {
  const pgliteModule = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const child = spawnSync(process.execPath, ["-e", INITDB_CHILD], {
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "production",
      MS_PGLITE_MODULE: pgliteModule,
      MS_PGLITE_DIR: path.resolve(dataDir),
      MS_PGLITE_START_PARAMS: JSON.stringify(startParams),
    },
    encoding: "utf8",
    timeout: 300_000,
  });
  if (child.status !== 0 || !existsSync(path.join(dataDir, "PG_VERSION"))) {
    const why = child.error?.message ?? (child.stderr || child.stdout || `exit ${child.status ?? child.signal}`).trim().slice(-2000);
    throw new Error(`Initialising the PGlite data directory ${dataDir} failed: ${why}`);
  }
}
