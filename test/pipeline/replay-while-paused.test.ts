import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { PipelinePolicy } from "~/pipeline/policy";
import { pauseShop } from "~/shops/connection.server";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `replay-paused-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
const DYING_POLICY: Partial<PipelinePolicy> = { ...FAST_POLICY, maxAttempts: 100_000, backoffCapMs: 100, retryDeadlineMs: 300 };

interface ProblemsPage {
  groups: { problems: { id: string }[] }[];
  retrying: { problems: { id: string }[] }[];
  replayed: { id: string; outcome: string }[];
}

describeEachDatabase("replay from the Problems page while the shop is paused", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const problemsPage = async (shop: string) => routeData<ProblemsPage>(await loadData(h.app.url, shop, "/app/problems"), "routes/app.problems");
  const ids = (groups: ProblemsPage["groups"]) => groups.flatMap((g) => g.problems.map((p) => p.id));

  it("says the item waits for the reconnection, keeps it on the page, and sends it once the merchant reconnects", async () => {
    const shop = newShop();
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    await h.connect(shop);
    h.emulator.setFaults({ errorRate: 1 });
    const body = customerBody({ id: "660001" });
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    h.emulator.clearFaults();
    const [dead] = ids((await problemsPage(shop)).groups);
    expect(dead).toBeTruthy();
    // Later the service rejects the shop's key: the shop is paused until the merchant reconnects.
    await pauseShop(shop, "unauthenticated: key revoked");
    const postsBefore = h.emulator.requests.filter((r) => r.method === "POST").length;

    const replay = await actionData<{ ok: boolean; toast: string }>(await postForm(h.app.url, shop, "/app/problems", { intent: "replay", id: dead }));
    expect(replay).toMatchObject({ ok: true, toast: "Queued: it will be sent once your marketing account is reconnected." });
    await h.settle();
    expect(h.emulator.requests.filter((r) => r.method === "POST")).toHaveLength(postsBefore);
    const waiting = await problemsPage(shop);
    expect(ids(waiting.groups)).not.toContain(dead);
    // Listed as replayed and still to be sent, not as a retry with the error from before the replay.
    expect(ids(waiting.retrying)).toEqual([]);
    expect(waiting.replayed).toEqual([expect.objectContaining({ id: dead, outcome: "sending" })]);

    await h.connect(shop);
    await h.settle();
    expect(h.emulator.requests.filter((r) => r.method === "POST").length).toBeGreaterThan(postsBefore);
    const sent = await problemsPage(shop);
    expect(ids(sent.retrying)).toEqual([]);
    expect(sent.replayed).toEqual([expect.objectContaining({ id: dead, outcome: "delivered" })]);
  });
});
