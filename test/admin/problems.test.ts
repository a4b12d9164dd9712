/**
 * The Problems page counts changes, as the home page does: a store change that could not be
 * delivered counts once in its group's badge and "Replay all", however many of its calls failed.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { install, newShop, until } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { actionData, loadData, openPage, postForm, routeData } from "./support";

interface ProblemsPage {
  groups: { reason: string; key: string; count: number; problems: { id: string; customer: string | null }[] }[];
}

describeEachDatabase("the Problems page", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(async () => {
    h.emulator.clearFaults();
    await h.reset();
  });

  it("two customer edits whose two calls each failed read as 2 changes, on Problems as on the home page", async () => {
    const shop = newShop("problems-changes");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    h.emulator.setFaults({ errorRate: 1, pathPrefix: "/api/" });
    // Each edit is a contact update and a customer event: four failed calls, two changes.
    await h.deliver({ topic: "customers/update", shop, body: customerBody({ id: "8301", email: "edit.one@example.com", consent: "subscribed" }) });
    await h.deliver({ topic: "customers/update", shop, body: customerBody({ id: "8302", email: "edit.two@example.com", consent: "subscribed" }) });
    await until("every call given up", async () => {
      const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
      return calls.length === 4 && calls.every((c) => c.status === "dead");
    });
    await h.stopWorkers();

    const page = await routeData<ProblemsPage>(await loadData(h.app.url, shop, "/app/problems"), "routes/app.problems");
    expect(page.groups.reduce((n, g) => n + g.count, 0)).toBe(2);
    expect(page.groups.flatMap((g) => g.problems)).toHaveLength(4);
    const home = await routeData<{ openDead: number }>(await loadData(h.app.url, shop, "/app"), "routes/app._index");
    expect(home.openDead).toBe(2);
    const html = await (await openPage(h.app.url, shop, "/app/problems")).text();
    const [group] = page.groups;
    expect(html).toContain(`Replay all (${group.count})`);
    expect(html).not.toContain("Replay all (4)");

    // Replaying the group says how many changes go out again, not how many calls.
    const replay = await actionData<{ ok: boolean; toast: string }>(await postForm(h.app.url, shop, "/app/problems", { intent: "replay-reason", key: group.key }));
    expect(replay).toMatchObject({ ok: true, toast: `${group.count} sending again` });
  });
});
