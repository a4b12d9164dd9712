/**
 * Support after a day-long outage: tens of thousands of dead letters of one cause.
 *
 *   npx tsx bench/dead-letters.ts [--rows 70000] [--postgres | --no-postgres] [--statements]
 *
 * For each database (a fresh PGlite directory; a fresh PostgreSQL database when a server answers):
 * `--rows` dead letters of one shop, as the pipeline records them when it gives up after a long
 * outage (each with its own attempt count and minutes, one object each), plus 1 % with other
 * causes. Then, timed, what the Problems page and "Replay all" do: list the groups
 * (listProblems), find the group's ids (deadLetterIdsForReason), put them back in the queue
 * (replayDeadLetters). Prints seconds per step and the longest stretch the event loop was held
 * (on PGlite every statement runs on this one thread, where webhooks are acknowledged).
 * `--statements` prints the count and time of each kind of SQL statement per database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { applyTestEnv } from "../test/support/env";
import { createBenchDatabase, fmt, postgresAdminUrl, printTable, timeStatements } from "./support";

applyTestEnv({ LOG_LEVEL: "silent" });
const { openDatabase, installDatabase } = await import("../app/db.server");
const { listProblems, deadLetterIdsForReason } = await import("../app/admin/problems.server");
const { replayDeadLetters } = await import("../app/pipeline/dead-letters.server");

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "70000" },
    postgres: { type: "boolean", default: false },
    "no-postgres": { type: "boolean", default: false },
    statements: { type: "boolean", default: false },
  },
});
const rows = Number(values.rows);
const adminUrl = await postgresAdminUrl({ postgres: values.postgres, noPostgres: values["no-postgres"] });
const SHOP = "bench-dead-letters.myshopify.com";

/** Runs `step`, returning its seconds and the longest gap between ticks of a 2 ms timer meanwhile. */
async function timed<T>(step: () => Promise<T>): Promise<{ result: T; seconds: number; loopMaxMs: number }> {
  let last = performance.now();
  let loopMaxMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    loopMaxMs = Math.max(loopMaxMs, now - last);
    last = now;
  }, 2);
  const start = performance.now();
  const result = await step();
  const seconds = (performance.now() - start) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 5)); // the tick after the last statement
  clearInterval(tick);
  return { result, seconds, loopMaxMs };
}

const table: (string | number)[][] = [];
console.log(`dead letters: ${rows} of one cause (+1 % others), load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
for (const kind of adminUrl ? (["pglite", "postgres"] as const) : (["pglite"] as const)) {
  const label = kind === "pglite" ? "PGlite" : "PostgreSQL";
  const pgDb = kind === "postgres" ? await createBenchDatabase(adminUrl!) : undefined;
  const dir = kind === "pglite" ? mkdtempSync(path.join(tmpdir(), "ms-bench-dead-")) : undefined;
  const db = openDatabase(pgDb ? { kind: "postgres", url: pgDb.url } : { kind: "pglite", dataDir: dir! });
  try {
    await db.migrate();
    installDatabase(db);
    await db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt") VALUES ($1, now())`, [SHOP]);
    // What the pipeline writes when it gives up (send-call.server.ts: the message and its cause);
    // every 100th dead letter has a cause of its own.
    await db.sql.query(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, attempts, "lastError", cause)
       SELECT $1, 'customer:' || g, 'customer',
              jsonb_build_object('op', 'person.upsert', 'body', jsonb_build_object('email', 'p' || g || '@example.com')),
              'dead', 40 + g % 50,
              CASE WHEN g % 100 = 0 THEN 'validation_failed: Email p' || g || '@example.com is not deliverable'
                   ELSE 'gave up after ' || (40 + g % 50) || ' attempts; last: server_error: Server Error (retried for ' || (1380 + g % 60) || ' min)' END,
              CASE WHEN g % 100 = 0 THEN NULL ELSE 'Gave up retrying: server_error: Server Error' END
         FROM generate_series(1, $2::int) g`,
      [SHOP, rows],
    );
    const statements = values.statements ? timeStatements(db) : undefined;
    const list = await timed(() => listProblems(SHOP));
    const biggest = list.result.groups[0];
    const ids = await timed(() => deadLetterIdsForReason(SHOP, biggest.key));
    const replay = await timed(() => replayDeadLetters(SHOP, ids.result));
    if (statements) console.log(`${label}:\n${statements.report()}\n`);
    table.push(
      [label, "list the Problems page", fmt(list.seconds, 2), fmt(list.loopMaxMs, 0), `${list.result.causes} causes, largest ${biggest.count}`],
      [label, "ids of the largest cause", fmt(ids.seconds, 2), fmt(ids.loopMaxMs, 0), `${ids.result.length} ids`],
      [label, "replay them", fmt(replay.seconds, 2), fmt(replay.loopMaxMs, 0), `${replay.result.replayed} replayed, ${replay.result.superseded} superseded`],
    );
  } finally {
    installDatabase(undefined);
    await db.close();
    await pgDb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
console.log();
printTable(["database", "step", "seconds", "event loop max ms", "result"], table);
