import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportCustomer, SHOP_TABLES } from "~/compliance/compliance.server";
import { database } from "~/db.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { orderBody } from "../sync/fixtures";
import { install, newShop } from "../backfill/helpers";

// The mandatory privacy topics end to end: signed webhook → app → worker → database and emulator.
describeEachDatabase("privacy requests", (kind) => {
  let h: PipelineHarness;

  beforeAll(async () => {
    h = await startPipelineHarness({ database: kind });
    h.startWorkers();
  }, 120_000);
  afterAll(() => h.close());

  /**
   * Each test's own state, so that tests pass in any order (`--sequence.shuffle`): a shop and its
   * neighbour, both connected, each with the same two customers and an order of the first.
   */
  async function seeded() {
    const shop = newShop("privacy");
    const other = newShop("neighbour");
    const n = shop.split("-")[1];
    const target = { id: "7001", email: `erase.me.${n}@example.com` };
    const kept = { id: "7002", email: `keep.me.${n}@example.com` };
    for (const s of [shop, other]) {
      await h.connect(s);
      for (const c of [target, kept]) await deliver(s, "customers/create", customerBody({ id: c.id, email: c.email }));
      await deliver(s, "orders/create", orderBody({
        id: 8001,
        admin_graphql_api_id: "gid://shopify/Order/8001",
        email: target.email,
        customer: { id: Number(target.id), admin_graphql_api_id: `gid://shopify/Customer/${target.id}`, email: target.email },
        checkout_token: "chk-erase",
      }));
    }
    return { shop, other, target, kept };
  }

  /** A connected shop of its own with nothing in it yet. */
  async function emptyShop(prefix: string): Promise<string> {
    const s = newShop(prefix);
    await h.connect(s);
    return s;
  }

  const deliver = (s: string, topic: string, body: object | string) => h.deliver({ topic, shop: s, body });

  /** Rows of every table the app has, for one shop. */
  async function rowCounts(s: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const [table, column] of SHOP_TABLES) {
      const [row] = await database().sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" = $1`, [s]);
      counts[table] = row.n;
    }
    return counts;
  }

  /** Rows that mention the customer; the service deletion call itself (email only) is not counted. */
  const mentionsTarget = async (s: string, target: { id: string; email: string }) => {
    const found = await exportCustomer(database().sql, s, { id: target.id, email: target.email, orderIds: ["8001"] });
    const deletion = found.outboundCalls.filter((c) => (c.call as { op: string }).op === "person.delete").length;
    return found.rowCount - deletion;
  };

  /**
   * Every row of every table in the database whose text holds `needle` (an email), found without
   * the app's own matcher or table list: a table the redaction forgets is found here. The service
   * deletion call (it must name the person) is left out.
   */
  async function rowsHolding(needle: string): Promise<string[]> {
    const tables = await database().sql.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
    );
    const found: string[] = [];
    for (const { name } of tables) {
      const rows = await database().sql.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t WHERE strpos(lower(t::text), lower($1)) > 0`, [needle]);
      for (const { row } of rows) if (!(name === "OutboundCall" && row.includes("person.delete"))) found.push(`${name}: ${row.slice(0, 200)}`);
    }
    return found;
  }

  const lastDelivery = (s: string, topic: string) =>
    h.app.db.prisma.webhookDelivery.findFirst({ where: { shop: s, topic }, orderBy: { receivedAt: "desc" } });

  const request = (s: string, c: { id: string; email: string }, extra: object = {}) => ({
    shop_id: 1,
    shop_domain: s,
    customer: { id: Number(c.id), email: c.email, phone: null },
    ...extra,
  });

  describe("customers/data_request", () => {
    it("assembles everything stored about the customer, and stores no copy", async () => {
      const { shop, target, kept } = await seeded();
      const before = await rowCounts(shop);
      await deliver(shop, "customers/data_request", request(shop, target, { orders_requested: [8001], data_request: { id: 1 } }));
      const row = await lastDelivery(shop, "customers/data_request");
      expect(row).toMatchObject({ status: "done", outcome: "handled" });
      expect(row?.outcomeDetail).toMatch(/^data request: \d+ rows stored about customer 7001; download the export from the Privacy page$/);

      const found = await exportCustomer(database().sql, shop, { id: target.id, email: target.email, orderIds: ["8001"] });
      expect(found.objectStates.map((o) => o.objectKey)).toEqual(expect.arrayContaining(["customer:7001", "order:8001"]));
      expect(found.outboundCalls.length).toBeGreaterThan(0);
      expect(found.webhookDeliveries.map((d) => d.topic)).toEqual(expect.arrayContaining(["customers/create", "orders/create"]));
      expect(JSON.stringify(found)).not.toContain(kept.email); // nobody else's data
      // Only the request itself was added.
      expect(await rowCounts(shop)).toEqual({
        ...before,
        WebhookDelivery: before.WebhookDelivery + 1,
        SyncCounter: expect.any(Number),
        SyncCounterHourly: expect.any(Number),
      });
    }, 120_000);
  });

  describe("customers/redact", () => {
    it("deletes the customer's rows in every table, deletes the person in the service, and leaves neighbours alone", async () => {
      const { shop, other, target, kept } = await seeded();
      expect(h.emulator.person(target.email)).toBeDefined();
      // The neighbour's rows name the customer too: only this shop's must go.
      expect((await rowsHolding(target.email)).filter((r) => r.includes(shop))).not.toEqual([]);
      const before = await rowCounts(shop);
      const otherBefore = await rowCounts(other);
      expect(await mentionsTarget(shop, target)).toBeGreaterThan(0);

      await deliver(shop, "customers/redact", request(shop, target, { orders_to_redact: [8001] }));
      const row = await lastDelivery(shop, "customers/redact");
      expect(row).toMatchObject({ outcome: "handled", rawBody: '{"redacted":true}' });
      expect(row?.outcomeDetail).toMatch(/customer redacted: .*deletion in the service queued/);

      const after = await rowCounts(shop);
      console.warn("customers/redact row counts", { before, after });
      expect(await mentionsTarget(shop, target)).toBe(0);
      // Whatever the app's matcher says: no row of this shop, in any table, holds the email (raw webhook bodies included).
      expect((await rowsHolding(target.email)).filter((r) => !r.includes(other))).toEqual([]);
      expect(after.ObjectState).toBeLessThan(before.ObjectState);
      expect(after.CompletedCheckout).toBe(before.CompletedCheckout - 1); // the redacted order's checkout marker
      expect(after.Shop).toBe(1);
      expect(h.emulator.person(target.email)).toBeUndefined(); // DELETE /api/people/{email} reached the service
      expect(h.emulator.requests.some((r) => r.method === "DELETE" && decodeURIComponent(r.path) === `/api/people/${target.email}`)).toBe(true);
      expect(h.emulator.person(kept.email)).toBeDefined();
      expect(await rowCounts(other)).toEqual(otherBefore); // the other shop's copy of the same customer stays
      expect(await mentionsTarget(other, target)).toBeGreaterThan(0);
    }, 120_000);

    it("is idempotent: a repeat finds nothing more and fails nothing", async () => {
      const { shop, target } = await seeded();
      await deliver(shop, "customers/redact", request(shop, target, { orders_to_redact: [8001] }));
      const before = await rowCounts(shop);
      await deliver(shop, "customers/redact", request(shop, target, { orders_to_redact: [8001] }));
      expect(await lastDelivery(shop, "customers/redact")).toMatchObject({ outcome: "handled" });
      expect(await rowCounts(shop)).toEqual({ ...before, WebhookDelivery: before.WebhookDelivery + 1, SyncCounterHourly: expect.any(Number) });
      const dead = await h.app.db.prisma.outboundCall.findMany({ where: { shop, status: "dead" } });
      expect(dead.map((d) => d.lastError)).toEqual([]);
    }, 120_000);

    it("keeps the service contact when the merchant chose so on the Privacy page", async () => {
      const { other, kept } = await seeded();
      await h.app.db.prisma.shop.update({ where: { domain: other }, data: { settings: { eraseContactOnRedact: false } } });
      await deliver(other, "customers/redact", request(other, kept));
      expect(await lastDelivery(other, "customers/redact")).toMatchObject({ outcome: "handled" });
      expect((await lastDelivery(other, "customers/redact"))?.outcomeDetail).toMatch(/service contact kept/);
      expect(h.emulator.person(kept.email)).toBeDefined();
    }, 120_000);
  });

  describe("whose rows a request concerns", () => {
    const ann = { id: "1001", email: "ann@example.com" };
    const joann = { id: "2002", email: "joann@example.com" };
    const longerId = { id: "10015", email: "ten.zero.one.five@example.com" };
    const keysOf = async (s: string) =>
      (await h.app.db.prisma.objectState.findMany({ where: { shop: s }, select: { objectKey: true } })).map((o) => o.objectKey);

    it("matches an email and an id as whole values: ann@ is not joann@, customer 1001 is not 10015", async () => {
      const overlap = await emptyShop("overlap");
      for (const c of [ann, joann, longerId]) await deliver(overlap, "customers/create", customerBody({ id: c.id, email: c.email }));
      const found = await exportCustomer(database().sql, overlap, ann);
      expect(found.objectStates.map((o) => o.objectKey)).toEqual(["customer:1001"]);
      expect(JSON.stringify(found)).not.toContain(joann.email);
      expect(JSON.stringify(found)).not.toContain("Customer/10015");

      await deliver(overlap, "customers/redact", request(overlap, ann, { orders_to_redact: [] }));
      expect(await keysOf(overlap)).toEqual(expect.arrayContaining(["customer:2002", "customer:10015"]));
      expect(await keysOf(overlap)).not.toContain("customer:1001");
      const bodies = await h.app.db.prisma.webhookDelivery.findMany({ where: { shop: overlap, topic: "customers/create" }, select: { rawBody: true } });
      expect(bodies.map((b) => b.rawBody).join()).toContain(joann.email);
      expect(bodies.map((b) => b.rawBody).join()).toContain("Customer/10015");
      expect(h.emulator.person(joann.email)).toBeDefined();
    }, 120_000);

    it("a redaction waits for the customer's earlier webhooks, so none of their rows is left behind", async () => {
      const overlap = await emptyShop("overlap");
      const late = { id: "5151", email: "erase.5151@example.com" };
      await h.stopWorkers();
      // Both wait in the queue, as after a restart or during a backlog: one worker then takes them together.
      expect((await h.send({ topic: "customers/create", shop: overlap, body: customerBody(late) })).status).toBe(200);
      expect((await h.send({ topic: "customers/redact", shop: overlap, body: request(overlap, late, { orders_to_redact: [] }) })).status).toBe(200);
      h.startWorkers();
      await h.settle();
      expect(await lastDelivery(overlap, "customers/redact")).toMatchObject({ outcome: "handled" });
      expect(await keysOf(overlap)).not.toContain("customer:5151");
      const found = await exportCustomer(database().sql, overlap, late);
      // A call being sent as the redaction ran is left to finish (retention removes its row within 14
      // days); nothing else about the customer stays.
      const left = found.outboundCalls.filter((c) => c.status !== "delivered" && (c.call as { op: string }).op !== "person.delete");
      expect({ ...found, outboundCalls: left, rowCount: undefined, generatedAt: undefined }).toMatchObject({
        objectStates: [],
        outboundCalls: [],
        abandonmentTimers: [],
        completedCheckouts: [],
        webhookDeliveries: [],
      });
    }, 120_000);

    it("the Privacy page's export names a customer beyond 2^53 exactly, not its neighbour", async () => {
      const { mintSessionToken, CHROME_UA } = await import("../support/session-token");
      const overlap = await emptyShop("overlap");
      const big = "9007199254740993";
      const neighbour = "9007199254740992"; // what the id becomes as a JavaScript number
      await deliver(overlap, "customers/create", customerBody({ id: big, email: "big.id@example.com" }));
      await deliver(overlap, "customers/create", customerBody({ id: neighbour, email: "neighbour.id@example.com" }));
      // Shopify writes the id as a bare number: the body is sent as written.
      await deliver(overlap, "customers/data_request", `{"shop_id":1,"shop_domain":"${overlap}","customer":{"id":${big},"email":null},"orders_requested":[],"data_request":{"id":3}}`);
      const row = await lastDelivery(overlap, "customers/data_request");
      const res = await fetch(`${h.app.url}/app/privacy-export?shop=${overlap}&id=${row!.id}`, {
        headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await mintSessionToken({ shop: overlap })}` },
      });
      expect(res.status).toBe(200);
      const data = (await res.json()) as { customer: { id: string; email: string }; objectStates: { objectKey: string }[] };
      expect(data.customer).toMatchObject({ id: big, email: "big.id@example.com" });
      expect(data.objectStates.map((o) => o.objectKey)).toEqual([`customer:${big}`]);
    }, 120_000);

    it("shop/redact for a shop that is installed deletes nothing", async () => {
      const { shop: overlap } = await seeded();
      const before = await rowCounts(overlap);
      await deliver(overlap, "shop/redact", { shop_id: 1, shop_domain: overlap });
      expect(await lastDelivery(overlap, "shop/redact")).toMatchObject({ outcome: "ignored", outcomeDetail: "shop/redact: the shop is installed; nothing was deleted" });
      const after = await rowCounts(overlap);
      expect(after).toEqual({ ...before, WebhookDelivery: before.WebhookDelivery + 1, SyncCounter: expect.any(Number), SyncCounterHourly: expect.any(Number) });
      expect((await h.app.db.prisma.shop.findUnique({ where: { domain: overlap } }))?.serviceKeyEnc).toBeTruthy();
    }, 120_000);
  });

  describe("app/uninstalled, app/scopes_update and shop/redact", () => {
    it("app/scopes_update records the scopes Shopify reports for the shop's token", async () => {
      const shop = newShop("scopes");
      await install(h, shop); // the offline token the app asks Shopify with
      h.app.admin.grantScopes(shop, ["read_orders", "read_customers"]);
      await deliver(shop, "app/scopes_update", { id: 1, shop_id: "gid://shopify/Shop/1", previous: ["read_orders"], current: ["read_orders", "read_customers"], updated_at: "2026-01-01T00:00:00Z" });
      expect((await h.app.db.prisma.shop.findUnique({ where: { domain: shop } }))?.scopes).toBe("read_orders,read_customers");
    }, 120_000);

    it("app/uninstalled stops delivery and drops sessions, keeping the data", async () => {
      const { shop } = await seeded();
      await install(h, shop); // a session to drop
      expect((await rowCounts(shop)).Session).toBeGreaterThan(0);
      h.app.admin.uninstall(shop); // Shopify revokes the shop's token: the uninstall is confirmed
      const before = await rowCounts(shop);
      await deliver(shop, "app/uninstalled", { id: 1, myshopify_domain: shop, domain: "privacy.example.com" });
      const after = await rowCounts(shop);
      expect(after.Session).toBe(0);
      expect(after.ObjectState).toBe(before.ObjectState);
      expect((await h.app.db.prisma.shop.findUnique({ where: { domain: shop } }))?.uninstalledAt).not.toBeNull();
      // A sync delivery for an uninstalled shop is refused and not stored.
      const res = await h.send({ topic: "customers/create", shop, body: customerBody({ id: "7003" }) });
      expect(res.status).toBe(404);
    }, 120_000);

    it("app/uninstalled after the stored token's hour is up: Shopify refuses the refresh, and the uninstall is confirmed", async () => {
      const { shop } = await seeded();
      await install(h, shop);
      // The app last used the shop's token over an hour ago: it must refresh before it can ask.
      await h.app.db.sql.query(`UPDATE "Session" SET expires = now() - interval '1 minute' WHERE shop = $1 AND "isOnline" = false`, [shop]);
      h.app.admin.uninstall(shop); // the refresh token is revoked with the rest
      await deliver(shop, "app/uninstalled", { id: 1, myshopify_domain: shop, domain: "privacy.example.com" });
      expect((await h.app.db.prisma.shop.findUnique({ where: { domain: shop } }))?.uninstalledAt).not.toBeNull();
      expect((await rowCounts(shop)).Session).toBe(0);
    }, 120_000);

    it("shop/redact purges every row of the shop, its key included; the neighbour keeps all of its rows", async () => {
      const { shop, other, target } = await seeded();
      await install(h, shop);
      h.app.admin.uninstall(shop);
      await deliver(shop, "app/uninstalled", { id: 1, myshopify_domain: shop, domain: "privacy.example.com" }); // Shopify sends shop/redact 48 h after it
      const before = await rowCounts(shop);
      const otherBefore = await rowCounts(other);
      await deliver(shop, "shop/redact", { shop_id: 1, shop_domain: shop });
      const after = await rowCounts(shop);
      console.warn("shop/redact row counts", { before, after });
      expect(Object.values(after).every((n) => n === 0)).toBe(true);
      expect(await rowCounts(other)).toEqual(otherBefore);
      // Shopify's retry of the same request: nothing is stored about the shop any more, so it is
      // answered 200 (done) without recording anything.
      expect((await h.send({ topic: "shop/redact", shop, body: { shop_id: 1, shop_domain: shop } })).status).toBe(200);
      expect(Object.values(await rowCounts(shop)).every((n) => n === 0)).toBe(true);
      expect((await rowsHolding(target.email)).filter((r) => !r.includes(other))).toEqual([]);
    }, 120_000);
  });

  describe("the Privacy page's export", () => {
    it("downloads a data request's export for the signed-in shop only", async () => {
      const { mintSessionToken, CHROME_UA } = await import("../support/session-token");
      const { other, target } = await seeded();
      const exporter = newShop("exporter");
      await h.app.db.prisma.shop.create({ data: { domain: exporter } });
      await deliver(other, "customers/data_request", request(other, target, { orders_requested: [8001] }));
      const row = await lastDelivery(other, "customers/data_request");
      const get = async (s: string) =>
        fetch(`${h.app.url}/app/privacy-export?shop=${s}&id=${row!.id}`, {
          headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await mintSessionToken({ shop: s })}` },
        });
      const res = await get(other);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-disposition")).toContain("attachment");
      const data = (await res.json()) as { customer: { id: string }; objectStates: { objectKey: string }[] };
      expect(data.customer.id).toBe(target.id);
      expect(data.objectStates.map((o) => o.objectKey)).toContain("customer:7001");
      // Another shop's admin cannot fetch it by id.
      expect((await get(exporter)).status).toBe(404);
      // The page lists the request.
      const host = Buffer.from(`admin.shopify.com/store/${other.split(".")[0]}`).toString("base64url");
      const page = await fetch(`${h.app.url}/app/privacy?embedded=1&shop=${other}&host=${host}&id_token=${await mintSessionToken({ shop: other })}`, {
        headers: { "user-agent": CHROME_UA },
      });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("Privacy requests");
      expect(html).toContain(row!.id);
    }, 120_000);
  });
});
