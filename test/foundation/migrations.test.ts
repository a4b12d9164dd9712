import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "~/db.server";
import { listMigrations, MIGRATIONS_DIR } from "~/db/migrate.server";
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from "../support/database";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
// These tests run initdb and every migration themselves (no template): 25–40 s on a busy 2-core machine.
const INITDB_TIMEOUT_MS = 180_000;

/** Runs the Prisma CLI (offline shim via prisma.config.ts) against a given database. */
async function prismaCli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!env.DATABASE_URL) delete cliEnv.DATABASE_URL;
  // An offline schema engine (PRISMA_SCHEMA_ENGINE_BINARY, prisma.config.ts) prefers PGLITE_DATA_DIR
  // to the URL; another test file in this process may have set it (applyTestEnv).
  else delete cliEnv.PGLITE_DATA_DIR;
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, "node_modules/prisma/build/index.js"), ...args], {
      cwd: ROOT,
      env: cliEnv,
      timeout: 120_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

async function migrationRows(db: Database) {
  return db.sql.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
    `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
  );
}

describe("start-up migrations [pglite]", () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it("apply every migration to an empty database, then are a no-op", async () => {
    const db = openDatabase({ kind: "pglite", dataDir: "memory://" });
    const names = (await listMigrations()).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);

    expect(await db.migrate()).toEqual({ applied: names, alreadyApplied: [] });
    expect(await db.migrate()).toEqual({ applied: [], alreadyApplied: names });
    expect(await db.prisma.shop.count()).toBe(0);

    const rows = await migrationRows(db);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const script = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(script).digest("hex"));
      expect(row.finished_at).not.toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    await db.close();
  }, INITDB_TIMEOUT_MS);

  it("leave the database in a state `prisma migrate status` calls up to date", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ms-pglite-"));
    dirs.push(dir);
    const db = openDatabase({ kind: "pglite", dataDir: dir });
    await db.migrate();
    await db.close(); // PGlite allows one process per directory

    const status = await prismaCli(["migrate", "status"], { PGLITE_DATA_DIR: dir });
    expect(status.out).toContain("Database schema is up to date");
    expect(status.code).toBe(0);
  }, INITDB_TIMEOUT_MS);

  it("refuse to start over a migration that failed earlier", async () => {
    const db = openDatabase({ kind: "pglite", dataDir: "memory://" });
    await db.migrate();
    await db.sql.query(`UPDATE "_prisma_migrations" SET finished_at = NULL`);
    await expect(db.migrate()).rejects.toThrow(/failed earlier/);
    await db.close();
  }, INITDB_TIMEOUT_MS);
});

describe.skipIf(!TEST_DATABASE_URL)("start-up migrations [postgres]", () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.destroy();
    db = undefined;
  });

  it("agree with `prisma migrate deploy` and `status` in both directions", async () => {
    db = await createTestDatabase("postgres"); // migrated by the app
    const names = (await listMigrations()).map((m) => m.name);
    const deploy = await prismaCli(["migrate", "deploy"], { DATABASE_URL: db.url! });
    expect(deploy.out).toContain("No pending migrations to apply");
    expect(deploy.code).toBe(0);

    // The other way: a database the CLI migrated is already up to date for the app.
    await db.sql.exec(`DROP SCHEMA public CASCADE; CREATE SCHEMA public;`);
    const fresh = await prismaCli(["migrate", "deploy"], { DATABASE_URL: db.url! });
    expect(fresh.code).toBe(0);
    expect(await db.migrate()).toEqual({ applied: [], alreadyApplied: names });
    const status = await prismaCli(["migrate", "status"], { DATABASE_URL: db.url! });
    expect(status.out).toContain("Database schema is up to date");
  }, 180_000);

  it("apply each migration once when several processes start together", async () => {
    db = await createTestDatabase("postgres");
    await db.sql.exec(`DROP SCHEMA public CASCADE; CREATE SCHEMA public;`);
    const others = [openDatabase({ kind: "postgres", url: db.url! }), openDatabase({ kind: "postgres", url: db.url! })];
    const results = await Promise.all([db.migrate(), ...others.map((o) => o.migrate())]);
    await Promise.all(others.map((o) => o.close()));
    const names = (await listMigrations()).map((m) => m.name);
    expect(results.flatMap((r) => r.applied).sort()).toEqual(names);
    expect((await migrationRows(db)).length).toBe(names.length);
  });
});
