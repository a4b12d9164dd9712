import { Session } from "@shopify/shopify-api";
import { PrismaSessionStorage } from "../../app/shopify/session-storage.server";
import type { ExpiringTokenPair } from "./fake-admin";

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
