/**
 * The segment action extension (extensions/segment-sync-tag) picking a segment from Shopify's Use
 * segment modal, over HTTP: the extension's own call code (src/mirror.ts) against the app, with
 * the session token Shopify's fetch adds to an extension's calls to the app's domain, from the
 * admin extensions' origin. The pick is Settings' pick: tag, member import, segment webhook
 * subscriptions at the fake Admin, and segment webhooks then tag contacts.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { FakeSegment } from "../../dev/shopify/fake-admin";
import { webhookSubscriptions } from "../../dev/shopify/fake-webhook-subscriptions";
import { MIRROR_PATH, segmentState, startMirroring } from "../../extensions/segment-sync-tag/src/mirror";
import { tokenFor, type TokenKind } from "../admin/support";
import { install, newShop } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { CHROME_UA } from "../support/session-token";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

const gid = (id: number) => `gid://shopify/Segment/${id}`;
const segment = (id: number, name: string): FakeSegment => ({
  id: gid(id),
  name,
  query: "number_of_orders > 0",
  creationDate: "2026-01-01T00:00:00Z",
  lastEditDate: "2026-01-01T00:00:00Z",
});
/** Where Shopify runs admin UI extensions: another origin than the app's, so the browser asks CORS. */
const EXTENSION_ORIGIN = "https://extensions.shopifycdn.com";

describeEachDatabase("the segment action extension (Use segment → Sync as a tag)", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  /**
   * fetch as the extension's runtime does it: a relative URL resolved against the app's URL, the
   * session token of the shop's user added (none for "none"), from the extensions' origin.
   */
  const extensionFetch =
    (shop: string, token: TokenKind | "none" = "valid") =>
    async (input: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("user-agent", CHROME_UA);
      headers.set("origin", EXTENSION_ORIGIN);
      if (token !== "none") headers.set("authorization", `Bearer ${await tokenFor(shop, token)}`);
      return fetch(new URL(input, h.app.url), { ...init, headers, redirect: "manual" });
    };
  const subscribed = (shop: string) => webhookSubscriptions(h.app.admin, shop).map((s) => s.topic).sort();
  const picks = (shop: string) => h.app.db.prisma.mirroredSegment.findMany({ where: { shop }, orderBy: { pickedAt: "asc" } });

  it("Sync as a tag mirrors the segment as Settings does: tag, member import, segment webhook subscriptions; then joins tag contacts", async () => {
    const shop = newShop("segment-action");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(71, "VIP, gold"), segment(72, "Win back")];
    const call = extensionFetch(shop);

    expect(await segmentState(call, gid(71))).toEqual({ ok: true, segment: null });
    expect(subscribed(shop)).toEqual([]);
    const first = await startMirroring(call, gid(71));
    expect(first).toMatchObject({ ok: true, added: true, segment: { segmentId: gid(71), name: "VIP, gold", tag: "shopify-segment:VIP gold" } });
    expect(await picks(shop)).toMatchObject([{ segmentId: gid(71), tag: "shopify-segment:VIP gold", importStatus: "queued" }]);
    expect(subscribed(shop)).toEqual(["CUSTOMER_JOINED_SEGMENT", "CUSTOMER_LEFT_SEGMENT"]);
    expect(webhookSubscriptions(h.app.admin, shop).every((s) => s.uri === `${process.env.SHOPIFY_APP_URL}/webhooks`)).toBe(true);

    // Another segment is added beside it; the same one again changes nothing.
    expect(await startMirroring(call, gid(72))).toMatchObject({ ok: true, added: true, segment: { tag: "shopify-segment:Win back" } });
    expect(await startMirroring(call, gid(71))).toMatchObject({ ok: true, added: false, segment: { tag: "shopify-segment:VIP gold" } });
    expect((await picks(shop)).map((p) => p.segmentId)).toEqual([gid(71), gid(72)]);
    expect(subscribed(shop)).toEqual(["CUSTOMER_JOINED_SEGMENT", "CUSTOMER_LEFT_SEGMENT"]);
    expect(await segmentState(call, gid(72))).toMatchObject({ ok: true, segment: { segmentId: gid(72), tag: "shopify-segment:Win back" } });

    h.startWorkers(1, FAST_POLICY);
    const email = "extension-member@example.com";
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "7701", email, consent: "subscribed" }) });
    const joined = { ...(JSON.parse(fixture("customer.joined_segment")) as object), customer_id: "gid://shopify/Customer/7701", segment_id: gid(71) };
    await h.deliver({ topic: "customer.joined_segment", shop, body: joined });
    expect(h.emulator.person(email)?.tags).toEqual(["shopify-segment:VIP gold"]);
  });

  it("answers the browser's CORS preflight and puts CORS headers on its answers, refusals included", async () => {
    const shop = newShop("segment-action-cors");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(73, "VIP")];
    const preflight = await fetch(`${h.app.url}${MIRROR_PATH}`, {
      method: "OPTIONS",
      headers: { "user-agent": CHROME_UA, origin: EXTENSION_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(["authorization", "content-type"]));

    const post = (token: TokenKind | "none", body: unknown) =>
      extensionFetch(shop, token)(MIRROR_PATH, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const res of [await post("valid", { segmentId: gid(73) }), await post("none", { segmentId: gid(73) }), await post("valid", { segmentId: "73" })]) {
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
  });

  it("refuses a call without a session token, or with one not made for this app (401), and mirrors nothing", async () => {
    const shop = newShop("segment-action-auth");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(74, "VIP")];
    for (const token of ["none", "wrong-audience", "forged", "expired"] as const) {
      const res = await extensionFetch(shop, token)(MIRROR_PATH, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ segmentId: gid(74) }) });
      expect(res.status, token).toBe(401);
      const state = await extensionFetch(shop, token)(`${MIRROR_PATH}?segmentId=${encodeURIComponent(gid(74))}`);
      expect(state.status, token).toBe(401);
    }
    expect(await picks(shop)).toEqual([]);
    expect(subscribed(shop)).toEqual([]);
  });

  it("refuses what is not a Shopify segment id (400) and a segment the store does not have (404)", async () => {
    const shop = newShop("segment-action-bad");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(75, "VIP")];
    const call = extensionFetch(shop);
    const post = (body: string) => call(MIRROR_PATH, { method: "POST", headers: { "content-type": "application/json" }, body });
    for (const body of ['{"segmentId":"gid://shopify/Customer/75"}', '{"segmentId":"75"}', '{"segmentId":["gid://shopify/Segment/75"]}', "{}", "not json"]) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(await res.json(), body).toMatchObject({ ok: false, error: expect.any(String) });
    }
    expect((await call(`${MIRROR_PATH}?segmentId=Segment-75`)).status).toBe(400);
    const unknown = await post(JSON.stringify({ segmentId: gid(76) }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ ok: false, error: `Segment ${gid(76)} is not one of your store's segments.` });
    expect(await picks(shop)).toEqual([]);
    expect(subscribed(shop)).toEqual([]);
  });
});
