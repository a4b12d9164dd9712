import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { backfillProgress } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { actionData, loadData, openPage, postForm, routeData } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { newShop, numeric, until } from "./helpers";

// Customer 5 of the fake store has no email (i % 17 === 5): nobody the service knows, until it gets one.
const SIZE = { customers: 10, products: 2, orders: 3 };
const NO_EMAIL = 5;

interface ConnectResult {
  ok: boolean;
  errors?: Record<string, string>;
  notice?: { title: string; body: string };
}

describeEachDatabase("connecting again: reconnection, another account, a new key", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, SIZE);
    h.startWorkers(1, FAST_POLICY);
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.settle();
    // A test that failed leaves its run queued: it must not start exports in the next test.
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`);
  });

  /** Opens the app (the token exchange gives the offline token the export needs); not connected yet. */
  async function install(shop: string): Promise<void> {
    expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
  }

  /** The Connection page's "Connect" / "Save key", as the merchant submits it. */
  async function connect(shop: string, apiKey: string): Promise<ConnectResult> {
    const result = await actionData<ConnectResult>(await postForm(h.app.url, shop, "/app/connection", { intent: "connect", apiKey }));
    expect(result).toMatchObject({ ok: true });
    return result;
  }

  async function disconnect(shop: string): Promise<void> {
    expect(await actionData(await postForm(h.app.url, shop, "/app/connection", { intent: "disconnect" }))).toMatchObject({ ok: true });
  }

  /** Waits for the shop's latest history import to finish and its objects to be delivered. */
  async function imported(shop: string): Promise<void> {
    const run = await until("the history import", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    expect(run).toMatchObject({ status: BACKFILL_STATUS.done });
    await h.settle();
  }

  const runs = (shop: string) => h.app.db.prisma.backfillRun.count({ where: { shop } });
  const people = (accountId: number) =>
    Object.fromEntries(
      h.emulator.state.people
        .filter((p) => p.accountId === accountId)
        .map((p) => [p.email, { status: p.statusDetails, tags: [...p.tags].sort() }]),
    );

  it("disconnect, a customer created meanwhile, reconnect with the same key: the customer reaches the service", async () => {
    const shop = newShop("reconnect");
    const account = h.emulator.createAccount({ doubleOptIn: false, company: "Same Account" });
    await install(shop);
    expect((await connect(shop, account.apiKey)).notice?.title).toMatch(/^Connected to Same Account: importing/);
    await imported(shop);

    await disconnect(shop);
    // Only the account id is kept, and the page reads it as not connected.
    const page = await routeData<{ state: string; account: unknown }>(await loadData(h.app.url, shop, "/app/connection"), "routes/app.connection");
    expect(page).toMatchObject({ state: "not_connected", account: null });
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } })).serviceAccount).toEqual({ id: String(account.accountId) });
    // Meanwhile a customer signs up: Shopify has them and sends customers/create, which is ignored.
    const away = store.touch("customers", NO_EMAIL, {
      defaultEmailAddress: { emailAddress: "while.away@example.com", marketingState: "SUBSCRIBED", marketingOptInLevel: "SINGLE_OPT_IN", marketingUpdatedAt: new Date().toISOString() },
    });
    const res = await h.send({ topic: "customers/create", shop, body: customerBody({ id: numeric(away.id), email: "while.away@example.com", consent: "subscribed" }) });
    expect(res.status).toBe(200);
    await h.settle();
    expect(h.emulator.person("while.away@example.com", account.accountId)).toBeUndefined();

    const again = await connect(shop, account.apiKey);
    await imported(shop);
    expect(h.emulator.person("while.away@example.com", account.accountId)).toMatchObject({ statusDetails: "confirmed" });
    expect(again.notice?.title).toMatch(/^Reconnected to Same Account: catching up/);
    // Connected again: the whole account summary is back.
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } })).serviceAccount).toMatchObject({ id: String(account.accountId), company: "Same Account" });
  });

  it("another account's key: the new account receives every contact with its consent; the previous one is left alone", async () => {
    const shop = newShop("switch");
    const a = h.emulator.createAccount({ doubleOptIn: false, company: "Account A" });
    const b = h.emulator.createAccount({ doubleOptIn: false, company: "Account B" });
    await install(shop);
    await connect(shop, a.apiKey);
    await imported(shop);
    const inA = people(a.accountId);
    // Customers without consent to email marketing are not contacts; the others are.
    expect(Object.keys(inA).length).toBeGreaterThan(3);

    const before = h.emulator.requests.length;
    const switched = await connect(shop, b.apiKey);
    await imported(shop);

    // Every contact, with the same consent and tags as the first account got.
    expect(people(b.accountId)).toEqual(inA);
    // Nothing more for A, and history is no news: no automation in B.
    expect(h.emulator.requests.slice(before).filter((r) => r.accountId === a.accountId)).toEqual([]);
    expect(people(a.accountId)).toEqual(inA);
    expect(h.emulator.automations.filter((r) => r.accountId === b.accountId)).toEqual([]);
    expect(switched.notice?.title).toMatch(/^Switched to Account B/);
    expect(switched.notice?.body).toMatch(/Account A keeps what it already received/);
  });

  it("a new key of the same account only replaces the key: no second import, syncing goes on", async () => {
    const shop = newShop("newkey");
    const account = h.emulator.createAccount({ doubleOptIn: false, company: "Key Owner" });
    await install(shop);
    await connect(shop, account.apiKey);
    await imported(shop);
    expect(await runs(shop)).toBe(1);

    const second = h.emulator.createApiKey(account.accountId);
    const result = await connect(shop, second);
    expect(await runs(shop)).toBe(1);
    expect((await backfillProgress(shop))?.status).toBe(BACKFILL_STATUS.done);

    await h.send({ topic: "customers/create", shop, body: customerBody({ email: "after.new.key@example.com", consent: "subscribed" }) });
    await h.settle();
    expect(h.emulator.person("after.new.key@example.com", account.accountId)).toBeDefined();
    expect(result.notice?.title).toBe("API key of Key Owner replaced");
  });
});
