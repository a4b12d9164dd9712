import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { actionData, openPage, postForm } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, numeric, until } from "./helpers";

const DAY = 86_400_000;
const SIZE = { customers: 6, products: 2, orders: 8 };
// Orders 0-4 are recent; 5-7 older than Shopify's 60-day window.
const AGES = [3, 15, 30, 45, 58, 75, 120, 300];

/**
 * Shopify shows an app the orders of the last 60 days unless the shop granted `read_all_orders`
 * (Shopify's Order docs). The import then covers 60 days, says so, and the Connection page tells
 * the merchant why and how to get more, instead of promising a year that silently stops at 60 days.
 */
describeEachDatabase("the 60-day order window", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE);
    store.objects.orders.forEach((o, i) => (o.createdAt = o.processedAt = new Date(Date.now() - AGES[i] * DAY).toISOString()));
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`);
  });

  async function importedOrders(shop: string): Promise<string[]> {
    await requestBackfill(shop, { kinds: ["orders"] });
    h.startWorkers(1, FAST_POLICY);
    await until("the import to end", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    await h.settle();
    const rows = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop, source: "backfill" } });
    return rows.map((r) => numeric((JSON.parse(r.rawBody) as { admin_graphql_api_id: string }).admin_graphql_api_id)).sort();
  }
  const ids = (indexes: number[]) => indexes.map((i) => numeric(store.objects.orders[i].id)).sort();

  it("without read_all_orders: the import asks for 60 days, gets them, and the Connection page says why and how to get more", async () => {
    const shop = newShop("window");
    const granted = h.app.admin.addShop({ domain: shop }).scopes.split(",").filter((s) => s !== "read_all_orders");
    h.app.admin.shops.get(shop)!.scopes = granted.join(",");
    await install(h, shop);

    expect(await importedOrders(shop)).toEqual(ids([0, 1, 2, 3, 4]));
    const run = await backfillProgress(shop);
    expect(run).toMatchObject({ status: BACKFILL_STATUS.done, lastError: null });
    // The run asked Shopify for 60 days, not a year.
    expect(Math.abs(run!.ordersSince!.getTime() - (Date.now() - 60 * DAY))).toBeLessThan(10 * 60_000);

    const html = await (await openPage(h.app.url, shop, "/app/connection")).text();
    expect(html).toContain('data-orders-window="60"');
    expect(html).toContain("read_all_orders");
    expect(html).toContain("Partner Dashboard");
    expect(html).not.toContain("Last year");
  });

  it("with read_all_orders: the year asked for, older orders included, and no such note", async () => {
    const shop = newShop("window");
    await install(h, shop);
    expect(await importedOrders(shop)).toEqual(ids([0, 1, 2, 3, 4, 5, 6, 7]).filter((_, i) => AGES[i] <= 365));
    const html = await (await openPage(h.app.url, shop, "/app/connection")).text();
    expect(html).not.toContain("data-orders-window");
    expect(html).toContain("Last year");
  });

  it("without read_all_orders: connecting says the import brings 60 days of orders, not a year", async () => {
    const shop = newShop("window");
    const added = h.app.admin.addShop({ domain: shop });
    added.scopes = added.scopes.split(",").filter((s) => s !== "read_all_orders").join(",");
    expect((await openPage(h.app.url, shop, "/app/connection")).status).toBe(200);
    const result = await actionData<{ ok: boolean; notice?: { body: string } }>(
      await postForm(h.app.url, shop, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }),
    );
    expect(result.ok).toBe(true);
    expect(result.notice?.body).toContain("orders of the last 60 days");
    expect(result.notice?.body).not.toContain("last year");
  });
});
