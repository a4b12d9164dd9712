import { Session } from "@shopify/shopify-api";
import { PrismaSessionStorage } from "~/shopify/session-storage.server";

/** What Shopify's token exchange answers for an expiring offline token (the fake Admin issues the same). */
export interface ExpiringTokenPair {
  access_token: string;
  scope: string;
  expires_in: number;
  refresh_token: string;
  refresh_token_expires_in: number;
}

/** Stores the shop's offline session as the app keeps it after token exchange: expiring, with its refresh token. */
export async function storeOfflineSession(shop: string, pair: ExpiringTokenPair, state = "test"): Promise<void> {
  await new PrismaSessionStorage().storeSession(
    new Session({
      id: `offline_${shop}`,
      shop,
      state,
      isOnline: false,
      accessToken: pair.access_token,
      scope: pair.scope,
      expires: new Date(Date.now() + pair.expires_in * 1000),
      refreshToken: pair.refresh_token,
      refreshTokenExpires: new Date(Date.now() + pair.refresh_token_expires_in * 1000),
    }),
  );
}
