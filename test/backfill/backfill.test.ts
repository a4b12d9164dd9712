import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { BackfillRefused, backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { customerEmail, startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

let shopSeq = 0;
const newShop = () => `backfill-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
const SIZE = { customers: 40, products: 12, orders: 30 };

describeEachDatabase("history backfill", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE);
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    // A test that failed leaves its run queued: it must not start exports in the next test.
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`);
  });

  /** Installs the app (token exchange: the offline token the export needs) and connects the shop. */
  async function install(shop: string): Promise<void> {
    const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
    const res = await fetch(`${h.app.url}/app?embedded=1&shop=${shop}&host=${host}&id_token=${await mintSessionToken({ shop })}`, {
      headers: { "user-agent": CHROME_UA },
    });
    expect(res.status).toBe(200);
    await h.connect(shop);
  }

  async function finished(shop: string, timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const p = await backfillProgress(shop);
      if (p && (p.status === "done" || p.status === "failed")) break;
      if (Date.now() > until) throw new Error(`backfill not finished: ${JSON.stringify(p)}`);
      await sleep(50);
    }
    await h.settle();
  }

  const events = () => h.emulator.requests.filter((r) => r.path.startsWith("/api/events/"));

  it("imports the whole store through the pipeline, every event silent, one run at a time", async () => {
    const shop = newShop();
    await install(shop);
    await requestBackfill(shop, { orderDays: null });
    await expect(requestBackfill(shop)).rejects.toBeInstanceOf(BackfillRefused);
    h.startWorkers(1, FAST_POLICY);
    await finished(shop);

    expect(await backfillProgress(shop)).toMatchObject({ status: "done", kindsDone: 3, objects: SIZE.customers + SIZE.products + SIZE.orders });
    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop, source: "backfill" } });
    expect(deliveries).toHaveLength(SIZE.customers + SIZE.products + SIZE.orders);
    expect(deliveries.filter((d) => d.outcome === "invalid").map((d) => d.outcomeDetail)).toEqual([]);

    // Every customer with an email is known to the service; every live product advertised; every
    // order with a buyer recorded — and nothing starts an automation.
    const withEmail = store.objects.customers.filter((c) => customerEmail(c));
    for (const c of withEmail) expect(h.emulator.requests.some((r) => JSON.stringify(r.body ?? null).includes(customerEmail(c)!))).toBe(true);
    const live = store.objects.products.filter((p) => p.status === "ACTIVE");
    expect(new Set(events().filter((r) => r.path.startsWith("/api/events/product/")).map((r) => (r.body as { id: string }).id)).size).toBe(live.length);
    const ordersWithBuyer = store.objects.orders.filter((o) => o.email || o.customer);
    expect(new Set(events().filter((r) => r.path.startsWith("/api/events/order/")).map((r) => (r.body as { id: string }).id)).size).toBe(ordersWithBuyer.length);
    expect(events().length).toBeGreaterThan(0);
    expect(events().filter((r) => (r.body as { silent?: boolean }).silent !== true)).toEqual([]);
    // History is not news: no order/completed for orders already complete.
    expect(events().filter((r) => r.path === "/api/events/order/completed")).toEqual([]);

    // Once finished, the shop may start another.
    const again = await requestBackfill(shop);
    expect(again.id).toEqual(expect.any(String));
    // Not run here: the shops of this file share one service account.
    await h.app.db.prisma.backfillRun.delete({ where: { id: again.id } });
  });

  it("a line of the export that cannot be read is recorded as invalid with its reason; the rest of the store is imported", async () => {
    const shop = newShop();
    await install(shop);
    const nul = store.customer(3);
    store.editNextExport("customers", (lines) => {
      // A cut-off line, a line that is not an object, and a name holding U+0000 (jsonb refuses it).
      const named = lines.map((l) => (l.startsWith(JSON.stringify({ id: nul.id }).slice(0, -1)) ? l.replace(/"firstName":("[^"]*"|null)/, '"firstName":"Nu\\u0000l"') : l));
      return [...named.slice(0, 2), '{"id":"gid://shopify/Customer/1","email":"cut@exa', "[]", ...named.slice(2)];
    });
    h.startWorkers(1, FAST_POLICY);
    await requestBackfill(shop, { kinds: ["customers"] });
    await finished(shop);

    expect((await backfillProgress(shop))?.status).toBe("done");
    const invalid = await h.app.db.sql.query<{ outcomeDetail: string }>(
      `SELECT "outcomeDetail" FROM "WebhookDelivery" WHERE shop = $1 AND outcome = 'invalid' ORDER BY "outcomeDetail"`,
      [shop],
    );
    expect(invalid.map((r) => r.outcomeDetail)).toEqual([
      expect.stringMatching(/^history import: line 3 is not valid JSON: /),
      "history import: line 4 is not valid JSON: not a JSON object",
    ]);
    // The health page counts them as customers that could not be used, not as skipped.
    const [counter] = await h.app.db.sql.query<{ unusable: number; skipped: number }>(
      `SELECT unusable, skipped FROM "SyncCounter" WHERE shop = $1 AND kind = 'customer'`,
      [shop],
    );
    expect(counter).toEqual({ unusable: 2, skipped: 0 });
    // Every customer with an email reached the service, the one named with U+0000 as U+FFFD.
    const sent = h.emulator.requests.map((r) => JSON.stringify(r.body ?? null));
    for (const c of store.objects.customers.filter((c) => customerEmail(c))) expect(sent.some((b) => b.includes(customerEmail(c)!))).toBe(true);
    if (customerEmail(nul)) expect(sent.some((b) => b.includes(customerEmail(nul)!) && b.includes("Nu\uFFFDl"))).toBe(true);
  });

  it("follows Shopify's cost throttle: a THROTTLED export waits for the bucket and goes on, no step fails", async () => {
    const shop = newShop();
    await install(shop);
    // Refilling 20 points a second: the export (10 points) finds the bucket short even when the
    // machine is busy and the worker takes half a second to get there (at 200 it often did not).
    store.throttle({ currentlyAvailable: 0, restoreRate: 20 });
    const before = store.throttled.bulkOperationRunQuery ?? 0;
    await requestBackfill(shop, { kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    // A step that failed would show its error for seconds (it is retried 5 s later).
    const errors = new Set<string>();
    for (;;) {
      const p = await backfillProgress(shop);
      if (p?.lastError) errors.add(p.lastError);
      if (p?.status === "done" || p?.status === "failed") break;
      await sleep(20);
    }
    await h.settle();
    store.throttle({ currentlyAvailable: 2_000, restoreRate: 100 });
    expect(store.throttled.bulkOperationRunQuery ?? 0).toBeGreaterThan(before);
    expect([...errors]).toEqual([]);
    expect(await backfillProgress(shop)).toMatchObject({ status: "done", objects: SIZE.customers });
  });

  it("imports no faster than the pipeline plans: at most a few chunks wait, so live webhooks are not queued behind the store", async () => {
    const shop = newShop();
    await install(shop);
    await requestBackfill(shop, { orderDays: null });
    // Chunks of 10, planning one delivery at a time: without backpressure most of the store would wait.
    h.startWorkers(1, { ...FAST_POLICY, backfillChunk: 10, planBatchSize: 1 });
    let most = 0;
    for (;;) {
      const [{ n }] = await h.app.db.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE shop = $1 AND source = 'backfill' AND status <> 'done'`,
        [shop],
      );
      most = Math.max(most, n);
      const p = await backfillProgress(shop);
      if (p?.status === "done" || p?.status === "failed") break;
      await sleep(5);
    }
    await h.settle();
    expect(await backfillProgress(shop)).toMatchObject({ status: "done", objects: SIZE.customers + SIZE.products + SIZE.orders });
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(30);
  });

  it("a live webhook newer than the exported row wins", async () => {
    const shop = newShop();
    await install(shop);
    const exported = store.customer(0);
    const id = (exported.id as string).split("/").pop()!;
    // The live update is newer than the export's updatedAt and renames the customer.
    const live = `{"id":${id},"admin_graphql_api_id":"${exported.id as string}","email":"${customerEmail(exported)!}","first_name":"Live","last_name":"Name","tags":"","state":"enabled","updated_at":"2026-11-20T00:00:00Z","email_marketing_consent":{"state":"subscribed","opt_in_level":"single_opt_in","consent_updated_at":"2026-11-20T00:00:00Z"}}`;
    await h.send({ topic: "customers/update", shop, body: live });
    h.startWorkers(1, FAST_POLICY);
    await h.settle();
    await requestBackfill(shop, { kinds: ["customers"] });
    await finished(shop);
    expect(h.emulator.person(customerEmail(exported)!)?.customFields.firstName).toBe("Live");
    const backfilled = await h.app.db.prisma.webhookDelivery.findFirst({ where: { shop, source: "backfill", rawBody: { contains: exported.id as string } } });
    expect(backfilled?.outcome).toBe("stale");
  });

  // A crash mid-import (SIGKILL of the real server, resumed by a new process): backfill-crash.test.ts.

  it("imports parents with their children (variants, line items) whole when chunks are read from byte offsets", async () => {
    const shop = newShop();
    await install(shop);
    const rangesBefore = store.ranges.length;
    await requestBackfill(shop, { kinds: ["products", "orders"], orderDays: null });
    h.startWorkers(1, { ...FAST_POLICY, backfillChunk: 4 });
    await finished(shop);
    expect(store.ranges.length).toBeGreaterThan(rangesBefore);
    const deliveries = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop, source: "backfill" } });
    expect(deliveries).toHaveLength(SIZE.products + SIZE.orders);
    const bodies = deliveries.map((d) => JSON.parse(d.rawBody) as { admin_graphql_api_id: string; variants?: unknown[]; line_items?: unknown[] });
    for (const p of store.objects.products) {
      const body = bodies.find((b) => b.admin_graphql_api_id === p.id);
      expect(body?.variants?.length, p.id as string).toBe(1 + (store.objects.products.indexOf(p) % 3));
    }
    for (const o of store.objects.orders) expect(bodies.find((b) => b.admin_graphql_api_id === o.id)?.line_items).toHaveLength(1);
  });

  // Since API 2026-01 Shopify groups an export's children under their parent only when asked
  // (groupObjects: true); the fake, like Shopify, writes every parent first otherwise. The test
  // above proves the app asks; this one, that a child out of place is never lost without a trace.
  it("a variant that does not follow its product in the export is recorded as a problem with its reason, not dropped", async () => {
    const shop = newShop();
    await install(shop);
    const product = store.objects.products[2]!; // three variants
    let moved = "";
    store.editNextExport("products", (lines) => {
      const at = lines.findIndex((l) => l.includes(`"__parentId":${JSON.stringify(product.id)}`));
      moved = JSON.parse(lines[at]!).id as string;
      return [...lines.slice(0, at), ...lines.slice(at + 1), lines[at]!];
    });
    await requestBackfill(shop, { kinds: ["products"] });
    h.startWorkers(1, FAST_POLICY);
    await finished(shop);

    expect((await backfillProgress(shop))?.status).toBe("done");
    const invalid = await h.app.db.sql.query<{ outcomeDetail: string }>(`SELECT "outcomeDetail" FROM "WebhookDelivery" WHERE shop = $1 AND outcome = 'invalid'`, [shop]);
    expect(invalid.map((r) => r.outcomeDetail)).toEqual([
      expect.stringMatching(new RegExp(`^history import: line \\d+ \\(${moved}\\) belongs to ${product.id}, which is not the object just before it`)),
    ]);
    const [counter] = await h.app.db.sql.query<{ unusable: number }>(`SELECT unusable FROM "SyncCounter" WHERE shop = $1 AND kind = 'product'`, [shop]);
    expect(counter?.unusable).toBe(1);
  });

  // Shopify takes minutes to export a large store: the next kind's export is started as soon as
  // one kind's is ready (one export at a time), so it is prepared while that kind is imported.
  it("starts the next kind's export while the current kind is still being imported", async () => {
    const shop = newShop();
    await install(shop);
    const before = store.operations.length;
    await requestBackfill(shop, { orderDays: null });
    h.startWorkers(1, FAST_POLICY);
    await finished(shop);
    expect(await backfillProgress(shop)).toMatchObject({ status: "done", kindsDone: 3, objects: SIZE.customers + SIZE.products + SIZE.orders });
    // One export per kind: none started twice.
    const ops = store.operations.slice(before);
    expect(ops.map((o) => o.kind)).toEqual(["customers", "products", "orders"]);
    // Each next export was started before the current kind's file was first read (the order of
    // calls as the fake store saw them, not a sample of the run's state, so load cannot flake it).
    const firstRead = (id: string) => store.downloads.find((d) => d.operationId === id)?.seq ?? Infinity;
    expect(ops[1]!.seq).toBeLessThan(firstRead(ops[0]!.id));
    expect(ops[2]!.seq).toBeLessThan(firstRead(ops[1]!.id));
  });

  it("the bulk_operations/finish webhook wakes a run instead of waiting for the next poll", async () => {
    const shop = newShop();
    await install(shop);
    await requestBackfill(shop, { kinds: ["customers"] });
    // Polls an hour apart: only the webhook can make this finish within the test.
    h.startWorkers(1, { ...FAST_POLICY, backfillPollMs: 3_600_000 });
    const already = store.operations.length;
    while (store.operations.length === already) await sleep(10);
    const op = store.operations[already]!;
    const finish = { admin_graphql_api_id: op.id, completed_at: new Date().toISOString(), error_code: null, status: "completed", type: "query" };
    // The fake reports RUNNING to the first read after each webhook's wake-up, COMPLETED to the next.
    for (const polls of [1, 2]) {
      expect((await h.send({ topic: "bulk_operations/finish", shop, body: finish })).status).toBe(200);
      while (op.polls < polls) await sleep(10);
    }
    await finished(shop, 30_000);
    expect(await backfillProgress(shop)).toMatchObject({ status: "done", objects: SIZE.customers });
    const woke = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop, topic: "bulk_operations/finish" } });
    expect(woke.map((d) => d.outcome)).toContain("handled");
  });
});
