import "@shopify/shopify-app-remix/adapters/node";
import { ApiVersion, AppDistribution, shopifyApp } from "@shopify/shopify-app-remix/server";
import { setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { config } from "./config.server";
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

export default shopify;
export const apiVersion = API_VERSION;
export const addDocumentResponseHeaders = shopify.addDocumentResponseHeaders;
export const authenticate = shopify.authenticate;
export const unauthenticated = shopify.unauthenticated;
export const login = shopify.login;
export const registerWebhooks = shopify.registerWebhooks;
export const sessionStorage = shopify.sessionStorage;
