import { z } from "zod";

const SHOP = /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/;
const SHOPIFY_ADMIN = "https://admin.shopify.com";

/**
 * Where /auth/exit-iframe may send the browser: the app's own pages (the library's own use, a
 * relative /auth?shop=…), the Shopify admin, or the `shop` query parameter's own admin. Anything
 * else (https://evil.example.com, javascript:…) would make the app an open redirect.
 */
export function exitIframeAllowed(requestUrl: string, appUrl: string): boolean {
  const url = new URL(requestUrl);
  const raw = url.searchParams.getAll("exitIframe");
  if (raw.length !== 1) return false;
  let target: URL;
  try {
    target = new URL(raw[0], appUrl);
  } catch {
    return false;
  }
  if (target.origin === new URL(appUrl).origin) return true;
  if (target.origin === SHOPIFY_ADMIN) return true;
  const shop = z.string().regex(SHOP).safeParse(url.searchParams.get("shop"));
  return shop.success && target.origin === `https://${shop.data}`;
}
