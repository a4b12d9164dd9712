import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { Transaction } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { config } from "./config.server";
import { PrismaClient } from "./generated/prisma/client";
import { applyMigrations, type MigrationResult, type PreparedStatement, type SqlQueryable, type SqlRunner, type SqlValue } from "./db/migrate.server";
import { executeStatement, prepareStatement } from "./db/prepared";
import { openPglite } from "./db/pglite.server";
import { logger } from "./logger.server";

export type DatabaseTarget =
  /** fsync: flush every commit to disk (default false, development-only durability: app/db/pglite.server.ts). */
  | { kind: "pglite"; dataDir: string; fsync?: boolean; /** memory:// only: app/db/pglite.server.ts */ loadDataDir?: Blob }
  | { kind: "postgres"; url: string };

export interface Database {
  kind: DatabaseTarget["kind"];
  target: DatabaseTarget;
  prisma: PrismaClient;
  sql: SqlRunner;
  migrate(): Promise<MigrationResult>;
  /** Runs `hook` when the database is closed, before its connections go (in the order added). */
  whenClosing(hook: () => Promise<void>): void;
  close(): Promise<void>;
}

export function openDatabase(target: DatabaseTarget): Database {
  if (target.kind === "pglite") {
    // Locked to this process; "memory://" (tests) keeps the database in memory, unlocked.
    const { pglite, lock } = openPglite(target);
    if (lock) {
      logger().info(
        { dataDir: target.dataDir, fsync: target.fsync ?? false },
        target.fsync ? "embedded PGlite opened" : "embedded PGlite opened without fsync: durable against a process crash, not a power loss (development only)",
      );
    }
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
    // Statements PREPAREd on this connection (PGlite has one), and preparations under way, by name.
    const preparedNames = new Set<string>();
    const preparing = new Map<string, Promise<void>>();
    type Statements = Pick<SqlQueryable, "exec" | "query">;
    const prepare = async (via: Statements, statement: PreparedStatement, inTransaction: boolean) => {
      // The literals of executeStatement() depend on it.
      const [{ standard_conforming_strings: on }] = await via.query<{ standard_conforming_strings: string }>("SHOW standard_conforming_strings");
      if (on !== "on") throw new Error("standard_conforming_strings is off: prepared statements refused");
      if (inTransaction) {
        // The transaction holds the one connection: nothing can prepare it between this check and
        // PREPARE, and a failing PREPARE would abort the transaction.
        const [exists] = await via.query(`SELECT 1 FROM pg_prepared_statements WHERE name = $1`, [statement.name]);
        if (!exists) await via.exec(prepareStatement(statement));
      } else {
        await via.exec(prepareStatement(statement)).catch((error: unknown) => {
          // A transaction prepared it meanwhile (duplicate_prepared_statement).
          if ((error as { code?: string }).code !== "42P05") throw error;
        });
      }
      preparedNames.add(statement.name);
    };
    // Inside a transaction a statement is prepared and run through the transaction's own handle, and
    // never waits for a preparation started outside it: that one queues behind this very transaction.
    const preparedOn =
      (via: Statements, inTransaction: boolean) =>
      async <T,>(statement: PreparedStatement, params: readonly SqlValue[]): Promise<T[]> => {
        if (!preparedNames.has(statement.name)) {
          if (inTransaction) await prepare(via, statement, true);
          else {
            let ready = preparing.get(statement.name);
            if (!ready) {
              ready = prepare(via, statement, false).finally(() => preparing.delete(statement.name));
              preparing.set(statement.name, ready);
            }
            await ready;
          }
        }
        return via.query<T>(executeStatement(statement, params));
      };
    // PGlite itself, or one of its transactions: the same exec() and query().
    const statementsOn = (handle: Pick<Transaction, "exec" | "query">): Statements => ({
      exec: async (script) => {
        await handle.exec(script);
      },
      query: async <T,>(text: string, params?: unknown[]) => (await handle.query<T>(text, params)).rows,
    });
    const top = statementsOn(pglite);
    const sql: SqlRunner = {
      ...top,
      prepared: preparedOn(top, false),
      transaction: (fn) =>
        pglite.transaction((tx) => {
          const inside = statementsOn(tx);
          return fn({ ...inside, prepared: preparedOn(inside, true) });
        }),
      // One process owns a PGlite directory; its queries already run one at a time.
      withAdvisoryLock: (_key, fn) => fn(),
      tryWithAdvisoryLock: (_key, fn) => fn(),
    };
    const closing: (() => Promise<void>)[] = [];
    return {
      kind: "pglite",
      target,
      prisma,
      sql,
      migrate: () => applyMigrations(sql),
      whenClosing: (hook) => closing.push(hook),
      close: async () => {
        try {
          await runClosingHooks(closing);
          await prisma.$disconnect();
          // The adapter does not close PGlite on $disconnect; without this Node keeps running.
          if (!pglite.closed) await pglite.close();
        } finally {
          lock?.release();
        }
      },
    };
  }
  // Prisma stores DateTime as UTC in "timestamp without time zone"; raw SQL must agree. JIT off: it
  // compiled the queue claims (cost above jit_above_cost on big backlogs) for 11 ms of a 7 ms query.
  const pool = new pg.Pool({ connectionString: target.url, max: 10, connectionTimeoutMillis: 10_000, options: "-c TimeZone=UTC -c jit=off" });
  // An idle connection the server drops (restart, failover, admin kill) emits 'error' on the pool;
  // unheard, Node would crash the process. The pool replaces the connection on the next query.
  pool.on("error", (error) => logger().warn({ err: error.message }, "idle database connection lost"));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const sql: SqlRunner = {
    ...statementsOnPg(pool),
    transaction: async (fn) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(statementsOnPg(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    // An advisory lock belongs to a session, so one connection is held for the whole run.
    withAdvisoryLock: (key, fn) => holdingAdvisoryLock(pool, key, true, fn),
    tryWithAdvisoryLock: (key, fn) => holdingAdvisoryLock(pool, key, false, fn),
  };
  const closing: (() => Promise<void>)[] = [];
  return {
    kind: "postgres",
    target,
    prisma,
    sql,
    migrate: () => applyMigrations(sql),
    whenClosing: (hook) => closing.push(hook),
    close: async () => {
      await runClosingHooks(closing);
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}

/** The pool, or a transaction's client: the same statements. */
const statementsOnPg = (on: pg.Pool | pg.PoolClient): SqlQueryable => ({
  exec: async (script) => {
    await on.query(script);
  },
  query: async <T,>(text: string, params?: unknown[]) => (await on.query(text, params as unknown[])).rows as T[],
  // node-postgres prepares a named statement once per connection, with bind parameters.
  prepared: async <T,>(statement: PreparedStatement, params: readonly SqlValue[]) =>
    (await on.query({ name: statement.name, text: statement.text, values: params as SqlValue[] })).rows as T[],
});

/** A hook that fails is logged: the database still closes. */
async function runClosingHooks(hooks: (() => Promise<void>)[]): Promise<void> {
  for (const hook of hooks.splice(0)) {
    await hook().catch((error: unknown) => logger().error({ err: error }, "closing the database: a hook failed"));
  }
}

/**
 * Runs fn on a connection holding advisory lock `key`: waiting for it, or, when `wait` is false,
 * returning undefined at once if another session holds it.
 */
function holdingAdvisoryLock<T>(pool: pg.Pool, key: number, wait: true, fn: () => Promise<T>): Promise<T>;
function holdingAdvisoryLock<T>(pool: pg.Pool, key: number, wait: false, fn: () => Promise<T>): Promise<T | undefined>;
async function holdingAdvisoryLock<T>(pool: pg.Pool, key: number, wait: boolean, fn: () => Promise<T>): Promise<T | undefined> {
  const client = await pool.connect();
  try {
    if (wait) await client.query("SELECT pg_advisory_lock($1)", [key]);
    else {
      const [{ locked }] = (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [key])).rows;
      if (!locked) return undefined;
    }
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

// One database per process (two PGlite instances must never open the same directory). The
// production entry points are built together with the Remix bundle, so a process holds one copy
// of this module; tests and the demo, which also load app modules from source, install the same
// Database into the build's copy through build/server/runtime.js (see test/support/app.ts).
let processDatabase: Database | undefined;

export function database(): Database {
  processDatabase ??= openDatabase(config().database);
  return processDatabase;
}

/** Installs a specific database (tests, scripts) as the process database. */
export function installDatabase(db: Database | undefined): void {
  processDatabase = db;
}

/** The Prisma client of the process database. */
export function prisma(): PrismaClient {
  return database().prisma;
}
