import "@shopify/shopify-app-remix/adapters/node";
import { ApiVersion, AppDistribution, shopifyApp } from "@shopify/shopify-app-remix/server";
import { LogSeverity } from "@shopify/shopify-api";
import { setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { config, type AppConfig } from "./config.server";
import { logger } from "./logger.server";
import { PrismaSessionStorage } from "./shopify/session-storage.server";
import { recordInstall } from "./shops/shops.server";

export const API_VERSION = ApiVersion.April26;

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
  // Embedded auth by token exchange (no OAuth redirects inside the admin iframe).
  future: { unstable_newEmbeddedAuthStrategy: true },
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
    afterAuth: async ({ session, admin }) => {
      if (!session.isOnline) await recordInstall(session.shop, session.scope, admin);
    },
  },
});

if (cfg.adminApiOrigin) {
  // Tests and the demo: every Admin API call (token exchange, GraphQL) goes to the fake Admin
  // instead of https://<shop>.myshopify.com.
  const origin = cfg.adminApiOrigin;
  setAbstractFetchFunc((input, init) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    if (url.hostname.endsWith(".myshopify.com")) {
      const target = new URL(url.pathname + url.search, origin);
      target.searchParams.set("shop", url.hostname);
      return fetch(target, init);
    }
    return fetch(input, init);
  });
}

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
