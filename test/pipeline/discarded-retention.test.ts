import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { pruneOldRows } from "~/pipeline/retention.server";
import type { PipelinePolicy } from "~/pipeline/policy";
import { actionData, openPage, postForm } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

let shopSeq = 0;
const newShop = () => `discard-retention-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
const DYING_POLICY: Partial<PipelinePolicy> = { ...FAST_POLICY, maxAttempts: 100_000, backoffCapMs: 100, retryDeadlineMs: 300 };

// SECURITY.md: raw webhooks go 14 days after they were processed; discarded problems and reminders
// that could not be made go with the same period.
describeEachDatabase("retention of what the merchant discarded and of reminders that failed", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const age = async (shop: string, days: number) => {
    const by = `interval '${days} days'`;
    await h.app.db.sql.query(`UPDATE "OutboundCall" SET "createdAt" = "createdAt" - ${by} WHERE shop = $1`, [shop]);
    await h.app.db.sql.query(`UPDATE "WebhookDelivery" SET "receivedAt" = "receivedAt" - ${by}, "finishedAt" = "finishedAt" - ${by} WHERE shop = $1`, [shop]);
    await h.app.db.sql.query(`UPDATE "AbandonmentTimer" SET "updatedAt" = "updatedAt" - ${by} WHERE shop = $1`, [shop]);
  };
  const stored = async (shop: string, email: string) => ({
    calls: await h.app.db.prisma.outboundCall.count({ where: { shop } }),
    rawWebhooks: await h.app.db.prisma.webhookDelivery.count({ where: { shop, rawBody: { contains: email } } }),
    timers: await h.app.db.prisma.abandonmentTimer.count({ where: { shop } }),
  });

  it("a discarded problem and the raw webhook behind it go 14 days on; a waiting one stays", async () => {
    const shop = newShop();
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    await h.connect(shop);
    h.emulator.setFaults({ errorRate: 1 });
    await h.send({ topic: "customers/create", shop, body: customerBody({ id: "770001", email: "private@example.com" }) });
    await h.send({ topic: "customers/create", shop, body: customerBody({ id: "770002", email: "waiting@example.com" }) });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    h.emulator.clearFaults();
    const discarded = await h.app.db.prisma.outboundCall.findMany({ where: { shop, status: "dead", objectKey: "customer:770001" } });
    expect(discarded.length).toBeGreaterThan(0);
    for (const d of discarded) {
      const r = await actionData<{ toast: string }>(await postForm(h.app.url, shop, "/app/problems", { intent: "discard", id: String(d.id) }));
      expect(r.toast).toBe("Discarded");
    }
    await age(shop, 13);
    await pruneOldRows(14);
    expect(await stored(shop, "private@example.com")).toMatchObject({ calls: discarded.length * 2, rawWebhooks: 1 });

    await age(shop, 2);
    await pruneOldRows(14);
    expect(await stored(shop, "private@example.com")).toMatchObject({ calls: discarded.length, rawWebhooks: 0 });
    // The problem not discarded still waits to be replayed (SECURITY.md: "dead letters until replayed").
    expect(await h.app.db.prisma.outboundCall.count({ where: { shop, status: "dead", objectKey: "customer:770002" } })).toBe(discarded.length);
  });

  it("a reminder that could not be made (its snapshot: email, items) goes 14 days on", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    const checkout = { ...JSON.parse(fixture("checkouts/create")), token: "chk-f", cart_token: "cart-chk-f", email: "fay@example.com", completed_at: null };
    await h.deliver({ topic: "checkouts/create", shop, body: checkout });
    // A snapshot the reminder cannot be made from (as written by an older version, say).
    await h.app.db.sql.query(
      `UPDATE "AbandonmentTimer" SET snapshot = jsonb_set(snapshot, '{products}', '"not a list"'), "dueAt" = now() - interval '1 second' WHERE shop = $1`,
      [shop],
    );
    await h.settle();
    expect(await h.app.db.prisma.abandonmentTimer.findFirstOrThrow({ where: { shop } })).toMatchObject({ status: "failed" });
    await age(shop, 15);
    await pruneOldRows(14);
    expect(await stored(shop, "fay@example.com")).toMatchObject({ timers: 0, rawWebhooks: 0 });
  });
});
