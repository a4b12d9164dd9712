/**
 * A process that acknowledges deliveries into embedded PGlite's journal and dies by SIGKILL
 * (test/pipeline/ack-journal.test.ts): the first half moved into the database, the second half
 * still only in the journal. Run with `node --import tsx <this> <dataDir> <shop> <count>`.
 */
import { applyTestEnv } from "./env";

const [dataDir, shop, countText] = process.argv.slice(2);
applyTestEnv({ PGLITE_DATA_DIR: dataDir });
const { openDatabase, installDatabase } = await import("../../app/db.server");
const { ACK_JOURNAL_POLICY } = await import("../../app/pipeline/ack-journal.server");
const { moveJournaledDeliveries, recordDelivery } = await import("../../app/pipeline/record.server");

// Nothing is moved behind the test's back: only the explicit move below.
ACK_JOURNAL_POLICY.moveDelayMs = 3_600_000;
const db = openDatabase({ kind: "pglite", dataDir });
await db.migrate();
installDatabase(db);
await db.prisma.shop.create({ data: { domain: shop } });
const count = Number(countText);
const results: string[] = [];
for (let i = 0; i < count; i++) {
  results.push(
    await recordDelivery({
      shop,
      topic: "customers/create",
      webhookId: `wh-${i}`,
      eventId: `evt-${i}`,
      triggeredAt: null,
      apiVersion: "2026-10",
      rawBody: JSON.stringify({ id: 7_100_000 + i, email: `journal-${i}@example.com`, updated_at: "2026-11-25T08:00:00Z" }),
    }),
  );
  if (i === Math.floor(count / 2)) await moveJournaledDeliveries();
}
process.stdout.write(`${JSON.stringify({ results })}\n`, () => process.kill(process.pid, "SIGKILL"));
