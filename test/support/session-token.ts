// Session tokens for the test app (minted by Shopify's own test helper, see dev/shopify).
import * as tokens from "../../dev/shopify/session-token";
import { TEST_API_KEY, TEST_API_SECRET } from "./env";

export { CHROME_UA } from "../../dev/shopify/session-token";

export const mintSessionToken = (
  options: Omit<Parameters<typeof tokens.mintSessionToken>[0], "apiKey" | "secret"> & { apiKey?: string; secret?: string },
) => tokens.mintSessionToken({ apiKey: TEST_API_KEY, secret: TEST_API_SECRET, ...options });
