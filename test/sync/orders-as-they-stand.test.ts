/**
 * Orders end to end (signed webhooks or the history import → pipeline → the emulator), issue 45:
 * Shopify's test orders start nothing (item 2); an edited order is sent as it stands (item 3);
 * order events are dated when the order happened, an imported order of 2024 under 2024 (item 8).
 * Bodies are Shopify's 2026-04 order and refund samples.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { install, newShop, numeric } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

type Json = Record<string, unknown>;
const sample = (topic: string): Json => JSON.parse(fixture(topic)) as Json;
const SAMPLE_ORDER_ID = "820982911946154508"; // the samples' admin_graphql_api_id

describeEachDatabase("orders as they stand, dated when they happened", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, { customers: 3, products: 1, orders: 3 }, { seed: 45 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`);
  });

  const deliver = (shop: string, topic: string, body: object | string) => h.deliver({ topic, shop, body });
  const eventsOf = (orderId: string) =>
    h.emulator.requests.filter((r) => r.path.startsWith("/api/events") && [(r.body as Json).id, ((r.body as Json).properties as Json | undefined)?.order_id].includes(orderId));
  const orderEvents = (path: string) => h.emulator.requests.filter((r) => r.path === path).map((r) => r.body as Json);

  it("a test order (Shopify's test: true), its payment and its refund start nothing; a real one does", async () => {
    const shop = newShop("test-orders");
    await h.connect(shop);
    h.startWorkers(1, FAST_POLICY);
    // Shopify's samples are test orders, as they come.
    for (const topic of ["orders/create", "orders/paid", "orders/fulfilled", "orders/updated"]) await deliver(shop, topic, sample(topic));
    // The sample's order_id was rounded by whoever stored it: Shopify sends the order's exact id.
    await deliver(shop, "refunds/create", fixture("refunds/create").replace(/"order_id":\s*\d+/g, `"order_id": ${SAMPLE_ORDER_ID}`));
    expect(eventsOf(SAMPLE_ORDER_ID)).toEqual([]);
    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop } });
    expect(deliveries.map((d) => [d.topic, d.outcomeDetail]).sort()).toEqual(
      ["orders/create", "orders/fulfilled", "orders/paid", "orders/updated", "refunds/create"].map((t) => [t, "test order"]),
    );

    // The same order, real: it is announced.
    const real = { ...sample("orders/create"), test: false, id: 5551, admin_graphql_api_id: "gid://shopify/Order/5551" };
    await deliver(shop, "orders/create", real);
    expect(eventsOf("5551").map((r) => r.path)).toEqual(["/api/events/order/created"]);
  });

  it("an edited order is sent as it stands: current quantities and totals, a removed line not sold", async () => {
    const shop = newShop("edits");
    await h.connect(shop);
    h.startWorkers(1, FAST_POLICY);
    const placed = sample("orders/updated");
    const lines = placed.line_items as Json[];
    const order: Json = { ...placed, test: false, line_items: lines.map((l, i) => (i === 1 ? { ...l, quantity: 2, current_quantity: 2 } : l)) };
    await deliver(shop, "orders/create", order);

    // The merchant's edit: the first line removed, the second down from 2 to 1. Shopify sends
    // orders/edited (the deltas) and orders/updated with the order after the edit.
    const [removed, halved] = [lines[0], lines[1]];
    const edited: Json = {
      ...order,
      updated_at: "2026-11-27T09:00:00-05:00",
      line_items: (order.line_items as Json[]).map((l, i) => (i === 0 ? { ...l, current_quantity: 0 } : i === 1 ? { ...l, current_quantity: 1 } : l)),
      current_subtotal_price: "304.97",
      current_total_price: "309.97",
      current_total_tax: "5.00",
      current_total_discounts: "0.00",
    };
    await deliver(shop, "orders/updated", edited);
    const body = orderEvents("/api/events/order/updated").at(-1)!;
    const products = body.products as Json[];
    expect(products.map((p) => p.name)).not.toContain(removed.name);
    expect(products).toHaveLength(lines.length - 1);
    expect(products.find((p) => p.name === halved.name)).toMatchObject({ quantity: 1, total: Number(halved.price) });
    expect(body).toMatchObject({ total: 309.97, taxes: 5, discounts: 0 });
  });

  it("order events are dated when the order happened: processed_at for a new order, the order's date for an imported one", async () => {
    const shop = newShop("dated");
    await install(h, shop);
    // An order placed in 2024, last touched in 2026 (fulfilled, tagged…).
    const old = store.objects.orders[0];
    Object.assign(old, { processedAt: "2024-03-05T10:00:00Z", createdAt: "2024-03-05T10:00:01Z", updatedAt: "2026-10-27T10:00:00Z" });
    await requestBackfill(shop, { orderDays: null });
    h.startWorkers(1, FAST_POLICY);
    for (const until = Date.now() + 120_000; ; ) {
      const p = await backfillProgress(shop);
      if (p?.status === "done" || p?.status === "failed") break;
      if (Date.now() > until) throw new Error(`import not finished: ${JSON.stringify(p)}`);
      await sleep(50);
    }
    await h.settle();
    const imported = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/order/") && (r.body as Json).id === numeric(old.id as string));
    expect(imported.length).toBeGreaterThan(0);
    for (const r of imported) expect(new Date((r.body as Json).occurred_at as string).toISOString()).toBe("2024-03-05T10:00:00.000Z");

    // A live order imported into Shopify by another app: placed in 2024 (processed_at), created now.
    const live = { ...sample("orders/create"), test: false, id: 5552, admin_graphql_api_id: "gid://shopify/Order/5552", processed_at: "2024-06-01T12:00:00Z", created_at: "2026-11-27T12:00:00Z" };
    await deliver(shop, "orders/create", live);
    const created = orderEvents("/api/events/order/created").find((b) => b.id === "5552");
    expect(created?.occurred_at).toBe("2024-06-01T12:00:00.000Z");
  });
});
