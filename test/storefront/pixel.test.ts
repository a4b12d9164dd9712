// The web pixel's own code (extensions/storefront-events/src/index.ts), run in Node with the API
// Shopify hands it, posting through a stand-in for Shopify's app proxy (which signs and forwards,
// as Shopify does) to the app, and on to the emulator: the pixel's bodies are what the app accepts.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { loadOwnPixel, startSigningProxy, type SigningProxy } from "./support";

const SHOP = "pixel-shop.myshopify.com";
type Callback = (event: unknown) => void;

let h: PipelineHarness;
let proxy: SigningProxy;
let origin = "";
const subscribers = new Map<string, Callback>();
const privacySubscribers = new Map<string, Callback>();

const variant = {
  id: "9001",
  image: { src: "https://cdn.shopify.example/scarf.jpg" },
  price: { amount: 25, currencyCode: "USD" },
  product: { id: "8001", title: "Red scarf", type: "Scarves", untranslatedTitle: "Red scarf", url: "/products/red-scarf", vendor: "Knits" },
  sku: "SCARF-R",
  title: "Red",
  untranslatedTitle: "Red",
};
const context = (path: string) => ({ document: { location: { href: `https://pixel-shop.example${path}`, origin } } });
const cart = (quantity: number) => ({
  id: "gid://shopify/Cart/c1-pixel?key=cart-secret",
  attributes: [],
  cost: { totalAmount: { amount: 25 * quantity, currencyCode: "USD" } },
  lines: [{ cost: { totalAmount: { amount: 25 * quantity, currencyCode: "USD" } }, merchandise: variant, quantity }],
  totalQuantity: quantity,
});

beforeAll(async () => {
  h = await startPipelineHarness();
  await recordInstall(SHOP, "read_customers");
  await h.connect(SHOP);
  await h.app.db.prisma.shop.update({ where: { domain: SHOP }, data: { settings: { storefrontEvents: true } } });
  h.startWorkers();
  proxy = await startSigningProxy(h.app.url, SHOP);
  origin = proxy.origin;

  (globalThis as { shopify?: unknown }).shopify = {
    extend: (_point: string, extend: (api: unknown) => void) =>
      extend({
        settings: { proxyPath: "/apps/marketing-sync" },
        analytics: { subscribe: (name: string, cb: Callback) => subscribers.set(name, cb) },
        browser: { cookie: { get: async (name: string) => (name === "_mk_vid" ? "vid-pixel" : "") } },
        init: {
          context: context("/"),
          data: { customer: null, cart: cart(1), shop: {}, purchasingCompany: null },
          customerPrivacy: { analyticsProcessingAllowed: true, marketingAllowed: true, preferencesProcessingAllowed: true, saleOfDataAllowed: true },
        },
        customerPrivacy: { subscribe: (name: string, cb: Callback) => privacySubscribers.set(name, cb) },
        _pixelInfo: {},
      }),
  };
  await loadOwnPixel("pixel");
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});

const emit = async (name: string, data: unknown, path = "/") => {
  const before = proxy.forwarded.length;
  subscribers.get(name)!({ id: "e1", name, clientId: "c", seq: 1, timestamp: new Date().toISOString(), type: "standard", context: context(path), data });
  // Generous: on a busy machine the proxy's forward can take seconds.
  await expect.poll(() => proxy.forwarded.length, { timeout: 60_000 }).toBe(before + 1);
  return proxy.forwarded.at(-1)!;
};

it("subscribes to the five events the tracker does not cover", () => {
  expect([...subscribers.keys()].sort()).toEqual(["cart_viewed", "checkout_started", "product_added_to_cart", "product_removed_from_cart", "product_viewed"]);
});

it("each event's body is accepted by the app proxy and reaches the service", async () => {
  const viewed = await emit("product_viewed", { productVariant: variant }, "/products/red-scarf");
  expect({ status: viewed.status, body: viewed.body }).toEqual({ status: 202, body: { queued: true, event: "product_viewed" } });
  expect((await emit("product_added_to_cart", { cartLine: cart(1).lines[0] })).status).toBe(202);
  expect((await emit("cart_viewed", { cart: cart(2) }, "/cart")).status).toBe(202);
  const checkout = { token: "chk-1", currencyCode: "USD", totalPrice: { amount: 50, currencyCode: "USD" }, lineItems: [{ id: "li1", quantity: 2, title: "Red scarf", variant, finalLinePrice: { amount: 50, currencyCode: "USD" }, discountAllocations: [], properties: [], sellingPlanAllocation: null }] };
  expect((await emit("checkout_started", { checkout })).status).toBe(202);
  await h.settle();
  const sent = h.emulator.requests.filter((r) => r.method === "POST" && r.path.startsWith("/api/events/"));
  expect(sent.map((r) => r.path)).toEqual(["/api/events/product/viewed", "/api/events/cart/created", "/api/events/cart/updated", "/api/events/cart/updated"]);
  expect(sent[0].body).toMatchObject({ referenceId: "visitor:vid-pixel", id: "8001", name: "Red scarf", url: `${origin}/products/red-scarf`, image_url: "https://cdn.shopify.example/scarf.jpg", vendor: "Knits", currency: "USD" });
  expect(sent[2].body).toMatchObject({ id: "c1-pixel", total: 50, total_products: 2 });
  expect(JSON.stringify(sent)).not.toContain("cart-secret");
});

it("after the visitor withdraws consent, nothing more is sent", async () => {
  privacySubscribers.get("visitorConsentCollected")!({ customerPrivacy: { analyticsProcessingAllowed: true, marketingAllowed: false, preferencesProcessingAllowed: true, saleOfDataAllowed: false } });
  // The pixel's fetch calls, counted as they start: a send starts within the event's own promise
  // chain (before any timer fires), however busy the machine; an arrival at the proxy may not.
  const started: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    started.push(String(input));
    return realFetch(input, init);
  }) as typeof fetch;
  try {
    subscribers.get("product_viewed")!({ name: "product_viewed", context: context("/products/red-scarf"), data: { productVariant: variant } });
    await sleep(50);
    expect(started).toEqual([]);
  } finally {
    globalThis.fetch = realFetch;
  }
});
