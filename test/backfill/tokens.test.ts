import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { backfillProgress, requestBackfill } from "~/backfill/backfill.server";
import { BACKFILL_STATUS } from "~/pipeline/status";
import { PrismaSessionStorage } from "~/shopify/session-storage.server";
import { decryptSecret } from "~/secrets.server";
import { Session } from "@shopify/shopify-api";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, until } from "./helpers";
import { openPage } from "../admin/support";

const SIZE = { customers: 12, products: 5, orders: 9 };

/**
 * Expiring offline tokens (Shopify: an hour, with a 90-day refresh token): the app asks for them
 * at install, stores the pair sealed, and background work refreshes the token before it expires,
 * or when Shopify refuses it anyway, without the merchant.
 */
describeEachDatabase("expiring offline tokens", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    // Each export takes a while by the clock: the import is still under way when the token expires.
    store = await startFakeStore(h.app.admin, SIZE, { exportMs: 1_500 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(async () => {
    await h.reset();
    await h.app.db.sql.query(`UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lockedBy" = NULL WHERE status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')`);
  });

  const admin = () => h.app.admin;
  const refreshes = (shop: string) => admin().calls.filter((c) => c.shop === shop && (c.body as { grant_type?: string }).grant_type === "refresh_token").length;
  const session = (shop: string) => h.app.db.prisma.session.findUnique({ where: { id: `offline_${shop}` } });

  it("installs with an expiring token and a refresh token, both stored sealed", async () => {
    const shop = newShop("tokens");
    await install(h, shop);
    const row = await session(shop);
    expect(row?.expires).toBeInstanceOf(Date);
    expect(row!.expires!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(row?.refreshTokenExpires).toBeInstanceOf(Date);
    expect(row?.accessToken).toMatch(/^v2:/);
    expect(row?.refreshToken).toMatch(/^v2:/);
    // The stored token is an expiring one Shopify issued to this shop, valid now. (Not necessarily
    // the last one issued: on a busy machine a token exchange that timed out on the app's side may
    // still be answered by Shopify after the retry's; both tokens work.)
    const stored = decryptSecret(row!.accessToken, shop, "shopify-token");
    expect(stored).toMatch(/^shpat_fake_offline_/);
    expect(admin().expiresAt.get(stored)).toBeGreaterThan(Date.now());
  });

  it("a token that expires in the middle of a history import is refreshed and the import goes on", async () => {
    const shop = newShop("tokens");
    await install(h, shop);
    // The token the app stored: on a busy machine Shopify may have issued a second one to a token
    // exchange the app had given up on (see above), and the last one issued is then not the app's.
    const first = decryptSecret((await session(shop))!.accessToken, shop, "shopify-token");
    await requestBackfill(shop, { orderDays: null });
    h.startWorkers(1, FAST_POLICY);
    // The customers' export is running at Shopify: the hour is up.
    await until("the first export", async () => store.operations.some((o) => o.shop === shop));
    admin().expireTokens(shop);
    const refused = admin().calls.length;
    await until("the import to end", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    await h.settle();

    expect(await backfillProgress(shop)).toMatchObject({ status: BACKFILL_STATUS.done, lastError: null, objects: SIZE.customers + SIZE.products + SIZE.orders });
    // The old token was refused after it expired, and a refreshed one did the rest.
    expect(admin().calls.slice(refused).some((c) => c.shop === shop && c.accessToken === first)).toBe(true);
    expect(refreshes(shop)).toBeGreaterThanOrEqual(1);
    const latest = admin().tokens.get(shop)!;
    expect(latest).not.toBe(first);
    const row = await session(shop);
    expect(decryptSecret(row!.accessToken, shop, "shopify-token")).toBe(latest);
    expect(row?.refreshToken).toMatch(/^v2:/);
  });

  it("refreshes a token about to expire before using it (no refused call)", async () => {
    const shop = newShop("tokens");
    await install(h, shop);
    const first = decryptSecret((await session(shop))!.accessToken, shop, "shopify-token"); // the app's own token
    // Two minutes left by our clock: within the refresh margin.
    await h.app.db.prisma.session.update({ where: { id: `offline_${shop}` }, data: { expires: new Date(Date.now() + 2 * 60_000) } });
    const before = admin().calls.length;
    await requestBackfill(shop, { orderDays: null, kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    await until("the import to end", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    expect(await backfillProgress(shop)).toMatchObject({ status: BACKFILL_STATUS.done });
    expect(refreshes(shop)).toBe(1);
    // The token it replaced was never sent to the GraphQL API again.
    expect(admin().calls.slice(before).filter((c) => c.path.endsWith("/graphql.json") && c.accessToken === first)).toEqual([]);
  });

  it("a non-expiring token stored before the switch is exchanged for an expiring pair on first use", async () => {
    const shop = newShop("tokens");
    await install(h, shop);
    // As an install made before expiring tokens were turned on left it: a token without expiry.
    const legacy = `shpat_fake_offline_legacy_${Date.now()}`;
    admin().issued.add(legacy);
    await new PrismaSessionStorage().storeSession(new Session({ id: `offline_${shop}`, shop, state: "", isOnline: false, accessToken: legacy, scope: admin().shops.get(shop)!.scopes }));
    await requestBackfill(shop, { orderDays: null, kinds: ["customers"] });
    h.startWorkers(1, FAST_POLICY);
    await until("the import to end", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    expect(await backfillProgress(shop)).toMatchObject({ status: BACKFILL_STATUS.done });
    const row = await session(shop);
    expect(row?.expires).toBeInstanceOf(Date);
    expect(row?.refreshToken).toMatch(/^v2:/);
    expect(decryptSecret(row!.accessToken, shop, "shopify-token")).toBe(admin().tokens.get(shop));
    expect(admin().calls.filter((c) => c.path.endsWith("/graphql.json") && c.accessToken === legacy)).toEqual([]);
  });

  it("a refresh token past its expiry is not sent to Shopify: the import stops at once with the reason, the merchant must open the app again", async () => {
    const shop = newShop("tokens");
    await install(h, shop);
    // Both expired by our clock (Shopify's own record of the refresh token would still take it).
    await h.app.db.prisma.session.update({
      where: { id: `offline_${shop}` },
      data: { expires: new Date(Date.now() - 60_000), refreshTokenExpires: new Date(Date.now() - 60_000) },
    });
    await requestBackfill(shop, { orderDays: null, kinds: ["customers"] });
    // A retry would come ten minutes later: the import must stop at its first try.
    h.startWorkers(1, { ...FAST_POLICY, importStepRetryStepMs: 600_000 });
    const ended = await until("the import to end", async () => {
      const p = await backfillProgress(shop);
      return p && (p.status === BACKFILL_STATUS.done || p.status === BACKFILL_STATUS.failed) ? p : null;
    }, 60_000);
    expect(ended).toMatchObject({ status: BACKFILL_STATUS.failed, lastError: expect.stringMatching(/must open the app again/) });
    expect(refreshes(shop)).toBe(0);
    // The merchant reads why, and what to do, in words.
    const page = await (await openPage(h.app.url, shop, "/app/connection")).text();
    expect(page).toContain("The app&#x27;s access to your store had ended, so it could not read your customers.");
    expect(page).toContain("Opening the app from your Shopify admin renews its access");
  });
});
