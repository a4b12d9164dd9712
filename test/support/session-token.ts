import { SignJWT } from "jose";
import { TEST_API_KEY, TEST_API_SECRET } from "./env";

/** A session token (id_token) as App Bridge mints it for an embedded app. */
export async function mintSessionToken(options: {
  shop: string;
  userId?: string;
  apiKey?: string;
  secret?: string;
  expiresInSeconds?: number;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: `https://${options.shop}/admin`,
    dest: `https://${options.shop}`,
    sid: `sid-${options.userId ?? "1"}`,
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setAudience(options.apiKey ?? TEST_API_KEY)
    .setSubject(options.userId ?? "1")
    .setIssuedAt(now - 5)
    .setNotBefore(now - 5)
    .setExpirationTime(now + (options.expiresInSeconds ?? 60))
    .setJti(crypto.randomUUID())
    .sign(new TextEncoder().encode(options.secret ?? TEST_API_SECRET));
}

/** A browser user agent: the Shopify library answers 410 to bots, HeadlessChrome included. */
export const CHROME_UA =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
