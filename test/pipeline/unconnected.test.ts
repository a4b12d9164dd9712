import { afterAll, beforeAll, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { fixture } from "../support/webhooks";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

describeEachDatabase("a shop that never connected", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());

  it("queues nothing for it: no calls pile up and no reminders wait for a late connection", async () => {
    const shop = `never-connected-${Date.now().toString(36)}.myshopify.com`;
    await recordInstall(shop, "read_customers"); // installed, never connected
    await h.send({ topic: "customers/create", shop, body: customerBody({}) });
    await h.send({ topic: "checkouts/create", shop, body: fixture("checkouts/create") });
    h.startWorkers();
    await h.settle();

    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop } });
    expect(deliveries.map((d) => [d.status, d.outcome])).toEqual([
      ["done", "ignored"],
      ["done", "ignored"],
    ]);
    expect(deliveries[0].outcomeDetail).toMatch(/not connected.*imports the history/);
    expect(await h.app.db.prisma.outboundCall.count({ where: { shop } })).toBe(0);
    expect(await h.app.db.prisma.abandonmentTimer.count({ where: { shop } })).toBe(0);

    // Connecting later sends nothing old.
    await h.connect(shop);
    await h.settle();
    expect(h.emulator.requests.filter((r) => r.method === "POST")).toHaveLength(0);
  });
});
