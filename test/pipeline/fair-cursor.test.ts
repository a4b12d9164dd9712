import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { forgetClaimer } from "~/pipeline/claim.server";
import { planDeliveries } from "~/jobs/index.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

/**
 * A fair claim walks at most `fairShareShops` shops from the worker's cursor; the cursor must move
 * on, or the shops after the first `fairShareShops` (by name) wait until those run dry. Two shops
 * cannot show it: it takes more shops than one claim walks.
 */
describeEachDatabase("the fair claim's cursor", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  it("planning serves every one of 70 shops within two claims of 64 (the cursor moves past the 64th)", async () => {
    const shops = 70;
    await h.app.db.sql.exec(
      `INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc")
         SELECT 'cursor-' || lpad(g::text, 3, '0') || '.myshopify.com', now(), 'sealed' FROM generate_series(0, ${shops - 1}) g`,
    );
    // Three waiting deliveries a shop: enough that the first shops never run dry in two claims.
    await h.app.db.sql.exec(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", "receivedAt")
         SELECT 'cursor-' || g || '-' || k, 'cursor-' || lpad(g::text, 3, '0') || '.myshopify.com', 'customers/update',
                'cw-' || g || '-' || k, 'ce-' || g || '-' || k, '{}', now() - interval '1 minute' + k * interval '1 ms'
           FROM generate_series(0, ${shops - 1}) g, generate_series(0, 2) k`,
    );
    const policy = { ...PIPELINE_POLICY, planBatchSize: 64, fairShareShops: 64 };
    const worker = "cursor-test";
    try {
      for (let claim = 0; claim < 2; claim++) expect(await planDeliveries(worker, policy)).toBe(64);
    } finally {
      forgetClaimer(worker);
    }
    const waiting = await h.app.db.sql.query<{ shop: string }>(
      `SELECT shop FROM "WebhookDelivery" WHERE shop LIKE 'cursor-%' GROUP BY shop HAVING bool_and(status = 'queued') ORDER BY shop`,
    );
    expect(waiting.map((r) => r.shop)).toEqual([]);
  });

  it("sending reaches every shop early when more shops wait than a claim walks (4 shops, 2 a claim)", async () => {
    const run = Date.now().toString(36);
    const shops = ["a", "b", "c", "d"].map((n) => `send-cursor-${n}-${run}.myshopify.com`);
    for (const shop of shops) await h.connect(shop, h.emulator.createAccount({ doubleOptIn: false }).apiKey);
    // Held while everything is planned, so that sending starts with every shop's backlog queued.
    await h.app.db.sql.query(`UPDATE "Shop" SET "deliveryHoldUntil" = now() + interval '1 hour' WHERE domain = ANY($1::text[])`, [shops]);
    const perShop = 40;
    for (const [s, shop] of shops.entries()) {
      const rows = Array.from({ length: perShop }, (_, i) => ({
        eventId: `sc-${run}-${s}-${i}`,
        rawBody: JSON.stringify(customerBody({ id: String(700_000 + s * 1_000 + i), email: `sc${s}-${i}-${run}@example.com` })),
      }));
      await h.app.db.sql.query(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody")
           SELECT gen_random_uuid()::text, $1, 'customers/create', r."eventId", r."eventId", r."rawBody"
             FROM jsonb_to_recordset($2::jsonb) AS r("eventId" text, "rawBody" text)`,
        [shop, JSON.stringify(rows)],
      );
    }
    const policy = { ...FAST_POLICY, batchSize: 4, planBatchSize: 64, fairShareShops: 2 };
    h.startWorkers(1, policy);
    const unplanned = async () =>
      (await h.app.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE shop = ANY($1::text[]) AND status <> 'done'`, [shops]))[0]!.n;
    for (const deadline = Date.now() + 120_000; (await unplanned()) > 0; ) {
      if (Date.now() > deadline) throw new Error("not planned");
      await sleep(20);
    }
    await h.app.db.sql.query(`UPDATE "Shop" SET "deliveryHoldUntil" = NULL WHERE domain = ANY($1::text[])`, [shops]);
    const people = () => h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people");
    const shopOf = (email: string) => Number(/^sc(\d)-/.exec(email)?.[1] ?? -1);
    for (const deadline = Date.now() + 120_000; new Set(people().map((r) => shopOf((r.body as { email?: string }).email ?? ""))).size < 4; ) {
      if (Date.now() > deadline) break;
      await sleep(20);
    }
    const firsts = [0, 1, 2, 3].map((s) => people().findIndex((r) => shopOf((r.body as { email?: string }).email ?? "") === s));
    // Each shop has 80 calls (a person and an event per customer). Round-robin two shops a claim:
    // every shop is reached within the first claims. A cursor that stays put sends the first two
    // shops' 160 calls before the others' first.
    for (const [s, first] of firsts.entries()) {
      expect(first, shops[s]).toBeGreaterThanOrEqual(0);
      expect(first, shops[s]).toBeLessThan(40);
    }
  }, 240_000);
});
