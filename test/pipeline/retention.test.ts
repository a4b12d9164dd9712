import { afterAll, beforeAll, expect, it } from "vitest";
import { pruneOldRows } from "~/pipeline/retention.server";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";
import { customerBody } from "../support/pipeline";
import { sendWebhook } from "../support/webhooks";

const DAY = 86_400_000;

describeEachDatabase("retention", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it("prunes finished work older than the retention period, in batches, and keeps dead letters and recent rows", async () => {
    const db = app.db.prisma;
    const old = new Date(Date.now() - 20 * DAY);
    const recent = new Date(Date.now() - 2 * DAY);
    const delivery = (id: string, receivedAt: Date, status = "done") =>
      db.webhookDelivery.create({
        data: { id, shop: "s", topic: "customers/create", webhookId: id, eventId: id, rawBody: "{}", status, receivedAt },
      });
    const call = (deliveryId: string, status: string, createdAt: Date) =>
      db.outboundCall.create({ data: { shop: "s", objectKey: `k-${deliveryId}`, kind: "customer", call: {}, deliveryId, status, createdAt } });
    // Several of each, so that a batch of 2 rows needs many statements.
    for (let i = 0; i < 5; i++) {
      await delivery(`old-delivered-${i}`, old);
      await call(`old-delivered-${i}`, "delivered", old);
      await delivery(`old-refused-${i}`, old);
      await call(`old-refused-${i}`, "refused", old);
    }
    await delivery("old-with-dead-letter", old);
    await call("old-with-dead-letter", "dead", old);
    await delivery("old-queued", old, "queued");
    await call("old-queued", "queued", old);
    // Old but not finished, and no call points at them: kept for their status alone (a webhook
    // waiting to be planned after an outage of weeks must not be pruned before it is planned).
    await delivery("old-queued-unplanned", old, "queued");
    await delivery("old-running-unplanned", old, "running");
    await delivery("recent", recent);
    await call("recent", "delivered", recent);
    await db.abandonmentTimer.createMany({
      data: ["sent", "cancelled", "pending", "failed"].map((status) => ({ shop: "s", checkoutToken: `t-${status}`, dueAt: old, snapshot: {}, status })),
    });
    // updatedAt is set by Prisma on write: age the rows directly.
    await app.db.sql.query(`UPDATE "AbandonmentTimer" SET "updatedAt" = $1::timestamp`, [old.toISOString()]);
    await db.abandonmentTimer.create({ data: { shop: "s", checkoutToken: "t-recent-sent", dueAt: recent, snapshot: {}, status: "sent" } });
    await db.completedCheckout.createMany({
      data: [
        { shop: "s", token: "c-old", orderId: "1", completedAt: old },
        { shop: "s", token: "c-recent", orderId: "2", completedAt: recent },
      ],
    });

    const pruned = await pruneOldRows(14, { rows: 2, busyRows: 2 });
    expect(pruned).toMatchObject({ deliveries: 10, calls: 10, timers: 3, completedCheckouts: 1 });
    expect(pruned.batches).toBeGreaterThan(10);
    expect((await db.webhookDelivery.findMany({ orderBy: { id: "asc" } })).map((d) => d.id)).toEqual([
      "old-queued",
      "old-queued-unplanned",
      "old-running-unplanned",
      "old-with-dead-letter",
      "recent",
    ]);
    expect((await db.outboundCall.findMany({ orderBy: { status: "asc" } })).map((c) => c.status)).toEqual(["dead", "delivered", "queued"]);
    expect((await db.abandonmentTimer.findMany({ orderBy: { checkoutToken: "asc" } })).map((t) => t.checkoutToken)).toEqual([
      "t-pending",
      "t-recent-sent",
    ]);
    expect((await db.completedCheckout.findMany()).map((c) => c.token)).toEqual(["c-recent"]);
    // A second run finds nothing left to do.
    expect(await pruneOldRows(14)).toMatchObject({ deliveries: 0, calls: 0, timers: 0, completedCheckouts: 0 });
  });

  it("keeps acknowledging webhooks during a large prune: every one answered 200, none waiting behind the whole prune", { timeout: 120_000 }, async () => {
    const ROWS = 20_000;
    const old = new Date(Date.now() - 30 * DAY).toISOString();
    await app.db.sql.exec(`
      INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", status, "receivedAt", "runAt")
        SELECT 'bulk-' || g, 'bulk.myshopify.com', 'customers/create', 'bulk-' || g, 'bulk-' || g, '{}', 'done', '${old}'::timestamp, '${old}'::timestamp
          FROM generate_series(1, ${ROWS}) g;
      INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, "deliveryId", status, "createdAt", "retryFrom", "runAt")
        SELECT 'bulk.myshopify.com', 'customer:' || g, 'customer', '{}'::jsonb, 'bulk-' || g, 'delivered', '${old}'::timestamp, '${old}'::timestamp, '${old}'::timestamp
          FROM generate_series(1, ${ROWS}) g;
    `);

    // Webhooks are accepted only for installed shops.
    await app.db.prisma.shop.upsert({ where: { domain: "retention.myshopify.com" }, create: { domain: "retention.myshopify.com" }, update: {} });
    let pruning = true;
    const prune = pruneOldRows(14).finally(() => (pruning = false));
    // The old, unbatched prune fails here: its DELETE holds PGlite until every row is gone.
    const pruneStarted = Date.now();
    const acks: { status: number; ms: number; duringPrune: boolean }[] = [];
    // Webhooks one after another while the prune runs, as Shopify would send them.
    for (let i = 0; i < 60; i++) {
      const sentAt = Date.now();
      const res = await sendWebhook(app.url, {
        topic: "customers/create",
        shop: "retention.myshopify.com",
        body: customerBody({ id: String(7_700_000 + i) }),
        eventId: `evt-prune-${database}-${i}`,
      });
      await res.arrayBuffer();
      acks.push({ status: res.status, ms: Date.now() - sentAt, duringPrune: pruning });
    }
    const pruned = await prune;
    const pruneMs = Date.now() - pruneStarted;

    expect(pruned).toMatchObject({ deliveries: ROWS, calls: ROWS });
    expect(acks.every((a) => a.status === 200)).toBe(true);
    // Webhooks were answered all along the prune, not queued behind it…
    expect(acks.filter((a) => a.duringPrune).length).toBeGreaterThanOrEqual(20);
    // …and none waited behind the whole of it.
    expect(Math.max(...acks.map((a) => a.ms))).toBeLessThan(pruneMs / 2);
    expect(await app.db.prisma.webhookDelivery.count({ where: { shop: "retention.myshopify.com" } })).toBe(acks.length);
  });
});
