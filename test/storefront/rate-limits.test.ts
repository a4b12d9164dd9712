import { afterAll, beforeAll, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { STOREFRONT_POLICY } from "~/storefront/storefront-policy";
import { SHOP_WIDE_KEY } from "~/storefront/rate-limit.server";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { postProxyEvent, productViewed, signedProxyQuery } from "./support";

// The storefront's rate limits as a sender meets them: a signed app-proxy POST per event, the
// sender's address in X-Forwarded-For as Shopify's proxy forwards it (Shopify's entry last).
describeEachDatabase("app proxy: rate limits a sender cannot choose around", (database) => {
  let h: PipelineHarness;
  const shops = { genuine: "limits-genuine", address: "limits-address", v6: "limits-v6", cap: "limits-cap", quiet: "limits-quiet" };
  const domain = (name: string) => `${name}.myshopify.com`;
  const { eventsPerClientPerWindow: perClient, eventsPerShopPerWindow: perShop, rateWindowMs } = STOREFRONT_POLICY;

  const post = (shop: string, visitorId: string, forwardedFor: string) =>
    postProxyEvent(h.app.url, signedProxyQuery({ shop: domain(shop) }), productViewed(visitorId), { "x-forwarded-for": forwardedFor });
  const calls = (shop: string) => h.app.db.prisma.outboundCall.count({ where: { shop: domain(shop) } });
  const rateLimited = async (shop: string) => (await h.app.db.prisma.storefrontState.findUnique({ where: { shop: domain(shop) } }))?.eventsRateLimited ?? 0;
  const viewedBy = (visitorId: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/events/product/viewed" && (r.body as { referenceId?: string }).referenceId === `visitor:${visitorId}`);

  /** Posts with a new visitor id each time until the first 429 (fixed windows: at most two windows' worth). */
  async function floodUntilLimited(shop: string, forwardedFor: (i: number) => string) {
    let accepted = 0;
    for (let i = 0; i <= 2 * perClient; i++) {
      const res = await post(shop, `fake-${i}`, forwardedFor(i));
      if (res.status === 429) {
        return { accepted, retryAfter: res.headers.get("retry-after"), error: ((await res.json()) as { error: string }).error };
      }
      expect(res.status).toBe(202);
      await res.arrayBuffer();
      accepted++;
    }
    return { accepted, retryAfter: null, error: null };
  }

  /** Delivers what is queued (no workers during floods: the queue is what they count). */
  async function deliver() {
    h.startWorkers();
    await h.settle();
    await h.stopWorkers();
  }

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    for (const name of Object.values(shops)) {
      await recordInstall(domain(name), "read_customers");
      await h.connect(domain(name));
      await h.app.db.prisma.shop.update({ where: { domain: domain(name) }, data: { settings: { storefrontEvents: true } } });
    }
  });
  afterAll(() => h.close());

  it("a genuine visitor under every limit gets 202 and its events reach the service", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post(shops.genuine, "genuine-visitor", "192.0.2.10");
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ queued: true, event: "product_viewed" });
    }
    await deliver();
    expect(viewedBy("genuine-visitor").map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("one address posting with a new visitor id each time (and a forged X-Forwarded-For in front) is held by the address limit", async () => {
    // The client's own X-Forwarded-For comes first; Shopify's entry, the real address, last.
    const flood = await floodUntilLimited(shops.address, (i) => `10.0.${i % 250}.1, 203.0.113.7`);
    expect(flood.error).toBe("Too many storefront events from this address");
    expect(flood.accepted).toBeGreaterThanOrEqual(perClient);
    expect(Number(flood.retryAfter)).toBeGreaterThan(0);
    const more = [];
    for (let i = 0; i < 10; i++) more.push((await post(shops.address, `more-fake-${i}`, `10.9.${i}.1, 203.0.113.7`)).status);
    const limited = 1 + more.filter((s) => s === 429).length;
    const accepted = flood.accepted + more.filter((s) => s === 202).length;
    // Only what was let through was queued or left a visitor row (fewer if a window ended and was
    // dropped meanwhile); every refusal was counted.
    expect(await calls(shops.address)).toBe(accepted);
    expect(await rateLimited(shops.address)).toBe(limited);
    const visitorRows = await h.app.db.prisma.storefrontRateWindow.count({ where: { shop: domain(shops.address), visitor: { startsWith: "visitor:" } } });
    expect(visitorRows).toBeLessThanOrEqual(accepted);
    // Another address of the same shop is not held back, and its event is delivered.
    expect((await post(shops.address, "genuine-next-door", "192.0.2.20")).status).toBe(202);
    await deliver();
    expect(viewedBy("genuine-next-door")).toHaveLength(1);
  });

  it("IPv6: every address of one /64 is one sender", async () => {
    const flood = await floodUntilLimited(shops.v6, (i) => (i % 2 ? `2001:db8:5:6::${i.toString(16)}` : `2001:0DB8:0005:0006:${i.toString(16)}:0:0:1`));
    expect(flood.error).toBe("Too many storefront events from this address");
    expect((await post(shops.v6, "other-network", "2001:db8:5:7::1")).status).toBe(202);
  });

  it("many addresses of one shop are held by the shop cap; other shops are not", async () => {
    // The shop has already had all but 2 of its events this window (and the next, should the
    // minute turn during the test).
    const now = Date.now();
    const windowStart = now - (now % rateWindowMs);
    await h.app.db.prisma.storefrontRateWindow.createMany({
      data: [windowStart, windowStart + rateWindowMs].map((start) => ({ shop: domain(shops.cap), visitor: SHOP_WIDE_KEY, windowStart: new Date(start), hits: perShop - 2 })),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await post(shops.cap, `shopper-${i}`, `198.51.100.${i + 1}`);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(await res.json()).toEqual({ error: "Too many storefront events for this shop" });
      } else await res.arrayBuffer();
    }
    const accepted = statuses.filter((s) => s === 202).length;
    expect(accepted).toBeGreaterThanOrEqual(2);
    expect(accepted).toBeLessThanOrEqual(4); // 2 per window
    expect(statuses.slice(0, 2)).toEqual([202, 202]);
    expect(await rateLimited(shops.cap)).toBe(10 - accepted);
    expect(await calls(shops.cap)).toBe(accepted);
    const other = await post(shops.genuine, "visitor-elsewhere", "198.51.100.1");
    expect(other.status).toBe(202);
  });

  it("the windows of a shop that ended are dropped at its next event, so fake ids leave nothing behind", async () => {
    const ended = new Date(Date.now() - 5 * rateWindowMs);
    await h.app.db.prisma.storefrontRateWindow.createMany({
      data: Array.from({ length: 500 }, (_, i) => ({ shop: domain(shops.quiet), visitor: `visitor:old-fake-${i}`, windowStart: ended, hits: 1 })),
    });
    expect((await post(shops.quiet, "back-again", "192.0.2.30")).status).toBe(202);
    const left = await h.app.db.prisma.storefrontRateWindow.findMany({ where: { shop: domain(shops.quiet) }, select: { visitor: true } });
    expect(left.map((r) => r.visitor).sort()).toEqual(["client:192.0.2.30", SHOP_WIDE_KEY, "visitor:back-again"].sort());
  });
});
