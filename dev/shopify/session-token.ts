import { getJwt } from "@shopify/shopify-api/test-helpers";

/**
 * A session token (id_token) as App Bridge mints it for an embedded app, made with Shopify's own
 * test helper; overrides shape expired, forged or wrong-audience tokens.
 */
export async function mintSessionToken(options: {
  shop: string;
  apiKey: string;
  secret: string;
  userId?: string;
  expiresInSeconds?: number;
  /** Claims to replace (aud, iss, dest, exp, …). */
  overrides?: Record<string, unknown>;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  // getJwt takes the store's name and appends .myshopify.com itself.
  const store = options.shop.replace(/\.myshopify\.com$/, "");
  const { token } = await getJwt(store, options.apiKey, options.secret, {
    iss: `https://${options.shop}/admin`,
    dest: `https://${options.shop}`,
    sub: options.userId ?? "1",
    sid: `sid-${options.userId ?? "1"}`,
    jti: crypto.randomUUID(),
    iat: now - 5,
    nbf: now - 5,
    exp: now + (options.expiresInSeconds ?? 60),
    ...options.overrides,
  });
  return token;
}

/** A browser user agent: the Shopify library answers 410 to bots, HeadlessChrome included. */
export const CHROME_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
