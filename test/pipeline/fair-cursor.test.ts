import { afterAll, beforeAll, expect, it } from "vitest";
import { forgetClaimer } from "~/pipeline/claim.server";
import { planDeliveries } from "~/pipeline/plan.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";

/**
 * A fair claim walks at most `fairShareShops` shops from the worker's cursor; the cursor must move
 * on, or the shops after the first `fairShareShops` (by name) wait until those run dry. Two shops
 * cannot show it: it takes more shops than one claim walks.
 */
describeEachDatabase("the fair claim's cursor", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it("planning serves every one of 70 shops within two claims of 64 (the cursor moves past the 64th)", async () => {
    const shops = 70;
    await app.db.sql.exec(
      `INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc")
         SELECT 'cursor-' || lpad(g::text, 3, '0') || '.myshopify.com', now(), 'sealed' FROM generate_series(0, ${shops - 1}) g`,
    );
    // Three waiting deliveries a shop: enough that the first shops never run dry in two claims.
    await app.db.sql.exec(
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
    const waiting = await app.db.sql.query<{ shop: string }>(
      `SELECT shop FROM "WebhookDelivery" WHERE shop LIKE 'cursor-%' GROUP BY shop HAVING bool_and(status = 'queued') ORDER BY shop`,
    );
    expect(waiting.map((r) => r.shop)).toEqual([]);
  });
});
