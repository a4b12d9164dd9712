/**
 * The app's one way to Shopify's Admin API outside a merchant's request (history import, lookups,
 * reconciliation, the storefront set-up): the shop's offline session from our storage, its
 * expiring access token refreshed before it expires, and one GraphQL request with a timeout.
 *
 * Offline tokens expire after an hour and come with a refresh token (Shopify: "Use expiring
 * offline access tokens"; required of public apps from 2027-01-01). A token is refreshed when it
 * has less than REFRESH_MARGIN_MS left, and once more if Shopify refuses it with 401 anyway (a
 * clock that disagrees, a process that slept); each refreshed pair is stored at once, sealed like
 * the token before it. A non-expiring token stored before the switch is exchanged for an expiring
 * pair on first use. Nothing here imports the Remix app (app/shopify.server.ts), which calls down
 * into this folder too.
 */
import "@shopify/shopify-api/adapters/node";
import { ApiVersion, GraphqlQueryError, HttpResponseError, LogSeverity, shopifyApi, type Session } from "@shopify/shopify-api";
import { setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { PrismaSessionStorage } from "./session-storage.server";

export const API_VERSION = ApiVersion.October26;

/** A token with less than this left is refreshed first (the library refreshes at 5 minutes in requests too). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/** The shop has no usable offline session (not installed, uninstalled, or its refresh token is gone). */
export class NoOfflineSession extends Error {
  override readonly name = "NoOfflineSession";
}

/** A GraphQL answer as Shopify sent it: data, errors (THROTTLED included) and the cost extensions. */
export interface AdminAnswer {
  data?: unknown;
  errors?: unknown;
  extensions?: unknown;
}

let redirected = false;

/**
 * Tests and the demo: every Admin API call (token endpoint, GraphQL) goes to the fake Admin
 * instead of https://<shop>.myshopify.com, with the shop as ?shop=. One switch for the whole
 * process (the Remix app's requests and the background calls share Shopify's runtime).
 */
export function routeAdminApiToOrigin(origin: string | undefined): void {
  if (!origin || redirected) return;
  redirected = true;
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

let instance: ReturnType<typeof createApi> | undefined;

function createApi() {
  const cfg = config();
  routeAdminApiToOrigin(cfg.adminApiOrigin);
  return shopifyApi({
    apiKey: cfg.apiKey,
    apiSecretKey: cfg.apiSecret,
    apiVersion: API_VERSION,
    scopes: cfg.scopes,
    hostName: new URL(cfg.appUrl).host,
    isEmbeddedApp: true,
    // Our own log lines say what failed; the library's would repeat them per request.
    logger: { level: LogSeverity.Error, log: (_severity, message) => logger().child({ component: "shopify" }).error(message) },
  });
}

function api() {
  instance ??= createApi();
  return instance;
}

const storage = new PrismaSessionStorage();
const refreshing = new Map<string, Promise<Session>>();

async function storedSession(shop: string): Promise<Session> {
  const session = await storage.loadSession(api().session.getOfflineId(shop));
  if (!session?.accessToken) throw new NoOfflineSession(`no offline session for ${shop}: the app is not installed there`);
  return session;
}

const expiresSoon = (s: Session) => s.expires !== undefined && s.expires.getTime() - Date.now() < REFRESH_MARGIN_MS;

/**
 * A fresh pair for the shop, one refresh at a time per shop in this process. Another process may
 * have refreshed meanwhile: its stored token is used when it is not the one refused. Shopify keeps
 * the previous refresh token usable until its replacement is used, so two processes refreshing at
 * once both get a working pair.
 */
function refresh(shop: string, refused: string | undefined): Promise<Session> {
  let pending = refreshing.get(shop);
  if (!pending) {
    pending = (async () => {
      const stored = await storedSession(shop);
      if (stored.accessToken !== refused && stored.expires && !expiresSoon(stored)) return stored;
      const a = api();
      let fresh: Session;
      if (!stored.expires) {
        // Stored before expiring tokens were turned on: exchanged once for an expiring pair.
        ({ session: fresh } = await a.auth.migrateToExpiringToken({ shop, nonExpiringOfflineAccessToken: stored.accessToken! }));
      } else if (stored.refreshToken && (!stored.refreshTokenExpires || stored.refreshTokenExpires.getTime() > Date.now())) {
        ({ session: fresh } = await a.auth.refreshToken({ shop, refreshToken: stored.refreshToken }));
      } else {
        throw new NoOfflineSession(`the offline token of ${shop} expired and cannot be refreshed: the merchant must open the app again`);
      }
      await storage.storeSession(fresh);
      logger().info({ shop, expires: fresh.expires?.toISOString() }, "offline access token refreshed");
      return fresh;
    })().finally(() => refreshing.delete(shop));
    refreshing.set(shop, pending);
  }
  return pending;
}

/** The shop's offline session with a token good for at least REFRESH_MARGIN_MS. */
export async function offlineSession(shop: string): Promise<Session> {
  const session = await storedSession(shop);
  return !session.expires || expiresSoon(session) ? refresh(shop, undefined) : session;
}

/**
 * One Admin GraphQL request for an installed shop. Returns Shopify's answer whole, GraphQL errors
 * included (the caller decides about THROTTLED); throws on HTTP errors, timeouts and network
 * failures, and NoOfflineSession when the shop has no token to use.
 */
export async function adminGraphqlRequest(shop: string, query: string, variables: Record<string, unknown>): Promise<AdminAnswer> {
  let session = await offlineSession(shop);
  for (let attempt = 1; ; attempt++) {
    const client = new (api().clients.Graphql)({ session });
    try {
      const response = await client.request(query, { variables, signal: AbortSignal.timeout(config().marketingApiTimeoutMs) });
      return { data: response.data, errors: response.errors, extensions: response.extensions };
    } catch (error) {
      if (error instanceof GraphqlQueryError) {
        const body = error.body as { data?: unknown; errors?: { graphQLErrors?: unknown }; extensions?: unknown } | undefined;
        if (body?.errors?.graphQLErrors) return { data: body.data, errors: body.errors.graphQLErrors, extensions: body.extensions };
      }
      // Refused although we thought it valid: refresh once and try again.
      if (attempt === 1 && error instanceof HttpResponseError && error.response.code === 401) {
        session = await refresh(shop, session.accessToken);
        continue;
      }
      throw error;
    }
  }
}
