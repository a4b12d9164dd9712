import "@shopify/shopify-api/adapters/node";
import { LogSeverity, shopifyApi } from "@shopify/shopify-api";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { API_VERSION } from "./admin-api.server";

let instance: ReturnType<typeof createApi> | undefined;

function createApi() {
  const cfg = config();
  return shopifyApi({
    apiKey: cfg.apiKey,
    apiSecretKey: cfg.apiSecret,
    apiVersion: API_VERSION,
    hostName: new URL(cfg.appUrl).host,
    isEmbeddedApp: true,
    logger: { level: LogSeverity.Error, log: (_severity, message) => logger().child({ component: "shopify" }).error(message) },
  });
}

/**
 * The shop a session token (App Bridge's id_token: signed with the app's secret, for this app,
 * not expired) was issued for, checked by Shopify's library; null for anything else.
 */
export async function shopOfSessionToken(token: string | null): Promise<string | null> {
  if (!token) return null;
  instance ??= createApi();
  try {
    const payload = await instance.session.decodeSessionToken(token);
    return new URL(payload.dest).hostname;
  } catch {
    return null;
  }
}
