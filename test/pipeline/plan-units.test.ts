import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WEBHOOK_PRIORITY } from "../../app/pipeline/webhook-priority.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop } from "../backfill/helpers";

/**
 * Planning waits for Shopify before it writes (here: the consent of new subscribers, one read per
 * batch). With Shopify a network away, a worker planning one batch at a time paced a sale's new
 * subscribers by Shopify's answers: the next batch is claimed while one waits.
 */
describeEachDatabase("planning while Shopify answers late", (kind) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database: kind });
  }, 120_000);
  afterAll(async () => {
    h.app.admin.answerLate(0);
    await h.close();
  });

  it("a worker asks Shopify about the next batch of a sale's new subscribers before the first batch's answer is back; every one reaches the service", async () => {
    const shop = newShop("late-admin");
    await install(h, shop);
    const emails = Array.from({ length: 32 }, (_, i) => `late.${i}.${Date.now()}@example.com`);
    for (const email of emails) expect((await h.send({ topic: "customers/create", shop, body: customerBody({ email }) })).status).toBe(200);
    // Webhooks no longer arriving: the worker plans at its own size, not the busy one.
    await sleep(WEBHOOK_PRIORITY.busyWindowMs + 500);
    const answerMs = 3_000;
    h.app.admin.answerLate(answerMs);
    h.startWorkers(1, { ...FAST_POLICY, planBatchSize: 8 });
    await h.settle();

    const reads = h.app.admin.requests.filter((r) => r.shop === shop && r.operation === "ConsentOrigin").map((r) => Date.parse(r.at));
    expect(reads).toHaveLength(4);
    // One batch at a time, the second read would come only once the first was answered.
    expect(reads[1] - reads[0]).toBeLessThan(answerMs);
    for (const email of emails) expect(h.emulator.person(email)).toMatchObject({ email });
  }, 120_000);
});
