/**
 * PGlite's WAL over a long run, and what a crash then costs.
 *
 *   npx tsx bench/pglite-wal.ts [--orders 30000] [--no-checkpoint]
 *
 * A child process records `--orders` orders/create webhooks (the documented 16 KB body) into a
 * fresh PGlite directory, running the worker's upkeep every 1,000 as the worker would, and is then
 * killed with SIGKILL. Printed: every checkpoint upkeep took (and how long it held the thread),
 * the size of pg_wal at the end, and how long reopening the directory took (crash recovery
 * replays the WAL written since the last checkpoint). `--no-checkpoint` raises upkeep's threshold
 * out of reach: PGlite as it behaves without it (its single-user Postgres never checkpoints).
 */
import { execFileSync, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { applyTestEnv } from "../test/support/env";
import { documentedOrderAs, nextMessage, printTable, tsxExecArgv } from "./support";

applyTestEnv({ LOG_LEVEL: "silent" });
const { openDatabase, installDatabase } = await import("../app/db.server");

const { values } = parseArgs({
  options: {
    orders: { type: "string", default: "30000" },
    "no-checkpoint": { type: "boolean", default: false },
    child: { type: "string" },
  },
});

const walMiB = (dir: string) => Number(execFileSync("du", ["-sm", path.join(dir, "pg_wal")]).toString().split("\t")[0]);

if (values.child) {
  // The child: records, runs upkeep every 1,000 orders, reports, then waits to be killed.
  const { moveJournaledDeliveries, recordDelivery } = await import("../app/pipeline/record.server");
  const { upkeepQueueTables, UPKEEP_POLICY } = await import("../app/pipeline/upkeep.server");
  const { fixture } = await import("../test/support/webhooks");
  const dir = values.child;
  const db = openDatabase({ kind: "pglite", dataDir: dir });
  await db.migrate();
  installDatabase(db);
  const shop = "wal-bench.myshopify.com";
  await db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt") VALUES ($1, now())`, [shop]);
  const order = fixture("orders/create");
  const policy = values["no-checkpoint"] ? { ...UPKEEP_POLICY, pgliteCheckpointWalBytes: Number.MAX_SAFE_INTEGER } : UPKEEP_POLICY;
  const checkpoints: { afterOrders: number; walMiB: number; ms: number }[] = [];
  const orders = Number(values.orders);
  for (let i = 0; i < orders; i++) {
    await recordDelivery({
      shop,
      topic: "orders/create",
      webhookId: randomUUID(),
      eventId: randomUUID(),
      triggeredAt: new Date().toISOString(),
      apiVersion: "2026-10",
      rawBody: documentedOrderAs(order, i),
    });
    if (i % 1000 === 999) {
      // This loop never leaves the event loop a turn: move the acknowledgement journal as the worker would.
      await moveJournaledDeliveries();
      const result = await upkeepQueueTables(policy);
      if (result?.checkpoint) checkpoints.push({ afterOrders: i + 1, walMiB: result.checkpoint.walBytes / 2 ** 20, ms: result.checkpoint.ms });
    }
  }
  process.send!({ type: "done", checkpoints, walMiB: walMiB(dir) });
  await new Promise(() => undefined); // killed by the parent, as a crash
} else {
  const dir = mkdtempSync(path.join(tmpdir(), "ms-bench-wal-"));
  try {
    const child = fork(fileURLToPath(import.meta.url), ["--child", dir, "--orders", values.orders!, ...(values["no-checkpoint"] ? ["--no-checkpoint"] : [])], {
      execArgv: tsxExecArgv(),
    });
    const done = await nextMessage<{ type: "done"; checkpoints: { afterOrders: number; walMiB: number; ms: number }[]; walMiB: number }>(
      child,
      "done",
      30 * 60_000,
    );
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    const started = performance.now();
    const db = openDatabase({ kind: "pglite", dataDir: dir });
    await db.sql.query(`SELECT count(*) FROM "WebhookDelivery"`);
    const reopenMs = performance.now() - started;
    await db.close();

    console.log(`pglite-wal: ${values.orders} orders/create (16 KB bodies), upkeep every 1,000, then SIGKILL and reopen`);
    console.log(`checkpoints: ${values["no-checkpoint"] ? "off (--no-checkpoint)" : "upkeep's threshold"}\n`);
    printTable(
      ["after orders", "WAL since previous", "held the thread"],
      done.checkpoints.map((c) => [c.afterOrders, `${c.walMiB.toFixed(0)} MiB`, `${c.ms} ms`]),
    );
    console.log(`\npg_wal at the kill: ${done.walMiB} MiB; reopen after the kill (crash recovery included): ${reopenMs.toFixed(0)} ms`);
    console.log(`machine: load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
