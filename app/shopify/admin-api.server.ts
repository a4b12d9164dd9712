/**
 * The app's one Admin API client. Every Admin GraphQL call goes through `adminQuery` (or
 * `adminData`, which parses the answer's `data` with the caller's zod schema): background work
 * (history import, lookups, reconciliation, segment members, signups, consent, marketing
 * activities, the storefront set-up, the installation check) and the calls made while a merchant
 * waits (the admin pages, the segment extension, the install hook) alike. A merchant's request uses
 * the same offline session: authenticate.admin stores it (token exchange) before the loader or the
 * afterAuth hook runs. `npm run lint` fails on a `.graphql(` call outside app/shopify/.
 *
 * Tokens. The shop's offline session from our storage, its expiring access token refreshed before
 * it expires. Offline tokens expire after an hour and come with a refresh token (Shopify: "Use
 * expiring offline access tokens"; required of public apps from 2027-01-01). A token is refreshed
 * when it has less than REFRESH_MARGIN_MS left, and once more if Shopify refuses it with 401 anyway
 * (a clock that disagrees, a process that slept); each refreshed pair is stored at once, sealed like
 * the token before it. A non-expiring token stored before the switch is exchanged for an expiring
 * pair on first use (used as it is while Shopify refuses the exchange). Each request has a timeout.
 *
 * Budget. Shopify answers every query with `extensions.cost.throttleStatus` (currentlyAvailable,
 * restoreRate); a query that would overdraw the shop's bucket waits for it to refill first, and a
 * THROTTLED answer waits and tries again — each wait bounded, so a shop throttled for minutes fails
 * the step (retried later), never a worker. A MAX_COST_EXCEEDED answer (Shopify charges more than
 * the documented rules show) halves the document's page size, when it has one, and asks again: the
 * smaller page is kept for the next runs of the document in this process.
 *
 * Nothing here imports the Remix app (app/shopify.server.ts), which calls down into this folder too.
 */
import "@shopify/shopify-api/adapters/node";
import { ApiVersion, GraphqlQueryError, HttpResponseError, LogSeverity, shopifyApi, type Session } from "@shopify/shopify-api";
import { setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { PrismaSessionStorage } from "./session-storage.server";

export const API_VERSION = ApiVersion.October26;

/** A token with less than this left is refreshed first (the library refreshes at 5 minutes in requests too). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * The shop has no usable offline session: none stored (`none`: not installed, or uninstalled), or
 * its token expired with a refresh token past its own expiry (`expired`).
 */
export class NoOfflineSession extends Error {
  override readonly name = "NoOfflineSession";
  constructor(
    message: string,
    /** none: never stored; expired: its refresh token ran out; revoked: Shopify refused the refresh (an uninstall revokes it). */
    readonly reason: "none" | "expired" | "revoked",
  ) {
    super(message);
  }
}

/** Shopify's budget could not be had within the wait allowed: try again later. */
export class AdminThrottled extends Error {
  override readonly name = "AdminThrottled";
}

/** Shopify answered, but not with data (HTTP error, GraphQL errors other than THROTTLED). */
export class AdminApiError extends Error {
  override readonly name = "AdminApiError";
}

/** A GraphQL answer as Shopify sent it: data, errors (THROTTLED included) and the cost extensions. */
interface AdminAnswer {
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
  if (!session?.accessToken) throw new NoOfflineSession(`no offline session for ${shop}: the app is not installed there`, "none");
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
        ({ session: fresh } = await a.auth.refreshToken({ shop, refreshToken: stored.refreshToken }).catch((error: unknown) => {
          // OAuth's answer to a grant it no longer honours (RFC 6749 §5.2: 400 invalid_grant).
          if (error instanceof HttpResponseError && (error.response.code === 400 || error.response.code === 401)) {
            throw new NoOfflineSession(`Shopify refused to refresh the offline token of ${shop} (HTTP ${error.response.code}): revoked, as an uninstall does; the merchant must open the app again`, "revoked");
          }
          throw error;
        }));
      } else {
        throw new NoOfflineSession(`the offline token of ${shop} expired and cannot be refreshed: the merchant must open the app again`, "expired");
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
  if (!session.expires) {
    // While Shopify refuses to exchange a non-expiring token, the token is used as it is: Shopify's
    // answer to it says whether it still works (a revoked one gets 401, which the installation
    // check reads as an uninstall).
    return refresh(shop, undefined).catch((error: unknown) => {
      if (!(error instanceof HttpResponseError)) throw error;
      logger().warn({ shop, err: error.message }, "Shopify refused to exchange the non-expiring offline token; using it as it is");
      return session;
    });
  }
  return expiresSoon(session) ? refresh(shop, undefined) : session;
}

/**
 * One Admin GraphQL request for an installed shop. Returns Shopify's answer whole, GraphQL errors
 * included (adminQuery decides about THROTTLED); throws on HTTP errors, timeouts and network
 * failures, and NoOfflineSession when the shop has no token to use.
 */
async function send(shop: string, query: string, variables: Record<string, unknown>): Promise<AdminAnswer> {
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
        try {
          session = await refresh(shop, session.accessToken);
        } catch (refused) {
          // Shopify refused the refresh too (an uninstall revokes both): its 401 on the token is
          // the answer (the installation check reads it as "revoked").
          if (refused instanceof HttpResponseError || refused instanceof NoOfflineSession) {
            logger().warn({ shop, err: refused.message }, "Shopify refused the offline token and its refresh");
            throw error;
          }
          throw refused;
        }
        continue;
      }
      throw error;
    }
  }
}

const throttleStatus = z.object({
  maximumAvailable: z.number(),
  currentlyAvailable: z.number(),
  restoreRate: z.number(),
});
const costSchema = z.looseObject({
  requestedQueryCost: z.number().nullish(),
  actualQueryCost: z.number().nullish(),
  throttleStatus: throttleStatus.nullish(),
});
const extensionsSchema = z.looseObject({ cost: costSchema.nullish() }).nullish();
const graphqlError = z.looseObject({ message: z.string(), extensions: z.looseObject({ code: z.string().nullish() }).nullish() });

interface Bucket {
  available: number;
  maximum: number;
  restoreRate: number;
  at: number;
}

// Per process: each process keeps its own estimate (others' spending shows up in the next answer).
const buckets = new Map<string, Bucket>();
// Each document's requested cost as Shopify reported it (it depends on the document only): the
// next run of the same document waits for that much. Bounded: the app has a few dozen documents.
const requestedCosts = new Map<string, number>();
// Each paged document's page size after MAX_COST_EXCEEDED answers (absent: its default).
const pageSizes = new Map<string, number>();
const MAX_REMEMBERED_DOCUMENTS = 200;

function estimate(b: Bucket, now: number): number {
  return Math.min(b.maximum, b.available + ((now - b.at) / 1000) * b.restoreRate);
}

function remember(shop: string, extensions: unknown): z.infer<typeof costSchema> | undefined {
  const parsed = extensionsSchema.safeParse(extensions);
  const cost = parsed.success ? parsed.data?.cost : undefined;
  const t = cost?.throttleStatus;
  if (t) buckets.set(shop, { available: t.currentlyAvailable, maximum: t.maximumAvailable, restoreRate: t.restoreRate, at: Date.now() });
  return cost ?? undefined;
}

/** Milliseconds until the shop's bucket holds `cost` points (0: now; Infinity: it never refills). */
function waitFor(shop: string, cost: number): number {
  const b = buckets.get(shop);
  if (!b) return 0;
  const missing = Math.min(cost, b.maximum) - estimate(b, Date.now());
  if (missing <= 0) return 0;
  return b.restoreRate > 0 ? Math.ceil((missing / b.restoreRate) * 1000) : Infinity;
}

export interface AdminQueryOptions {
  /** What the query is expected to cost; default: what Shopify reported for this document before (10 the first time). */
  cost?: number;
  /** Longest wait for the budget, in all, before giving up with AdminThrottled. */
  maxWaitMs?: number;
  /**
   * The variable sizing the document's page (`$first: Int = 179`, the default written in the
   * document): halved when Shopify answers MAX_COST_EXCEEDED. Without it that answer is an error.
   */
  pageVariable?: string;
}

/** The page size a document declares as its variable's default (`$first: Int = 179`). */
function declaredPageSize(query: string, variable: string): number | undefined {
  const found = new RegExp(`\\$${variable}\\s*:\\s*Int!?\\s*=\\s*(\\d+)`).exec(query)?.[1];
  return found === undefined ? undefined : Number(found);
}

/** The page size a paged document is sent with now (undefined: not paged, or its default). */
function currentPageSize(query: string, variable: string): number | undefined {
  return pageSizes.get(query) ?? declaredPageSize(query, variable);
}

const DEFAULT_MAX_WAIT_MS = 30_000;
const MAX_TRIES = 5;

/**
 * One Admin GraphQL query for an installed shop (its offline session). Returns `data`; throws
 * AdminThrottled when the budget does not come back in time, AdminApiError on errors, and
 * whatever the transport threw on timeouts and network failures. Each try has the timeout.
 */
export async function adminQuery(shop: string, query: string, variables: Record<string, unknown>, options: AdminQueryOptions = {}): Promise<unknown> {
  const cost = options.cost ?? requestedCosts.get(query) ?? 10;
  let budgetMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const wait = async (ms: number, why: string) => {
    if (ms > budgetMs) {
      // The next attempt asks Shopify again rather than trusting an estimate (a bucket that never refills).
      buckets.delete(shop);
      throw new AdminThrottled(`Shopify's API budget for ${shop} is spent (${why}); retried later`);
    }
    budgetMs -= ms;
    await sleep(ms);
  };
  const paged = options.pageVariable;
  let pageSize = paged ? ((variables[paged] as number | undefined) ?? currentPageSize(query, paged)) : undefined;
  for (let attempt = 1; ; attempt++) {
    await wait(waitFor(shop, cost), "waiting for the cost bucket to refill");
    const answer = await send(shop, query, paged && pageSize !== undefined ? { ...variables, [paged]: pageSize } : variables);
    const spent = remember(shop, answer.extensions);
    if (spent?.requestedQueryCost && !requestedCosts.has(query) && requestedCosts.size < MAX_REMEMBERED_DOCUMENTS) {
      requestedCosts.set(query, spent.requestedQueryCost);
    }
    const errors = z.array(graphqlError).safeParse(answer.errors);
    const list = errors.success ? errors.data : [];
    if (list.some((e) => e.extensions?.code === "THROTTLED")) {
      if (attempt >= MAX_TRIES) throw new AdminThrottled(`Shopify kept throttling ${shop} after ${attempt} tries; retried later`);
      // Refill what this query asks for (at least a second when Shopify gives no figures).
      const needed = waitFor(shop, spent?.requestedQueryCost ?? requestedCosts.get(query) ?? cost);
      await wait(needed === 0 ? 1_000 : needed, "THROTTLED");
      continue;
    }
    const tooCostly = list.find((e) => e.extensions?.code === "MAX_COST_EXCEEDED");
    if (tooCostly && paged && pageSize !== undefined && pageSize > 1) {
      // Not the same query again: half the page costs about half (the rest comes on the next pages).
      pageSize = Math.floor(pageSize / 2);
      if (pageSizes.has(query) || pageSizes.size < MAX_REMEMBERED_DOCUMENTS) pageSizes.set(query, pageSize);
      requestedCosts.delete(query);
      logger().warn({ shop, pageSize, err: tooCostly.message }, "Shopify refused a query's cost; asking again with half the page");
      continue;
    }
    if (list.length || answer.data === undefined || answer.data === null) {
      throw new AdminApiError(`Shopify answered with errors: ${list.map((e) => e.message).join("; ") || "no data"}`);
    }
    return answer.data;
  }
}

/**
 * For calls a merchant waits on (an admin page, a form, the segment extension, the install): a
 * short wait for Shopify's budget, after which the page says Shopify did not answer.
 */
export const MERCHANT_WAITING: AdminQueryOptions = { maxWaitMs: 3_000 };

/**
 * `adminQuery` whose `data` is parsed with `schema`: an answer of another shape throws
 * AdminApiError naming the operation and where it differs (never the values: they may be a
 * customer's).
 */
export async function adminData<T>(
  shop: string,
  schema: z.ZodType<T>,
  query: string,
  variables: Record<string, unknown> = {},
  options: AdminQueryOptions = {},
): Promise<T> {
  const parsed = schema.safeParse(await adminQuery(shop, query, variables, options));
  if (parsed.success) return parsed.data;
  const operation = /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? "an anonymous operation";
  const where = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "data"}: ${i.code}`).join("; ");
  throw new AdminApiError(`Shopify's answer to ${operation} is not what the app expects (${where.slice(0, 300)})`);
}

/** Tests: forget what was learnt about the shops' buckets. */
export function forgetAdminBudgets(): void {
  buckets.clear();
  requestedCosts.clear();
  pageSizes.clear();
}
