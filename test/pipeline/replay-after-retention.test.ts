import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { replayDeadLetters } from "~/pipeline/dead-letters.server";
import { pruneOldRows } from "~/pipeline/retention.server";
import type { PipelinePolicy } from "~/pipeline/policy";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `replay-retention-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;
/** Every call fails for good within a fraction of a second while the service errors. */
const DYING_POLICY: Partial<PipelinePolicy> = { ...FAST_POLICY, maxAttempts: 100_000, backoffCapMs: 100, retryDeadlineMs: 300 };

// A dead letter stays on the Problems page past the retention period; the newer calls of its
// customer that were delivered meanwhile do not. Replaying it must still not go backwards.
describeEachDatabase("replaying a dead letter after retention pruned the newer call", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const calls = (shop: string) => h.app.db.prisma.outboundCall.findMany({ where: { shop }, orderBy: { id: "asc" } });
  const peopleRequests = (email: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as { email?: string }).email === email);
  const fifteenDaysPass = async (shop: string) => {
    await h.app.db.sql.query(`UPDATE "OutboundCall" SET "createdAt" = "createdAt" - interval '15 days' WHERE shop = $1`, [shop]);
    await h.app.db.sql.query(
      `UPDATE "WebhookDelivery" SET "receivedAt" = "receivedAt" - interval '15 days', "finishedAt" = "finishedAt" - interval '15 days' WHERE shop = $1`,
      [shop],
    );
    await pruneOldRows(14);
  };
  /** A subscribe that dies while the service is down. */
  const deadSubscribe = async (shop: string, id: string) => {
    h.emulator.setFaults({ errorRate: 1 });
    const body = customerBody({ id, firstName: "Old", tags: "vip", consent: "subscribed", updatedAt: "2026-03-01T10:00:00Z", consentUpdatedAt: "2026-03-01T10:00:00Z" });
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers(1, DYING_POLICY);
    await h.settle();
    expect((await calls(shop)).filter((c) => c.status === "dead").map((c) => (c.call as { op: string }).op)).toContain("person.upsert");
    h.emulator.clearFaults();
    return body.email as string;
  };

  it("an old subscribe is not sent over the newer unsubscribe, and what is kept of the newer call holds no personal data", async () => {
    const shop = newShop();
    await h.connect(shop);
    const email = await deadSubscribe(shop, "990001");
    await h.send({
      topic: "customers/update",
      shop,
      body: customerBody({ id: "990001", email, firstName: "New", tags: "", consent: "unsubscribed", updatedAt: "2026-03-02T10:00:00Z", consentUpdatedAt: "2026-03-02T10:00:00Z" }),
    });
    await h.settle();
    const contact = () => {
      const p = h.emulator.person(email);
      return { statusDetails: p?.statusDetails, tags: p?.tags, customFields: p?.customFields };
    };
    const newest = structuredClone(contact());
    expect(newest.statusDetails).toBe("unsubscribed");
    const sentBefore = peopleRequests(email).length;

    await fifteenDaysPass(shop);
    const left = await calls(shop);
    // Past the retention period nothing of the delivered call names the customer (SECURITY.md).
    const kept = JSON.stringify(left.filter((c) => c.status !== "dead").map((c) => [c.call, c.lastResponse, c.lastError, c.deliveryId]));
    expect(kept).not.toContain(email);
    expect(kept).not.toContain("New");
    expect(await h.app.db.prisma.webhookDelivery.count({ where: { shop, topic: "customers/update" } })).toBe(0);

    // Support clicks "replay all".
    const result = await replayDeadLetters(shop);
    await h.settle();
    expect(result.superseded).toBeGreaterThan(0);
    const upserts = (await calls(shop)).filter((c) => (c.call as { op: string }).op === "person.upsert" && c.status !== "delivered");
    expect(upserts.map((c) => c.status)).toEqual(["superseded"]);
    expect(peopleRequests(email)).toHaveLength(sentBefore);
    expect(contact()).toEqual(newest);

    // Once no dead letter waits behind it, the kept row goes too.
    await pruneOldRows(14, { now: new Date(Date.now() + 15 * 86_400_000) });
    expect(await calls(shop)).toEqual([]);
  });

  it("an old subscribe does not bring back a customer deleted since", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { deleteContactOnCustomerDelete: true } } });
    const email = await deadSubscribe(shop, "990002");
    // The customer is created again (it reaches the service), then deleted in Shopify.
    await h.send({ topic: "customers/update", shop, body: customerBody({ id: "990002", email, firstName: "Again", updatedAt: "2026-03-02T10:00:00Z" }) });
    await h.settle();
    await h.send({ topic: "customers/delete", shop, body: { id: 990002, admin_graphql_api_id: "gid://shopify/Customer/990002" } });
    await h.settle();
    expect(h.emulator.person(email)).toBeUndefined();

    await fifteenDaysPass(shop);
    const result = await replayDeadLetters(shop);
    await h.settle();
    expect(result.superseded).toBeGreaterThan(0);
    expect(h.emulator.person(email)).toBeUndefined();
  });
});
