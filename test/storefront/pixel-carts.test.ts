// The web pixel's carts as the service receives them (the pixel's own code, run in Node with the API
// Shopify hands it, posting through a stand-in for Shopify's app proxy to the app and the emulator):
// adds made on one page without a reload all reach the service's cart, and a big cart arrives whole.
import { afterAll, beforeAll, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { STOREFRONT_POLICY } from "~/storefront/storefront-policy";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { loadOwnPixel, startSigningProxy, type SigningProxy } from "./support";

const SHOP = "pixel-carts.myshopify.com";
type Callback = (event: unknown) => void;

let h: PipelineHarness;
let proxy: SigningProxy;
let origin = "";
const subscribers = new Map<string, Callback>();

interface ServiceCart {
  id: string;
  products: { id: string; quantity: number; url?: string; image_url?: string }[];
  total_products: number;
}

const variantOf = (pid: string, vid: string, title: string, imageUrl = `https://cdn.shopify.example/${vid}.jpg`) => ({
  id: vid,
  image: { src: imageUrl },
  price: { amount: 25, currencyCode: "USD" },
  product: { id: pid, title, type: "Scarves", untranslatedTitle: title, url: `/products/${pid}`, vendor: "Knits" },
  sku: `SKU-${vid}`,
  title,
  untranslatedTitle: title,
});
const lineOf = (variant: ReturnType<typeof variantOf>, quantity = 1) => ({ cost: { totalAmount: { amount: 25 * quantity, currencyCode: "USD" } }, merchandise: variant, quantity });
const scarf = variantOf("8001", "9001", "Red scarf");
const hat = variantOf("8002", "9002", "Blue hat");
/** A cart of `count` lines with ordinary Shopify values (a line is ~330 bytes), or long ones. */
const cartOf = (id: string, count: number, long = false) => ({
  id: `gid://shopify/Cart/${id}?key=k`,
  attributes: [],
  cost: { totalAmount: { amount: 25 * count, currencyCode: "USD" } },
  lines: Array.from({ length: count }, (_, i) =>
    lineOf(
      variantOf(
        String(7234567890100 + i),
        String(41234567890100 + i),
        long ? `Merino scarf no. ${i} ${"- hand knitted in the Highlands ".repeat(8)}`.slice(0, 250) : `Merino scarf no. ${i} - Large / Crimson`,
        `https://cdn.shopify.com/s/files/1/0612/3456/7890/products/merino-scarf-${i}${long ? "-".repeat(300) : ""}_1200x.jpg?v=1654321098`,
      ),
    ),
  ),
  totalQuantity: count,
});
const context = (path: string) => ({ document: { location: { href: `${origin}${path}`, origin } } });
// The cart when the collection page loaded: empty, but already created (it has an id).
const emptyCart = { id: "gid://shopify/Cart/c-page?key=k", attributes: [], cost: { totalAmount: { amount: 0, currencyCode: "USD" } }, lines: [], totalQuantity: 0 };

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
        browser: { cookie: { get: async (name: string) => (name === "_mk_vid" ? "vid-carts" : "") } },
        init: {
          context: context("/collections/all"),
          data: { customer: null, cart: emptyCart, shop: {}, purchasingCompany: null },
          customerPrivacy: { analyticsProcessingAllowed: true, marketingAllowed: true, preferencesProcessingAllowed: true, saleOfDataAllowed: true },
        },
        customerPrivacy: { subscribe: () => {} },
        _pixelInfo: {},
      }),
  };
  await loadOwnPixel("pixel-carts");
});
afterAll(async () => {
  await proxy.close();
  await h.close();
});

const emit = async (name: string, data: unknown, path = "/collections/all") => {
  const before = proxy.forwarded.length;
  subscribers.get(name)!({ id: "e", name, clientId: "c", seq: 1, timestamp: new Date().toISOString(), type: "standard", context: context(path), data });
  await expect.poll(() => proxy.forwarded.length, { timeout: 10_000 }).toBe(before + 1);
  return proxy.forwarded.at(-1)!;
};
/** The service's cart events, in order. */
const serviceCarts = () => h.emulator.requests.filter((r) => r.method === "POST" && r.path.startsWith("/api/events/cart/"));

it("adds on one page without a reload: the service's cart holds every product added, with their quantities", async () => {
  // Shopify: cartLine is the line this add put in the cart; the page is not reloaded in between.
  expect((await emit("product_added_to_cart", { cartLine: lineOf(scarf) })).status).toBe(202);
  expect((await emit("product_added_to_cart", { cartLine: lineOf(hat) })).status).toBe(202);
  expect((await emit("product_added_to_cart", { cartLine: lineOf(scarf, 2) })).status).toBe(202);
  await h.settle();
  expect(serviceCarts().map((r) => r.path)).toEqual(["/api/events/cart/created", "/api/events/cart/updated", "/api/events/cart/updated"]);
  const carts = serviceCarts().map((r) => r.body as ServiceCart);
  expect(carts.map((c) => c.id)).toEqual(["c-page", "c-page", "c-page"]);
  expect(carts[1].products.map((p) => [p.id, p.quantity])).toEqual([["8001", 1], ["8002", 1]]);
  expect(carts[2].products.map((p) => [p.id, p.quantity])).toEqual([["8001", 3], ["8002", 1]]);
  expect(carts[2].total_products).toBe(4);
});

it("a line removed on the page leaves the service's cart; the rest stays as it was", async () => {
  // Shopify's product_removed_from_cart: cartLine is the line taken out (the cart above: 3 scarves, 1 hat).
  expect((await emit("product_removed_from_cart", { cartLine: lineOf(hat) }, "/cart")).status).toBe(202);
  expect((await emit("product_removed_from_cart", { cartLine: lineOf(scarf, 1) }, "/cart")).status).toBe(202);
  await h.settle();
  const carts = serviceCarts().slice(-2).map((r) => r.body as ServiceCart);
  expect(carts.map((c) => [c.id, c.products.map((p) => [p.id, p.quantity]), c.total_products])).toEqual([
    ["c-page", [["8001", 3]], 3],
    ["c-page", [["8001", 2]], 2],
  ]);
});

it("a 60-line cart (ordinary Shopify values, ~20 KB) reaches the service whole", async () => {
  const answer = await emit("cart_viewed", { cart: cartOf("c-sixty", 60) }, "/cart");
  expect(answer.bytes).toBeGreaterThan(16 * 1024);
  expect(answer.status).toBe(202);
  await h.settle();
  const cart = serviceCarts().at(-1)!.body as ServiceCart;
  expect(cart.id).toBe("c-sixty");
  expect(cart.products).toHaveLength(60);
  expect(cart.total_products).toBe(60);
  expect(cart.products.every((p) => p.url && p.image_url)).toBe(true);
});

it("an add after viewing the cart builds on the cart just seen", async () => {
  expect((await emit("product_added_to_cart", { cartLine: lineOf(hat) }, "/products/8002")).status).toBe(202);
  await h.settle();
  const cart = serviceCarts().at(-1)!.body as ServiceCart;
  expect(cart.id).toBe("c-sixty");
  expect(cart.products).toHaveLength(61);
  expect(cart.products.at(-1)).toMatchObject({ id: "8002", quantity: 1 });
  expect(cart.total_products).toBe(61);
});

it("a 100-line cart with long titles and image URLs arrives with every line; only lines past the first ten lose their links", async () => {
  const answer = await emit("cart_viewed", { cart: cartOf("c-hundred", 100, true) }, "/cart");
  expect(answer.status).toBe(202);
  expect(answer.bytes).toBeLessThanOrEqual(STOREFRONT_POLICY.maxEventBytes);
  await h.settle();
  const cart = serviceCarts().at(-1)!.body as ServiceCart;
  expect(cart.id).toBe("c-hundred");
  expect(cart.products).toHaveLength(100);
  expect(cart.total_products).toBe(100);
  expect(cart.products.slice(0, 10).every((p) => p.url && p.image_url)).toBe(true);
  expect(cart.products.slice(10).some((p) => p.image_url)).toBe(false);
});
