/**
 * A delivery is planned once: its keys come from the topic's registry line, so the mapper runs
 * once, with the object's stored state, also when the object already has state.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { TOPICS } from "~/sync/topics.server";
import type { Planner } from "~/sync/topic-planner";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `planned-once-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
const TOPIC = "customers/update";

/** Counts the runs of the topic's mapper, however planning reaches it. */
function countPlans(topic: keyof typeof TOPICS): { runs: () => number; restore: () => void } {
  const line = TOPICS[topic] as { planner: Planner };
  const original = line.planner;
  let runs = 0;
  const counted = Object.assign(
    (body: unknown, ctx: Parameters<Planner>[1], t: string) => {
      runs++;
      return original(body, ctx, t);
    },
    {
      read(body: unknown, ctx: Parameters<Planner["read"]>[1], t: string) {
        const read = original.read(body, ctx, t);
        return { keys: read.keys, plan: (full: Parameters<Planner>[1]) => (runs++, read.plan(full)) };
      },
    },
  );
  line.planner = counted;
  return { runs: () => runs, restore: () => void (line.planner = original) };
}

describeEachDatabase("each delivery planned once", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  it("a customer with stored state: its update runs the mapper once", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "9301", email: "once9301@example.com", consent: "subscribed" }) });
    expect(await h.app.db.prisma.objectState.count({ where: { shop, objectKey: "customer:9301" } })).toBe(1);

    const counter = countPlans(TOPIC);
    try {
      await h.deliver({
        topic: TOPIC,
        shop,
        body: customerBody({ id: "9301", email: "once9301@example.com", firstName: "Renamed", consent: "subscribed", updatedAt: "2026-04-02T09:00:00Z" }),
      });
      expect(counter.runs()).toBe(1);
    } finally {
      counter.restore();
    }
    expect(h.emulator.person("once9301@example.com")?.customFields).toMatchObject({ firstName: "Renamed" });
  });
});
