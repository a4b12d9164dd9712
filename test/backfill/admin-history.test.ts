import { afterAll, beforeAll, expect, it } from "vitest";
import type { HistoryView } from "~/admin/history.server";
import { disconnectShop } from "~/shops/connection.server";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { fixture } from "../support/webhooks";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop } from "./helpers";

// The merchant's side of the history import: start it again with the orders period of their
// choice, and watch it run (the page refreshes its data while it runs).
describeEachDatabase("history import in the admin", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());

  const resync = (shop: string, orders: string) =>
    postForm(h.app.url, shop, "/app/connection", { intent: "resync", orders }).then((r) => actionData<{ ok: boolean; toast: string; errors?: Record<string, string> }>(r));
  const history = async (shop: string) => (await routeData<{ history: HistoryView | null }>(await loadData(h.app.url, shop, "/app/connection"), "routes/app.connection")).history;

  it("starts an import of the chosen orders period, refuses a second one, and shows progress while it runs", async () => {
    const shop = newShop("admin-history");
    await install(h, shop);
    expect(await history(shop)).toBeNull();
    expect(await openPage(h.app.url, shop, "/app/connection").then((r) => r.text())).toContain("Import history again");

    const bad = await resync(shop, "12");
    expect(bad).toMatchObject({ ok: false, errors: { orders: "Choose how far back to import orders." } });
    expect(await h.app.db.prisma.backfillRun.count({ where: { shop } })).toBe(0);

    expect(await resync(shop, "90")).toMatchObject({ ok: true, toast: "History import started" });
    const run = await h.app.db.prisma.backfillRun.findFirstOrThrow({ where: { shop } });
    const days = (Date.now() - run.ordersSince!.getTime()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);
    expect(await resync(shop, "all")).toMatchObject({ ok: false, toast: expect.stringMatching(/already under way/) });

    // While Shopify prepares the export there is nothing to count yet: no "0 / …", no "0 per second".
    const exporting = (await openPage(h.app.url, shop, "/app/connection").then((r) => r.text())).replaceAll("<!-- -->", "");
    expect(exporting).toContain("Customers (1 of 3): waiting for Shopify to prepare the export…");
    expect(exporting).toContain("the import starts as soon as the file is ready");
    expect(exporting).not.toContain("data-history-done");

    // Mid-import: orders (3 of 3), 400 of the 1,000 lines Shopify exported.
    await h.app.db.prisma.backfillRun.update({ where: { id: run.id }, data: { kindIndex: 2, phase: "import", objectCount: 1_000, linesDone: 400, objects: 5_300 } });
    expect(await history(shop)).toMatchObject({ status: "queued", kind: "orders", kindNumber: 3, kinds: 3, exporting: false, done: 400, total: 1_000, objects: 5_300 });
    const html = await openPage(h.app.url, shop, "/app/connection").then((r) => r.text());
    expect(html).toContain('data-history-progress="40"');
    expect(html).toMatch(/400<!-- --> \/ <!-- -->1,000/);
    expect(html).not.toContain("Import history again");

    await h.app.db.prisma.backfillRun.update({ where: { id: run.id }, data: { status: "done", finishedAt: new Date() } });
    expect(await openPage(h.app.url, shop, "/app/connection").then((r) => r.text())).toContain("5,300 customers, products and orders imported");
    expect(await resync(shop, "all")).toMatchObject({ ok: true });
    const latest = await h.app.db.prisma.backfillRun.findFirstOrThrow({ where: { shop, status: "queued" } });
    expect(latest.ordersSince).toBeNull();
  });
  it("refuses to import history for a store that is no longer connected (a page opened before disconnecting)", async () => {
    const shop = newShop("admin-history");
    await install(h, shop);
    await disconnectShop(shop);
    expect(await resync(shop, "all")).toMatchObject({ ok: false, toast: "Connect your marketing account first: connecting imports your history." });
    expect(await h.app.db.prisma.backfillRun.count({ where: { shop } })).toBe(0);
  });
  it("an import whose files are read but whose objects still wait to be sent says so, and 'imported' once they are sent", async () => {
    const shop = newShop("admin-history");
    await install(h, shop);
    // The run is done when Shopify's files are read; two of the customers it read still wait in the queue.
    await h.app.db.prisma.backfillRun.create({
      data: { id: `run-${shop}`, shop, kinds: ["customers"], kindIndex: 1, phase: "import", status: "done", objects: 2, finishedAt: new Date() },
    });
    const customer = JSON.parse(fixture("customers/update")) as Record<string, unknown>;
    for (const n of [1, 2]) {
      await h.app.db.prisma.webhookDelivery.create({
        data: {
          shop,
          topic: "customers/update",
          webhookId: `backfill:${n}`,
          eventId: `backfill:${n}`,
          source: "backfill",
          rawBody: JSON.stringify({ ...customer, id: 900 + n, admin_graphql_api_id: `gid://shopify/Customer/${900 + n}`, email: `waiting.${n}@example.com` }),
        },
      });
    }
    const page = async () => (await openPage(h.app.url, shop, "/app/connection").then((r) => r.text())).replaceAll("<!-- -->", "");
    const waiting = await page();
    expect(waiting).toContain("2 customers, products and orders read from Shopify, 2 still being sent.");
    expect(waiting).not.toContain(">Imported<");

    h.startWorkers(1, FAST_POLICY);
    await h.settle();
    await h.stopWorkers();
    expect(await page()).toContain("2 customers, products and orders imported");
  });
});
