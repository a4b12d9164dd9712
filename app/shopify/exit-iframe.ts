const SHOPIFY_ADMIN = "https://admin.shopify.com";

/**
 * Where /auth/exit-iframe may send the browser: the app's own pages (the library's own use, a
 * relative /auth?shop=…), Shopify's admin (its origin exactly), or the admin of the shop the
 * request is authenticated for (`authenticatedShop`, from a verified session token). A `shop`
 * query parameter proves nothing: anyone can own a store and its myshopify domain, so it would make
 * the app an open redirect to a page its owner controls, as would https://evil.example.com or
 * javascript:….
 */
export function exitIframeAllowed(requestUrl: string, appUrl: string, authenticatedShop: string | null): boolean {
  const url = new URL(requestUrl);
  const raw = url.searchParams.getAll("exitIframe");
  if (raw.length !== 1) return false;
  let target: URL;
  try {
    target = new URL(raw[0], appUrl);
  } catch {
    return false;
  }
  if (target.protocol !== "https:" && target.protocol !== "http:") return false;
  if (target.origin === new URL(appUrl).origin) return true;
  if (target.origin === SHOPIFY_ADMIN) return true;
  return authenticatedShop !== null && target.origin === `https://${authenticatedShop}`;
}
