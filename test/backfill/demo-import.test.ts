import { afterAll, beforeAll, expect, it } from "vitest";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { startDemoStore } from "../../dev/demo/shopify-store";
import { customerEmail, type FakeStore } from "../../dev/shopify/fake-store";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { newShop, until } from "./helpers";

// The demo's Shopify (`npm run demo -- --serve`): connecting a shop from the Connection page
// imports its history through the fake Admin's bulk exports, over HTTP, to the end.
describeEachDatabase("the demo's history import", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startDemoStore(h.app.admin);
    h.startWorkers(1, FAST_POLICY);
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });

  it("connecting the shop from the Connection page imports its history, and the page shows the import finished", async () => {
    const shop = newShop("demo");
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
    const account = h.emulator.createAccount({ doubleOptIn: false, company: "Demo Account" });
    const connected = await actionData<{ ok: boolean; notice?: { title: string } }>(
      await postForm(h.app.url, shop, "/app/connection", { intent: "connect", apiKey: account.apiKey }),
    );
    expect(connected).toMatchObject({ ok: true });
    expect(connected.notice?.title).toMatch(/importing/);

    type Page = { history: { status: string; lastError: string | null; sending: number; objects: number } | null };
    const page = () => loadData(h.app.url, shop, "/app/connection").then((r) => routeData<Page>(r, "routes/app.connection"));
    const finished = await until(
      "the history import to finish",
      async () => {
        const p = await page();
        return p.history && p.history.status !== BACKFILL_STATUS.queued && p.history.status !== BACKFILL_STATUS.running ? p : null;
      },
      120_000,
    );
    expect(finished.history).toMatchObject({ status: BACKFILL_STATUS.done, lastError: null });
    // Every kind was exported through Shopify's Bulk Operations API, and every customer with an email reached the service.
    expect(new Set(store.operations.filter((o) => o.shop === shop).map((o) => o.kind))).toEqual(new Set(["customers", "products", "orders"]));
    await h.settle();
    const emails = store.objects.customers.map(customerEmail).filter((e): e is string => Boolean(e));
    const sent = h.emulator.requests.map((r) => JSON.stringify(r.body ?? null));
    expect(emails.length).toBeGreaterThan(0);
    expect(emails.filter((e) => !sent.some((b) => b.includes(e)))).toEqual([]);
  });
});
