import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { PROJECT_ROOT } from "../project-root.server";
import { messageOf } from "../errors";

/**
 * Applies pending Prisma migrations at start-up and records them in `_prisma_migrations`
 * exactly as `prisma migrate deploy` does (same table, checksum, timestamps, step count), so
 * the CLI and the app agree on either database. Prisma's own engine cannot run here (offline,
 * and PGlite lives inside this process), hence this small re-implementation.
 */

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, "prisma/migrations");
// The key Prisma Migrate takes with pg_advisory_lock, so the CLI and every app process serialise.
const PRISMA_ADVISORY_LOCK_KEY = 72707369;

export interface SqlQueryable {
  /** Runs a script of one or more statements. */
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Runs a hot statement planned once per connection instead of on every call (app/db/prepared.ts).
   * Parameters are scalars, in the order of `statement.types`.
   */
  prepared<T = Record<string, unknown>>(statement: PreparedStatement, params: readonly SqlValue[]): Promise<T[]>;
}

export interface SqlRunner extends SqlQueryable {
  /** Runs fn in one transaction on one connection (committed unless fn throws). */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /** Runs fn holding a database-wide lock (a no-op for single-process PGlite). */
  withAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T>;
  /** Runs fn holding that lock if no other session holds it; otherwise returns undefined at once. */
  tryWithAdvisoryLock<T>(key: number, fn: () => Promise<T>): Promise<T | undefined>;
}

/** A statement with $1…$n placeholders, the SQL type of each, and a name unique in the app. */
export interface PreparedStatement {
  name: string;
  text: string;
  types: readonly string[];
}
export type SqlScalar = string | number | boolean | null;
/** A bind parameter of a prepared statement: a scalar, or an array of texts or numbers (e.g. `text[]`). */
export type SqlValue = SqlScalar | readonly (string | number)[];

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<{ name: string; script: string; checksum: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const script = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, script, checksum: createHash("sha256").update(script).digest("hex") };
    }),
  );
}

/** Migrations in the folder that the database has not finished applying (readiness: none may be left). */
export async function pendingMigrations(db: SqlQueryable, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await listMigrations(dir);
  const rows = await db
    .query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    )
    .catch(() => []);
  const done = new Set(rows.map((r) => r.migration_name));
  return migrations.map((m) => m.name).filter((name) => !done.has(name));
}

export async function applyMigrations(runner: SqlRunner, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = await listMigrations(dir);
  return runner.withAdvisoryLock(PRISMA_ADVISORY_LOCK_KEY, async () => {
    await runner.exec(CREATE_MIGRATIONS_TABLE);
    const rows = await runner.query<MigrationRow>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
    );
    const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed) {
      throw new MigrationError(
        `Migration ${failed.migration_name} failed earlier; fix the database, then run \`npx prisma migrate resolve\``,
      );
    }
    const done = new Set(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => r.migration_name));
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const m of migrations) {
      if (done.has(m.name)) {
        result.alreadyApplied.push(m.name);
        continue;
      }
      const id = randomUUID();
      await runner.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)`,
        [id, m.checksum, m.name],
      );
      try {
        await runner.exec(m.script);
      } catch (error) {
        const message = messageOf(error);
        await runner.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, message]);
        throw new MigrationError(`Migration ${m.name} failed: ${message}`);
      }
      await runner.query(
        `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
        [id],
      );
      result.applied.push(m.name);
    }
    return result;
  });
}
