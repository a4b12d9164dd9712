import { execFile } from "node:child_process";
import { appendFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ACK_JOURNAL_FILE, ACK_JOURNAL_POLICY } from "~/pipeline/ack-journal.server";
import { journaledBacklog, moveJournaledDeliveries } from "~/pipeline/record.server";
import { startWorker } from "~/jobs/index.server";
import { journalTestbed, JOURNAL_SHOP } from "../support/ack-journal";
import { ROOT_DIR } from "../support/processes";
import { sendWebhook } from "../support/webhooks";

/**
 * Embedded PGlite journals acknowledgements (app/pipeline/ack-journal.server.ts): Shopify gets
 * its 200 without waiting for the worker's transaction, and nothing answered 200 is lost or
 * recorded twice, whatever the process dies of.
 */

const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const bed = journalTestbed();
const { order, deliveries, counter, journalText } = bed;

describe("the acknowledgement journal [pglite]", () => {
  it("answers a webhook while the worker's transaction holds PGlite's one connection, and records it", async () => {
    // The first delivery for a shop is recorded directly: that it was recorded proves the install.
    expect((await order(1)).status).toBe(200);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let transactionOver = false;
    const transaction = bed.db.sql
      .transaction(async (tx) => {
        await tx.query(`SELECT 1`);
        await gate;
      })
      .then(() => (transactionOver = true));
    try {
      const answer = await Promise.race([order(2), sleep(5_000).then(() => "no answer within 5 s")]);
      expect(typeof answer === "string" ? answer : answer.status).toBe(200);
      expect(transactionOver).toBe(false);
    } finally {
      release();
      await transaction;
    }
    await moveJournaledDeliveries();
    expect((await deliveries()).map((d) => d.eventId)).toEqual(["evt-orders/create-1", "evt-orders/create-2"]);
    expect(await counter()).toEqual({ received: 2, duplicates: 0 });
  });

  it("lets webhooks be answered between the statements of a long transaction", async () => {
    expect((await order(1)).status).toBe(200);
    // Without a turn of the event loop between statements, the request could not even be read
    // before the last of these had run.
    const transactionEnd = bed.db.sql
      .transaction(async (tx) => {
        for (let i = 0; i < 150; i++) await tx.query(`SELECT count(*) FROM generate_series(1, 20000)`);
      })
      .then(() => performance.now());
    await sleep(0);
    const answered = order(2).then((res) => ({ status: res.status, at: performance.now() }));
    const [answer, end] = await Promise.all([answered, transactionEnd]);
    expect(answer.status).toBe(200);
    expect(answer.at).toBeLessThan(end);
  });

  it("moves each delivery exactly once after a kill -9, and cuts off a line the crash left unfinished", { timeout: 120_000 }, async () => {
    // This process lets go of the directory; a child acknowledges 40 deliveries, moves the first
    // half, and kills itself with the second half journaled only.
    bed.server?.close();
    bed.server = undefined;
    await bed.close();
    const child = await run(process.execPath, ["--import", "tsx", path.join(ROOT_DIR, "test/support/ack-journal-child.ts"), bed.dataDir, "crash.myshopify.com", "40"], {
      cwd: ROOT_DIR,
      timeout: 90_000,
    }).catch((error: { stdout?: string; signal?: string }) => {
      expect(error.signal).toBe("SIGKILL");
      return { stdout: error.stdout ?? "" };
    });
    const { results } = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as { results: string[] };
    expect(results[0]).toBe("recorded");
    expect(results.slice(1).every((r) => r === "journaled")).toBe(true);
    // A write the crash cut short: its request was never answered.
    appendFileSync(path.join(bed.dataDir, ACK_JOURNAL_FILE), `{"shop":"crash.myshopify.com","topic":"customers/cre`);

    await bed.open();
    await moveJournaledDeliveries();
    const moved = await deliveries("crash.myshopify.com");
    expect(moved.map((d) => d.eventId).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `evt-${i}`).sort());
    // In the order they were answered.
    const order = moved.map((d) => Number(d.eventId.slice(4)));
    for (let i = 1; i < moved.length; i++) {
      if (moved[i].receivedAt.getTime() > moved[i - 1].receivedAt.getTime()) expect(order[i]).toBeGreaterThan(order[i - 1]);
    }
    // The first half was moved before the crash and its checkpoint with it: not counted again.
    expect(await counter("crash.myshopify.com")).toEqual({ received: 40, duplicates: 0 });
    expect(journalText().endsWith("\n")).toBe(true);
    for (const line of journalText().split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("moves another shop's webhook ahead of a flash sale journaled before it, and still moves each delivery once", async () => {
    const quiet = "quiet.myshopify.com";
    await bed.db.prisma.shop.create({ data: { domain: quiet } });
    ACK_JOURNAL_POLICY.moveDelayMs = 60_000; // moved when the test says
    ACK_JOURNAL_POLICY.moveBatch = 10;
    // The first delivery of each shop is recorded directly; what follows is journaled.
    expect((await order(0)).status).toBe(200);
    expect((await order(0, quiet)).status).toBe(200);
    for (let n = 1; n <= 100; n++) expect((await order(n)).status).toBe(200);
    expect((await order(1, quiet)).status).toBe(200);
    // The database refuses a second move: only the first transaction of 10 gets in.
    await bed.db.sql.query(`CREATE FUNCTION refuse_second_move() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF (SELECT count(*) FROM "WebhookDelivery") >= 12 THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`);
    await bed.db.sql.query(`CREATE TRIGGER refuse_second_move BEFORE INSERT ON "WebhookDelivery" FOR EACH ROW EXECUTE FUNCTION refuse_second_move()`);
    await expect(moveJournaledDeliveries()).rejects.toThrow(/disk full/);
    // First come, first served, the quiet shop's change would wait for 10 moves of the sale's.
    expect((await deliveries(quiet)).map((d) => d.eventId)).toEqual(["evt-orders/create-0", "evt-orders/create-1"]);
    expect(await deliveries()).toHaveLength(10);
    await bed.db.sql.query(`DROP TRIGGER refuse_second_move ON "WebhookDelivery"`);
    // A restart here moves again from the first line left behind: the quiet change is not recorded twice.
    await bed.close();
    await bed.open();
    await moveJournaledDeliveries();
    expect((await deliveries()).map((d) => d.eventId)).toEqual(Array.from({ length: 101 }, (_, n) => `evt-orders/create-${n}`));
    expect((await deliveries(quiet)).map((d) => d.eventId)).toEqual(["evt-orders/create-0", "evt-orders/create-1"]);
    expect(await counter()).toEqual({ received: 101, duplicates: 0 });
    // The quiet change moved ahead was moved again after the restart: Shopify would have counted it a retry too.
    expect(await counter(quiet)).toEqual({ received: 2, duplicates: 1 });
  });

  it("lets the worker plan another shop's change while a flash sale is still being moved in", { timeout: 120_000 }, async () => {
    const quiet = "quiet.myshopify.com";
    await bed.db.prisma.shop.create({ data: { domain: quiet } });
    ACK_JOURNAL_POLICY.moveDelayMs = 60_000; // moved when the test says
    ACK_JOURNAL_POLICY.moveBatch = 5;
    expect((await order(0)).status).toBe(200);
    for (let n = 1; n <= 600; n++) expect((await order(n)).status).toBe(200);
    // The quiet shop's first delivery is recorded directly: waiting to be planned.
    expect((await order(0, quiet)).status).toBe(200);
    const moving = moveJournaledDeliveries(); // 120 transactions, the sale's
    const worker = startWorker({ id: "journal-worker", policy: { pollMs: 20 } });
    try {
      let backlogWhenPlanned = -1;
      for (let i = 0; i < 3_000 && backlogWhenPlanned < 0; i++) {
        const [row] = await bed.db.sql.query<{ status: string }>(`SELECT status FROM "WebhookDelivery" WHERE shop = $1`, [quiet]);
        if (row?.status === "done") backlogWhenPlanned = await journaledBacklog();
        else await sleep(5);
      }
      // Waiting for the whole move before each pass, the worker planned it only once the sale was in.
      expect(backlogWhenPlanned).toBeGreaterThan(0);
    } finally {
      await moving;
      await worker.stop();
    }
    expect(await deliveries()).toHaveLength(601);
  });

  it("rests between its own batches, so statements issued one after another are not held one per batch", { timeout: 120_000 }, async () => {
    ACK_JOURNAL_POLICY.moveDelayMs = 60_000; // the sale is journaled before the mover starts
    ACK_JOURNAL_POLICY.moveBatch = 10;
    expect((await order(0)).status).toBe(200);
    for (let n = 1; n <= 400; n++) expect((await order(n)).status).toBe(200);
    // The mover's own loop starts with the next acknowledgement: 40 batches.
    ACK_JOURNAL_POLICY.moveDelayMs = 0;
    expect((await order(401)).status).toBe(200);
    while ((await journaledBacklog()) > 400) await sleep(1);
    // Twenty statements one after another, as planning issues them.
    const before = await journaledBacklog();
    for (let i = 0; i < 20; i++) await bed.db.sql.query(`SELECT 1`);
    const movedMeanwhile = before - (await journaledBacklog());
    // Back to back, each of them waited for a whole batch: twenty batches (200 deliveries) moved meanwhile.
    expect(movedMeanwhile).toBeLessThan(10 * ACK_JOURNAL_POLICY.moveBatch);
    await moveJournaledDeliveries();
    expect(await deliveries()).toHaveLength(402);
    expect(await counter()).toEqual({ received: 402, duplicates: 0 });
  });

  it("answers 404 for a shop it does not know, and drops what a shop uninstalled meanwhile sends", async () => {
    expect((await order(1, "stranger.myshopify.com")).status).toBe(404);
    expect((await order(1)).status).toBe(200);
    await bed.db.prisma.shop.update({ where: { domain: JOURNAL_SHOP }, data: { uninstalledAt: new Date() } });
    // Still counted as installed here (ACK_JOURNAL_POLICY.installedShopTtlMs): journaled, answered 200...
    expect((await order(2)).status).toBe(200);
    // ...and compliance requests, which Shopify sends after an uninstall, are kept.
    const redact = await sendWebhook(bed.url, {
      topic: "customers/redact",
      shop: JOURNAL_SHOP,
      body: { shop_domain: JOURNAL_SHOP, customer: { id: 1, email: "a@example.com" }, orders_to_redact: [] },
      eventId: "evt-redact",
    });
    expect(redact.status).toBe(200);
    await moveJournaledDeliveries();
    expect((await deliveries()).map((d) => d.eventId).sort()).toEqual(["evt-orders/create-1", "evt-redact"]);
    expect(await counter()).toEqual({ received: 2, duplicates: 0 });
  });

  it("starts a new file once everything is moved, without moving anything twice", async () => {
    ACK_JOURNAL_POLICY.rotateAfterBytes = 1;
    for (let n = 1; n <= 4; n++) expect((await order(n)).status).toBe(200);
    const firstGeneration = journalText().split("\n")[0];
    await moveJournaledDeliveries();
    expect(journalText().split("\n").filter(Boolean)).toHaveLength(1); // the header alone
    expect(journalText().split("\n")[0]).not.toBe(firstGeneration);
    for (let n = 5; n <= 6; n++) expect((await order(n)).status).toBe(200);
    await moveJournaledDeliveries();
    expect(await bed.db.sql.query(`SELECT generation FROM "AckJournalCheckpoint"`)).toHaveLength(1);
    // Closed and opened again: the file holds nothing that was not moved.
    await bed.close();
    await bed.open();
    await moveJournaledDeliveries();
    expect(await deliveries()).toHaveLength(6);
    expect(await counter()).toEqual({ received: 6, duplicates: 0 });
    expect(statSync(path.join(bed.dataDir, ACK_JOURNAL_FILE)).size).toBeLessThan(200);
  });

  it("keeps no delivery's body in the journal for more than seconds after it is moved", async () => {
    ACK_JOURNAL_POLICY.rotateAfterMs = 300;
    expect((await order(1)).status).toBe(200);
    expect((await order(2)).status).toBe(200);
    expect(journalText()).toContain("buyer-2@example.com");
    // No more traffic: moved within moveDelayMs, and the file replaced once it is old enough.
    await sleep(ACK_JOURNAL_POLICY.moveDelayMs + ACK_JOURNAL_POLICY.rotateAfterMs + 500);
    expect(journalText()).not.toContain("buyer-2@example.com");
    expect((await deliveries()).map((d) => d.eventId)).toEqual(["evt-orders/create-1", "evt-orders/create-2"]);
  });

  it("sets aside a journal file it cannot read, and starts a new one", async () => {
    writeFileSync(path.join(bed.dataDir, ACK_JOURNAL_FILE), "not a journal\n");
    expect((await order(1)).status).toBe(200);
    expect((await order(2)).status).toBe(200);
    await moveJournaledDeliveries();
    expect(readdirSync(bed.dataDir).filter((f) => f.startsWith(`${ACK_JOURNAL_FILE}.unreadable-`))).toHaveLength(1);
    expect((await deliveries()).map((d) => d.eventId)).toEqual(["evt-orders/create-1", "evt-orders/create-2"]);
  });
});
