import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TEST_API_SECRET } from "../support/env";

/**
 * The query Shopify adds when it forwards a storefront request through the app proxy, signed as
 * Shopify signs it: HMAC-SHA256 (hex) of the sorted `key=value` pairs joined with nothing.
 */
export function signedProxyQuery(params: { shop: string; loggedInCustomerId?: string; timestamp?: number; secret?: string }): URLSearchParams {
  const query: Record<string, string> = {
    shop: params.shop,
    logged_in_customer_id: params.loggedInCustomerId ?? "",
    path_prefix: "/apps/marketing-sync",
    timestamp: String(params.timestamp ?? Math.floor(Date.now() / 1000)),
  };
  const message = Object.keys(query)
    .sort()
    .map((k) => `${k}=${query[k]}`)
    .join("");
  const signature = createHmac("sha256", params.secret ?? TEST_API_SECRET).update(message).digest("hex");
  return new URLSearchParams({ ...query, signature });
}

export interface SigningProxy {
  /** The storefront's origin: `${origin}/apps/marketing-sync/*` reaches the app's `/proxy/*`. */
  origin: string;
  /** Every request forwarded, with the app's answer and the size of the body sent. */
  forwarded: { status: number; body: unknown; bytes: number }[];
  close(): Promise<void>;
}

/**
 * A stand-in for Shopify's app proxy: `/apps/marketing-sync/*` on the shop is forwarded to the
 * app's `/proxy/*`, with the query Shopify adds, signed (the web pixel posts through it).
 */
export async function startSigningProxy(appUrl: string, shop: string): Promise<SigningProxy> {
  const forwarded: SigningProxy["forwarded"] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", async () => {
      const path = (req.url ?? "").replace(/^\/apps\/marketing-sync/, "/proxy");
      const answer = await fetch(`${appUrl}${path}?${signedProxyQuery({ shop })}`, { method: "POST", headers: { "content-type": "application/json" }, body: raw });
      const body = (await answer.json()) as unknown;
      forwarded.push({ status: answer.status, body, bytes: Buffer.byteLength(raw) });
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** POSTs a storefront event to the app proxy route as Shopify forwards it. */
export function postProxyEvent(appUrl: string, query: URLSearchParams | string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${appUrl}/proxy/events?${query.toString()}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const productViewed = (visitorId?: string) => ({
  event: "product_viewed",
  ...(visitorId ? { visitorId } : {}),
  url: "https://shop.example/products/red-scarf",
  product: { id: "8001", variantId: "9001", title: "Red scarf", price: 25, currency: "USD", sku: "SCARF-R", vendor: "Knits" },
});

export const cartEvent = (event: string, visitorId: string, cartId: string, quantity = 1) => ({
  event,
  visitorId,
  url: "https://shop.example/cart",
  cart: {
    id: `gid://shopify/Cart/${cartId}?key=secret-cart-key`,
    currency: "USD",
    total: 25 * quantity,
    lines: [{ productId: "8001", variantId: "9001", title: "Red scarf", quantity, price: 25 }],
  },
});

/**
 * Runs the web pixel's module (it registers itself with `globalThis.shopify` when it runs) as this
 * test file's own instance: test files share a process (vitest.config.ts), and the query makes a
 * module instance of its own.
 */
export function loadOwnPixel(testFile: string): Promise<unknown> {
  return import(/* @vite-ignore */ `../../extensions/storefront-events/src/index.ts?file=${testFile}`);
}
