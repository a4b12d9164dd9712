/**
 * Issue 31: an event the service answers with `success: false` (a 2xx) was counted as delivered.
 * It is retried, then dead-lettered with the service's words, shown on the Problems page like any
 * other dead letter. Pipeline + emulator over HTTP.
 */
import { expect, it } from "vitest";
import { listProblems } from "~/admin/problems.server";
import type { PipelinePolicy } from "~/pipeline/policy";
import { describeOverHttp } from "../support/over-http";
import { customerBody, FAST_POLICY } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `not-accepted-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
/** Three attempts, then a dead letter (the attempt bound decides, not the clock). */
const DYING_POLICY: Partial<PipelinePolicy> = { ...FAST_POLICY, retryDeadlineMs: 5 * 60_000, maxAttempts: 3 };

describeOverHttp("an event answered success: false", { workers: false, resetAfterEach: true }, ({ h }) => {
  const calls = (shop: string) => h.app.db.prisma.outboundCall.findMany({ where: { shop }, orderBy: { id: "asc" } });

  it("is retried, then dead-lettered with the service's words on the Problems page", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ eventsNotAccepted: { message: "Event storage is paused for this account" } });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();

    const events = (await calls(shop)).filter((c) => (c.call as { op: string }).op === "event");
    expect(events.length).toBeGreaterThan(0);
    for (const c of events) {
      expect(c.status).toBe("dead");
      expect(c.attempts).toBe(3);
      expect(c.lastError).toContain("Event storage is paused for this account");
    }
    const eventPosts = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/"));
    expect(eventPosts.length).toBeGreaterThan(events.length);
    expect(h.emulator.personEvents(body.email as string)).toEqual([]);

    const { groups } = await listProblems(shop);
    const group = groups.find((g) => g.reason.includes("not_accepted"));
    expect(group?.reason).toContain("Event storage is paused for this account");
    expect(group?.problems[0]?.message).toBe("Event storage is paused for this account");
  });

  it("a refusal that passes is delivered on a retry, and stored once", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.emulator.setFaults({ eventsNotAccepted: { count: 2 } });
    const body = customerBody({});
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, FAST_POLICY);
    await h.settle();
    const all = await calls(shop);
    expect(all.map((c) => c.status).every((s) => s === "delivered")).toBe(true);
    expect(h.emulator.personEvents(body.email as string).map((e) => e.event)).toEqual(["customer_created"]);
  });
});
