/**
 * Each sync topic's keys (read from the payload alone, what planning locks and loads) are the ones
 * its mapper's plan has: the object, the objects it reads, and a contract's customer.
 */
import { describe, expect, it } from "vitest";
import { planWebhook, readWebhook } from "../../app/sync/plan-webhook";
import { topicInfo } from "../../app/sync/topics.server";
import { fixture, listFixtures, makeCtx } from "./fixtures";

const syncFixtures = listFixtures().filter(({ topic }) => topicInfo(topic)?.role === "sync");

function expectSameKeys(topic: string, body: unknown, ctx: ReturnType<typeof makeCtx>) {
  const { prior: _, ...noPrior } = ctx;
  const read = readWebhook(topic, body, noPrior);
  const plan = planWebhook(topic, body, ctx);
  expect(read.keys.objectKey).toBe(plan.objectKey);
  expect(read.keys.relatedKeys ?? []).toEqual(plan.relatedKeys ?? []);
  const customer = plan.nextState?.kind === "subscription" ? plan.nextState.customerId : null;
  expect(read.keys.customerId ?? null).toBe(customer);
  // The plan of what was read is the plan.
  expect(read.plan(ctx)).toEqual(plan);
  return read.keys.objectKey;
}

describe("plan keys", () => {
  it("covers the sync fixtures", () => expect(syncFixtures.length).toBeGreaterThan(20));

  it.each(syncFixtures)("$file: keys match the mapper's plan", ({ topic }) => {
    expectSameKeys(topic, fixture(topic), makeCtx());
  });

  it.each(syncFixtures.filter(({ topic }) => topic.startsWith("customer.")))("$file: keys of a mirrored segment's member", ({ topic }) => {
    const body = fixture(topic);
    // The segment as the payload's parse names it.
    const segment = expectSameKeys(topic, body, makeCtx()).replace(/^segment:/, "");
    expect(expectSameKeys(topic, body, makeCtx({ segmentTags: { [segment]: "vip" } }))).toMatch(/^customer:/);
  });

  it("an unknown topic is read as unhandled", () => {
    expectSameKeys("unknown/topic", {}, makeCtx());
  });
});
