/**
 * The segment action extension (extensions/segment-sync-tag) picking a segment from Shopify's Use
 * segment modal, over HTTP: the extension's own call code (src/mirror.ts) against the app, with
 * the session token Shopify's fetch adds to an extension's calls to the app's domain, from the
 * admin extensions' origin. The pick is Settings' pick: tag, member import, segment webhook
 * subscriptions at the fake Admin, and segment webhooks then tag contacts.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
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
/** The test's own fetch, kept before the extension's run replaces the global one. */
const httpFetch = globalThis.fetch.bind(globalThis);

/** Just enough of the DOM for the extension's code: elements, attributes, children, click listeners. */
class FakeElement {
  attributes = new Map<string, string>();
  children: FakeElement[] = [];
  textContent = "";
  checked?: boolean;
  private listeners: (() => unknown)[] = [];
  constructor(readonly tagName: string) {}
  setAttribute(name: string, value: string) {
    this.attributes.set(name, value);
  }
  removeAttribute(name: string) {
    this.attributes.delete(name);
  }
  append(...children: FakeElement[]) {
    this.children.push(...children);
  }
  addEventListener(type: string, listener: () => unknown) {
    if (type === "click") this.listeners.push(listener);
  }
  async click() {
    for (const listener of this.listeners) await listener();
  }
  find(predicate: (el: FakeElement) => boolean): FakeElement {
    const found = this.search(predicate);
    if (!found) throw new Error(`no such element under ${this.tagName}`);
    return found;
  }
  private search(predicate: (el: FakeElement) => boolean): FakeElement | undefined {
    for (const child of this.children) {
      const found = predicate(child) ? child : child.search(predicate);
      if (found) return found;
    }
    return undefined;
  }
}

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
      return httpFetch(new URL(input, h.app.url), { ...init, headers, redirect: "manual" });
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

  it("the extension's own code in the modal: ticked and saved, the segment is mirrored and its tag shown; opened again, it shows the tag", async () => {
    const shop = newShop("segment-action-ui");
    await install(h, shop);
    h.app.admin.shops.get(shop)!.segments = [segment(78, "Loyal")];
    const { default: run } = await import("../../extensions/segment-sync-tag/src/ActionExtension");
    const close = vi.fn();
    const open = async () => {
      const body = new FakeElement("body");
      vi.stubGlobal("document", { body, createElement: (tag: string) => new FakeElement(tag) });
      vi.stubGlobal("shopify", { extension: { target: "admin.customer-segment-details.action.render" }, data: { selected: [{ id: gid(78) }] }, close });
      vi.stubGlobal("fetch", extensionFetch(shop));
      await run();
      const action = body.find((el) => el.tagName === "s-admin-action");
      return {
        action,
        text: () => action.find((el) => el.tagName === "s-paragraph").textContent,
        choice: action.find((el) => el.tagName === "s-checkbox"),
        save: action.find((el) => el.attributes.get("slot") === "primary-action"),
        cancel: action.find((el) => el.attributes.get("slot") === "secondary-actions"),
      };
    };
    try {
      const modal = await open();
      expect(modal.action.attributes.has("loading")).toBe(false);
      expect(modal.text()).toContain("Its customers get a tag");
      expect(modal.choice.attributes.has("checked")).toBe(false);
      // Save without the tick changes nothing and closes.
      await modal.save.click();
      expect(close).toHaveBeenCalledTimes(1);
      expect(await picks(shop)).toEqual([]);

      modal.choice.checked = true;
      await modal.save.click();
      expect(await picks(shop)).toMatchObject([{ segmentId: gid(78), tag: "shopify-segment:Loyal" }]);
      expect(subscribed(shop)).toEqual(["CUSTOMER_JOINED_SEGMENT", "CUSTOMER_LEFT_SEGMENT"]);
      expect(modal.text()).toContain("“shopify-segment:Loyal”");
      expect(modal.save.attributes.has("disabled")).toBe(true);
      expect(modal.cancel.textContent).toBe("Close");

      const again = await open();
      expect(again.text()).toContain("“shopify-segment:Loyal”");
      expect(again.choice.attributes.has("checked")).toBe(true);
      expect(again.save.attributes.has("disabled")).toBe(true);
      await again.cancel.click();
      expect(close).toHaveBeenCalledTimes(2);
    } finally {
      vi.unstubAllGlobals();
    }
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
