import { afterAll, beforeAll, expect, it } from "vitest";
import { redactCustomer } from "~/compliance/compliance.server";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";

/**
 * customers/redact leaves hashes of what named the customer (ErasedReference), so that nothing
 * recorded later brings them back: a history import's body (the insert trigger) or a signup the
 * service still lists (app/signups). Both look addresses up lower-cased: the hash must be of the
 * lower-cased address, whatever case Shopify's request wrote it in.
 */
describeEachDatabase("the references an erasure leaves", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  it("an address written with capitals is erased as the lower-cased address every later check looks up", async () => {
    const shop = "erased-refs.myshopify.com";
    await app.db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt") VALUES ($1, now())`, [shop]);
    await app.db.sql.transaction((tx) => redactCustomer(tx, shop, { id: "4242", email: "Ann.Erased@Example.COM", orderIds: ["77"] }, "no-such-request"));
    const has = async (ref: string) =>
      (await app.db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "ErasedReference" WHERE shop = $1 AND ref = erased_reference_hash($1, $2)`, [shop, ref]))[0]!.n;
    expect(await has("email:ann.erased@example.com")).toBe(1);
    expect(await has("customer:4242")).toBe(1);
    expect(await has("order:77")).toBe(1);
    // A history import's body naming the address in any case is skipped by the insert trigger.
    await app.db.sql.query(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source)
       VALUES ('erased-import-1', $1, 'customers/create', 'ew1', 'ee1', $2, 'backfill')`,
      [shop, JSON.stringify({ id: 9999, email: "ANN.ERASED@example.com" })],
    );
    expect((await app.db.sql.query(`SELECT 1 FROM "WebhookDelivery" WHERE id = 'erased-import-1'`)).length).toBe(0);
  });
});
