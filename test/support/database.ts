import { createHash, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import pg from "pg";
import { describe } from "vitest";
import { openDatabase, installDatabase, type Database } from "~/db.server";
import { applyMigrations, listMigrations, type SqlQueryable } from "~/db/migrate.server";
import { LOCK_FILE } from "~/db/data-dir-lock.server";
import { openPglite, pgliteStartParams } from "~/db/pglite.server";

export type DatabaseKind = "pglite" | "postgres";

/** Set by .ci/run (and by developers) to a server where tests may create databases. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

export interface TestDatabase extends Database {
  url?: string;
  /** Closes it and, on PostgreSQL, drops the per-test database. */
  destroy(): Promise<void>;
}

/**
 * A fresh, migrated database that no other test file sees: in-memory PGlite, or a new
 * PostgreSQL database created on TEST_DATABASE_URL's server. It becomes the process database.
 * Both start as a copy of a template migrated once per set of migrations (pgliteTemplate,
 * postgresTemplate): initdb and the migrations were most of a test file's set-up time.
 */
export async function createTestDatabase(kind: DatabaseKind = "pglite"): Promise<TestDatabase> {
  let db: Database;
  let url: string | undefined;
  let drop = async () => {};
  if (kind === "pglite") {
    db = openDatabase({ kind: "pglite", dataDir: "memory://", loadDataDir: await pgliteTemplate() });
  } else {
    if (!TEST_DATABASE_URL) throw new Error("TEST_DATABASE_URL is not set");
    const name = `ms_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
    await createDatabaseFrom(await postgresTemplate(), name);
    url = databaseUrl(name);
    db = openDatabase({ kind: "postgres", url });
    drop = async () => void (await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
  await db.migrate(); // a no-op on the template's copy, unless it is out of date
  installDatabase(db);
  return {
    ...db,
    url,
    destroy: async () => {
      installDatabase(undefined);
      await db.close();
      await drop();
    },
  };
}

async function adminQuery(sql: string, client?: pg.Client): Promise<pg.QueryResult> {
  if (client) return client.query(sql);
  const own = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await own.connect();
  try {
    return await own.query(sql);
  } finally {
    await own.end();
  }
}

function databaseUrl(name: string): string {
  const u = new URL(TEST_DATABASE_URL!);
  u.pathname = `/${name}`;
  return u.href;
}

/** Names the migrations (and the PGlite build and settings): a template is kept per set. */
let templateKey: Promise<string> | undefined;
function migrationsKey(): Promise<string> {
  templateKey ??= listMigrations().then((migrations) => {
    const pgliteVersion = (JSON.parse(readFileSync(path.join(ROOT, "node_modules/@electric-sql/pglite/package.json"), "utf8")) as { version: string }).version;
    const parts = [pgliteVersion, ...pgliteStartParams(false), ...migrations.map((m) => `${m.name}:${m.checksum}`)];
    return createHash("sha256").update(parts.join("\n")).digest("hex").slice(0, 16);
  });
  return templateKey;
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const TEMPLATE_DIR = path.join(ROOT, "node_modules/.cache/marketing-sync-tests");

/**
 * A dump of a migrated in-memory PGlite, kept in a file for every test process. Made by the
 * first process that needs it (two at once both make one; the rename keeps the file whole).
 */
let pgliteDump: Promise<Blob> | undefined;
function pgliteTemplate(): Promise<Blob> {
  pgliteDump ??= (async () => {
    const file = path.join(TEMPLATE_DIR, `pglite-${await migrationsKey()}.tar`);
    try {
      return new Blob([readFileSync(file)]);
    } catch {
      const dump = await migratedPgliteDump();
      mkdirSync(TEMPLATE_DIR, { recursive: true });
      dropStaleTemplates((name) => name.startsWith("pglite-") && name.endsWith(".tar"), path.basename(file));
      const partial = `${file}.${process.pid}`;
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, file);
      return dump;
    }
  })();
  return pgliteDump;
}

/**
 * Removes the templates of one kind made for other migrations. Those of the current set stay,
 * including another process's copy still being built (named after it, with its pid).
 */
function dropStaleTemplates(ofKind: (name: string) => boolean, current: string): void {
  for (const name of readdirSync(TEMPLATE_DIR)) {
    if (ofKind(name) && !name.startsWith(current)) rmSync(path.join(TEMPLATE_DIR, name), { recursive: true, force: true });
  }
}

/** The app's migrations on a bare PGlite (the app's Database does not expose PGlite's dump). */
async function migratedPgliteDump(): Promise<Blob> {
  const { pglite } = openPglite({ dataDir: "memory://" });
  const on = (handle: Pick<PGlite | Transaction, "exec" | "query">): SqlQueryable => ({
    exec: async (script) => {
      await handle.exec(script);
    },
    query: async <T,>(text: string, params?: unknown[]) => (await handle.query<T>(text, params)).rows,
    prepared: () => Promise.reject(new Error("migrations prepare no statements")),
  });
  try {
    await applyMigrations({
      ...on(pglite),
      transaction: (fn) => pglite.transaction((tx) => fn(on(tx))),
      withAdvisoryLock: (_key, fn) => fn(),
      tryWithAdvisoryLock: (_key, fn) => fn(),
    });
    return await pglite.dumpDataDir("none");
  } finally {
    await pglite.close();
  }
}

/**
 * Fills an empty on-disk PGlite directory with a copy of a migrated one, as the app's first start
 * would leave it: PGlite's initdb runs in a child process and cost ~10 CPU-seconds per
 * directory (2026-11-28), the largest part of the tests that start app processes. Tests of the
 * first start itself leave their directory empty.
 */
export async function seedMigratedPgliteDir(dataDir: string): Promise<void> {
  if (existsSync(path.join(dataDir, "PG_VERSION"))) return;
  cpSync(await pgliteDirTemplate(), dataDir, { recursive: true });
}

/** A migrated on-disk PGlite directory, made once per set of migrations (as pgliteTemplate). */
let pgliteDir: Promise<string> | undefined;
function pgliteDirTemplate(): Promise<string> {
  pgliteDir ??= (async () => {
    const dir = path.join(TEMPLATE_DIR, `pglite-dir-${await migrationsKey()}`);
    if (existsSync(path.join(dir, "PG_VERSION"))) return dir;
    mkdirSync(TEMPLATE_DIR, { recursive: true });
    dropStaleTemplates((name) => name.startsWith("pglite-dir-"), path.basename(dir));
    const building = `${dir}.${process.pid}`;
    const db = openDatabase({ kind: "pglite", dataDir: building });
    try {
      await db.migrate();
    } finally {
      await db.close();
    }
    rmSync(path.join(building, LOCK_FILE), { force: true });
    try {
      renameSync(building, dir);
    } catch {
      rmSync(building, { recursive: true, force: true }); // another process made it meanwhile
    }
    return dir;
  })();
  return pgliteDir;
}

/**
 * A migrated PostgreSQL database that test databases are copied from (CREATE DATABASE …
 * TEMPLATE). One process builds it under a temporary name, holding an advisory lock, and renames
 * it when it is complete; nobody connects to it afterwards (a connection would block copies).
 */
let postgresTemplateName: Promise<string> | undefined;
function postgresTemplate(): Promise<string> {
  postgresTemplateName ??= (async () => {
    const name = `ms_template_${await migrationsKey()}`;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query("SELECT pg_advisory_lock(hashtext($1))", [name]);
      const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (exists.rowCount) return name;
      const building = `${name}_${randomBytes(4).toString("hex")}`;
      await adminQuery(`CREATE DATABASE "${building}"`, client);
      const db = openDatabase({ kind: "postgres", url: databaseUrl(building) });
      try {
        await db.migrate();
      } finally {
        await db.close();
      }
      // The pool's connections may still be leaving the server (object_in_use).
      await retryWhileInUse(() => adminQuery(`ALTER DATABASE "${building}" RENAME TO "${name}"`, client));
      return name;
    } finally {
      await client.end(); // releases the advisory lock
    }
  })();
  return postgresTemplateName;
}

async function createDatabaseFrom(template: string, name: string): Promise<void> {
  await retryWhileInUse(() => adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
}

async function retryWhileInUse<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if ((error as { code?: string }).code !== "55006" || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Runs a suite once per database: always on PGlite, and on PostgreSQL when TEST_DATABASE_URL
 * is set (reported as skipped otherwise).
 */
export function describeEachDatabase(name: string, suite: (kind: DatabaseKind) => void): void {
  describe(`${name} [pglite]`, () => suite("pglite"));
  describe.skipIf(!TEST_DATABASE_URL)(`${name} [postgres]`, () => suite("postgres"));
}
