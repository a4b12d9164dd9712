import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDelivery } from "~/pipeline/record.server";
import { startWorker } from "~/jobs/index.server";
import { startTestApp, type TestApp } from "../support/app";
import { customerBody } from "../support/pipeline";

const SHOP = "statistics.myshopify.com";

// PGlite has no autovacuum: the worker refreshes the queue tables' statistics itself. A claim
// planned without them sorts the whole backlog (twice the time of a busy-sized batch at 3,000
// queued, on every claim, each holding the thread that answers webhooks), so a burst of webhooks
// must not postpone the refresh for as long as it lasts.
describe("PGlite queue statistics during a burst of webhooks", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database: "pglite" });
    await app.db.sql.query(`INSERT INTO "Shop" (domain, "installedAt", "updatedAt") VALUES ($1, now(), now())`, [SHOP]);
  });
  afterAll(() => app.close());

  const estimatedDeliveries = async () => {
    const [row] = await app.db.sql.query<{ n: number }>(`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'WebhookDelivery'`);
    return row!.n;
  };

  it("are refreshed while webhooks keep arriving, once the queue has grown", async () => {
    const worker = startWorker({ id: "statistics-worker", policy: { pollMs: 20 } });
    try {
      let recorded = 0;
      // Webhooks arrive back to back (the worker stays in its "busy" mode throughout) until the
      // planner's estimate has caught up with the queue, or 20,000 have arrived (a count, not a
      // time: a busy machine records fewer per second, and the refresh must still come).
      while (recorded < 20_000 && (recorded < 100 || (await estimatedDeliveries()) < 1_000)) {
        for (let i = 0; i < 50; i++) {
          const result = await recordDelivery({
            shop: SHOP,
            topic: "customers/update",
            webhookId: randomUUID(),
            eventId: randomUUID(),
            triggeredAt: new Date().toISOString(),
            apiVersion: "2026-04",
            rawBody: JSON.stringify(customerBody({ id: String(7_000_000 + recorded) })),
          });
          expect(result).toBe("recorded");
          recorded++;
        }
        // Webhooks arrive from the network: the worker's timers run between them.
        await sleep(1);
      }
      expect(await estimatedDeliveries()).toBeGreaterThanOrEqual(1_000);
      expect(recorded).toBeGreaterThanOrEqual(1_000);
    } finally {
      await worker.stop();
    }
  });
});
