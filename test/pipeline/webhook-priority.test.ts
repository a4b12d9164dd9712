import { describe, expect, it } from "vitest";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { asWebhookInFlight, restBeforeNextUnitMs, WEBHOOK_PRIORITY, workerWaitsForWork, yieldToWebhooks } from "~/pipeline/webhook-priority.server";

const policy = { ...PIPELINE_POLICY };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// Test files share their process (vitest.config.ts): the file before this one may have recorded
// webhooks, and their time counts as "lately" for this module.
describe("webhooks before delivery work in a shared process", () => {
  it("gives the worker its own batch sizes when no webhook has arrived lately", async () => {
    await sleep(WEBHOOK_PRIORITY.busyWindowMs + 100);
    expect(await yieldToWebhooks(policy)).toEqual(policy);
  });

  it("holds the worker back until a webhook being recorded is acknowledged", async () => {
    const events: string[] = [];
    let finishAck!: () => void;
    const ack = asWebhookInFlight(
      () => new Promise<void>((resolve) => (finishAck = () => (events.push("acknowledged"), resolve())))
    );
    const worker = yieldToWebhooks(policy).then((next) => (events.push("worker resumed"), next));
    await sleep(20);
    expect(events).toEqual([]);
    finishAck();
    await ack;
    const next = await worker;
    expect(events).toEqual(["acknowledged", "worker resumed"]);
    // webhooks keep arriving: the worker takes small bites
    expect(next.batchSize).toBe(WEBHOOK_PRIORITY.busyBatchSize);
    expect(next.planBatchSize).toBe(WEBHOOK_PRIORITY.busyPlanBatchSize);
  });

  it("does not wait forever behind a stuck acknowledgement", async () => {
    let finishAck!: () => void;
    const ack = asWebhookInFlight(() => new Promise<void>((resolve) => (finishAck = resolve)));
    const resumed = await Promise.race([
      yieldToWebhooks(policy).then(() => "resumed"),
      sleep(WEBHOOK_PRIORITY.maxWaitMs * 3 + 500).then(() => "still waiting"),
    ]);
    expect(resumed).toBe("resumed");
    finishAck();
    await ack;
  });

  it("lets an acknowledgement's failure through and still counts it as finished", async () => {
    await expect(asWebhookInFlight(() => Promise.reject(new Error("database down")))).rejects.toThrow("database down");
    const events: string[] = [];
    await yieldToWebhooks(policy).then(() => events.push("worker resumed"));
    expect(events).toEqual(["worker resumed"]);
  });

  it("rests as long as the last unit took while webhooks arrive, but not for the time it waited for work", async () => {
    await asWebhookInFlight(async () => {});
    await yieldToWebhooks(policy); // a unit begins
    const now = Date.now();
    expect(restBeforeNextUnitMs(now + 30)).toBeGreaterThanOrEqual(30);
    expect(restBeforeNextUnitMs(now + WEBHOOK_PRIORITY.busyWindowMs / 2)).toBe(WEBHOOK_PRIORITY.maxWaitMs);
    // The worker found nothing to do and waited: a webhook that wakes it gets no rest in front of it.
    workerWaitsForWork();
    await asWebhookInFlight(async () => {});
    expect(restBeforeNextUnitMs(Date.now() + 100)).toBe(0);
  });

  it("returns to full batches once webhooks stop arriving", async () => {
    await sleep(WEBHOOK_PRIORITY.busyWindowMs + 50);
    expect(await yieldToWebhooks(policy)).toEqual(policy);
  });
});
