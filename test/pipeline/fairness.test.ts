import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { RecordedRequest } from "../../dev/emulator/server";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let seq = 0;
const newShop = (name: string) => `fair-${name}-${++seq}-${Date.now().toString(36)}.myshopify.com`;

/**
 * Many shops share one queue (issue 33): a shop with a large backlog must not hold the others',
 * a shop's imported history must not hold its own live webhooks, and one account answering 429
 * must not hold other accounts. Asserted on the order in which the service received requests,
 * never on time.
 */
describeEachDatabase("fair shares between shops", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  /** A backlog already acknowledged (or imported) and waiting to be planned, as after a flash sale. */
  async function backlog(shop: string, count: number, source: "webhook" | "backfill", prefix: string): Promise<string[]> {
    const emails = Array.from({ length: count }, (_, i) => `${prefix}${i}@example.com`);
    const rows = emails.map((email, i) => ({
      n: i,
      eventId: `${prefix}-${i}`,
      rawBody: JSON.stringify(customerBody({ id: String(500_000 + seq * 10_000 + i), email })),
    }));
    await h.app.db.sql.query(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source, "receivedAt")
         SELECT gen_random_uuid()::text, $1, 'customers/create', r."eventId", r."eventId", r."rawBody", $3,
                now() - interval '1 minute' + r.n * interval '1 millisecond'
           FROM jsonb_to_recordset($2::jsonb) AS r(n int, "eventId" text, "rawBody" text)`,
      [shop, JSON.stringify(rows), source],
    );
    return emails;
  }

  const peopleRequests = (): RecordedRequest[] => h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people");
  const emailOf = (r: RecordedRequest) => (r.body as { email?: string }).email ?? "";
  /** Where the service first heard of `email` (an event or the person), among every request it got. */
  const firstRequestAbout = (email: string) => h.emulator.requests.findIndex((r) => JSON.stringify(r.body ?? null).includes(email));

  /** Waits (event loop free, generous deadline) until the service has answered `emails` with a 2xx. */
  async function untilReceived(emails: string[], timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const missing = () => {
      const got = new Set(peopleRequests().filter((r) => r.status !== null && r.status < 300).map(emailOf));
      return emails.filter((e) => !got.has(e));
    };
    while (missing().length) {
      if (Date.now() > deadline) throw new Error(`not received: ${missing().slice(0, 3).join(", ")} (${missing().length})`);
      await sleep(20);
    }
  }

  async function forget(...shops: string[]): Promise<void> {
    await h.stopWorkers();
    for (const table of ["OutboundCall", "WebhookDelivery"]) await h.app.db.sql.query(`DELETE FROM "${table}" WHERE shop = ANY($1::text[])`, [shops]);
  }

  it("a shop's change goes out while another shop's flash sale is still being sent, not after it", async () => {
    const flood = newShop("flood");
    const trickle = newShop("trickle");
    await h.connect(flood);
    await h.connect(trickle, h.emulator.createAccount({ doubleOptIn: false }).apiKey);
    const sale = await backlog(flood, 600, "webhook", `sale${seq}-`);
    const change = customerBody({ email: `trickle${seq}@example.com` });
    expect((await h.send({ topic: "customers/create", shop: trickle, body: change })).status).toBe(200);

    h.startWorkers(1, FAST_POLICY);
    await untilReceived([change.email as string]);
    // The sale is 1,200 calls (the person and an event per customer). First come, first served
    // sent the change after all of them; shared fairly, it is claimed in the first walk over the shops and most
    // of the sale reaches the service after it. (Not "the first 64": on a busy machine the
    // requests of one window reach the service in any order.)
    expect(firstRequestAbout(change.email as string)).toBeLessThan(600);
    await h.settle(120_000);
    const sent = new Set(peopleRequests().map(emailOf));
    expect(sale.filter((e) => !sent.has(e))).toEqual([]);
    await forget(flood, trickle);
  }, 240_000);

  it("a history import does not hold its own shop's live webhooks", async () => {
    const shop = newShop("import");
    await h.connect(shop);
    await backlog(shop, 600, "backfill", `history${seq}-`);
    const live = customerBody({ email: `live${seq}@example.com` });
    expect((await h.send({ topic: "customers/create", shop, body: live })).status).toBe(200);

    h.startWorkers(1, FAST_POLICY);
    await untilReceived([live.email as string]);
    // Planned and sent ahead of most of the 1,200 calls of the customers imported before it (first
    // come, first served: after all of them).
    expect(firstRequestAbout(live.email as string)).toBeLessThan(600);
    await forget(shop);
  }, 240_000);

  it("an account answering 429 holds only its own shop: the others are delivered, and the rate-limited shop is not asked again until its Retry-After", async () => {
    const limited = newShop("limited");
    const other = newShop("other");
    const limitedAccount = h.emulator.createAccount({ doubleOptIn: false });
    await h.connect(limited, limitedAccount.apiKey);
    await h.connect(other, h.emulator.createAccount({ doubleOptIn: false }).apiKey);
    const waiting = await backlog(limited, 300, "webhook", `limited${seq}-`);
    const others = await backlog(other, 40, "webhook", `other${seq}-`);
    h.emulator.setFaults({ burst429: { count: 1_000_000, retryAfterSeconds: 120 }, accountId: limitedAccount.accountId });

    // Retry-After is honoured up to the backoff cap (FAST_POLICY's is 50 ms).
    h.startWorkers(1, { ...FAST_POLICY, backoffCapMs: 15 * 60_000 });
    await untilReceived(others);
    const asked = peopleRequests().filter((r) => waiting.includes(emailOf(r)));
    expect(asked.every((r) => r.status === 429)).toBe(true);
    // The first 429 holds the shop for every worker: only the calls already at the service when it
    // came were asked (first come, first served: all 300, each answered 429).
    expect(asked.length).toBeLessThanOrEqual(64);
    const calls = await h.app.db.sql.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM "OutboundCall" WHERE shop = $1 GROUP BY status`,
      [limited],
    );
    expect(calls.filter((c) => c.status !== "queued" && c.status !== "running")).toEqual([]);
    const [shop] = await h.app.db.sql.query<{ held: boolean }>(`SELECT "deliveryHoldUntil" > now() AS held FROM "Shop" WHERE domain = $1`, [limited]);
    expect(shop?.held).toBe(true);
    await forget(limited, other);
  }, 240_000);
});
