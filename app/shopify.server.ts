import "@shopify/shopify-app-remix/adapters/node";
import { AppDistribution, shopifyApp } from "@shopify/shopify-app-remix/server";
import { LogSeverity } from "@shopify/shopify-api";
import { config, type AppConfig } from "./config.server";
import { logger } from "./logger.server";
import { API_VERSION, routeAdminApiToOrigin } from "./shopify/admin-api.server";
import { PrismaSessionStorage } from "./shopify/session-storage.server";
import { recordInstall } from "./shops/shops.server";

export { API_VERSION };

const cfg = config();

const shopify = shopifyApp({
  apiKey: cfg.apiKey,
  apiSecretKey: cfg.apiSecret,
  apiVersion: API_VERSION,
  scopes: cfg.scopes,
  appUrl: cfg.appUrl,
  authPathPrefix: "/auth",
  sessionStorage: new PrismaSessionStorage(),
  distribution: AppDistribution.AppStore,
  // Embedded auth by token exchange (no OAuth redirects inside the admin iframe). Offline tokens
  // expire after an hour with a refresh token (required of public apps from 2027-01-01); the
  // library refreshes them in requests, app/shopify/admin-api.server.ts in background work.
  future: { unstable_newEmbeddedAuthStrategy: true, expiringOfflineAccessTokens: true },
  // Shopify's library logs through ours (one format, one redaction list). Its "info" is a line
  // per admin request, so it speaks only from our "debug" level down.
  logger: {
    level: shopifyLogLevel(cfg.logLevel),
    log: (severity, message) => {
      const log = logger().child({ component: "shopify" });
      if (severity === LogSeverity.Error) log.error(message);
      else if (severity === LogSeverity.Warning) log.warn(message);
      else log.debug(message);
    },
  },
  hooks: {
    // The offline session is stored before this runs: the profile lookup reads it (app/shopify/admin-api.server.ts).
    afterAuth: async ({ session }) => {
      if (!session.isOnline) await recordInstall(session.shop, session.scope, { askShopify: true });
    },
  },
});

// Tests and the demo: Admin API calls go to the fake Admin (the switch lives with the background client).
routeAdminApiToOrigin(cfg.adminApiOrigin);

function shopifyLogLevel(level: AppConfig["logLevel"]): LogSeverity {
  if (level === "trace" || level === "debug") return LogSeverity.Debug;
  if (level === "info" || level === "warn") return LogSeverity.Warning;
  return LogSeverity.Error;
}

export default shopify;
export const apiVersion = API_VERSION;
export const addDocumentResponseHeaders = shopify.addDocumentResponseHeaders;
export const authenticate = shopify.authenticate;
export const unauthenticated = shopify.unauthenticated;
export const login = shopify.login;
export const registerWebhooks = shopify.registerWebhooks;
export const sessionStorage = shopify.sessionStorage;
