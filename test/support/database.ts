import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe } from "vitest";
import { openDatabase, installDatabase, type Database } from "~/db.server";

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
 */
export async function createTestDatabase(kind: DatabaseKind = "pglite"): Promise<TestDatabase> {
  let db: Database;
  let url: string | undefined;
  let drop = async () => {};
  if (kind === "pglite") {
    db = openDatabase({ kind: "pglite", dataDir: "memory://" });
  } else {
    if (!TEST_DATABASE_URL) throw new Error("TEST_DATABASE_URL is not set");
    const name = `ms_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
    await adminQuery(`CREATE DATABASE "${name}"`);
    const u = new URL(TEST_DATABASE_URL);
    u.pathname = `/${name}`;
    url = u.href;
    db = openDatabase({ kind: "postgres", url });
    drop = () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
  await db.migrate();
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

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
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
