import { afterAll, beforeAll, expect, it } from "vitest";
import { pruneOldRows } from "~/pipeline/retention.server";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { applyTestEnv } from "../support/env";

let db: TestDatabase;
beforeAll(async () => {
  applyTestEnv();
  db = await createTestDatabase();
});
afterAll(() => db.destroy());

it("prunes finished work older than the retention period and keeps dead letters and recent rows", async () => {
  const old = new Date(Date.now() - 20 * 86_400_000);
  const recent = new Date(Date.now() - 2 * 86_400_000);
  const delivery = (id: string, receivedAt: Date) =>
    db.prisma.webhookDelivery.create({
      data: { id, shop: "s", topic: "customers/create", webhookId: id, eventId: id, rawBody: "{}", status: "done", receivedAt },
    });
  await delivery("old-delivered", old);
  await delivery("old-with-dead-letter", old);
  await delivery("recent", recent);
  const call = (deliveryId: string, status: string, createdAt: Date) =>
    db.prisma.outboundCall.create({ data: { shop: "s", objectKey: `k-${deliveryId}`, kind: "customer", call: {}, deliveryId, status, createdAt } });
  await call("old-delivered", "delivered", old);
  await call("old-with-dead-letter", "dead", old);
  await call("recent", "delivered", recent);

  expect(await pruneOldRows(14)).toEqual({ deliveries: 1, calls: 1 });
  expect((await db.prisma.webhookDelivery.findMany({ orderBy: { id: "asc" } })).map((d) => d.id)).toEqual(["old-with-dead-letter", "recent"]);
  expect((await db.prisma.outboundCall.findMany()).map((c) => c.status).sort()).toEqual(["dead", "delivered"]);
});
