import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { jwtVerify } from "jose";
import { actualCost, answer, CostBuckets, prepare, throttledBody, type ThrottleStatus } from "./fake-graphql";
import { installStorefrontResolvers } from "./fake-storefront";
import { forgetSubscriptions, installWebhookSubscriptionResolvers } from "./fake-webhook-subscriptions";
import { installMarketingActivityResolvers } from "./fake-marketing-activities";

/**
 * A small fake of the Shopify Admin API for tests and the demo: OAuth token exchange and
 * GraphQL. The app reaches it instead of https://<shop>.myshopify.com when SHOPIFY_ADMIN_API_ORIGIN
 * is set (see app/shopify.server.ts, which passes the shop as ?shop=).
 */

/** One GraphQL request as `GET /__requests` lists it (no access token: the list is for support and tests). */
export interface RecordedAdminRequest {
  /** When it arrived (ISO). */
  at: string;
  shop: string;
  /** The operation's name (`operationName`, else the document's first named operation, else "anonymous"). */
  operation: string;
  variables: Record<string, unknown>;
}

export interface AdminCall {
  shop: string;
  path: string;
  body: unknown;
  accessToken?: string;
}

/**
 * The data of an operation, shaped as the schema's fields (the answer keeps only what the query
 * selected; an abstract type's object names its type by `__typename` or its GID).
 */
export type GraphqlResolver = (query: string, variables: Record<string, unknown>, shop: string) => unknown;

/** A resolver's whole answer (errors, extensions) instead of `{ data: <result> }`, sent as is. */
export class GraphqlReply {
  constructor(readonly body: Record<string, unknown>) {}
}

export interface FakeShop {
  domain: string;
  name: string;
  currencyCode: string;
  primaryDomainUrl: string;
  /** The store's time zone (Admin GraphQL `shop { ianaTimezone }`). */
  ianaTimezone: string;
  /** The access scopes the merchant granted (default: all the app's configuration asks for). */
  scopes: string;
  /** The store's customer segments, oldest first (Admin GraphQL `segments`). */
  segments: FakeSegment[];
  /**
   * Each segment's current members (by segment gid): customer numbers, in Shopify's order
   * (Admin GraphQL `customerSegmentMembers`, whose member ids are
   * gid://shopify/CustomerSegmentMember/<customer number>).
   */
  segmentMembers: Record<string, string[]>;
}

/** A customer segment as the Admin GraphQL `Segment` object has it. */
export interface FakeSegment {
  id: string;
  name: string;
  query: string;
  creationDate: string;
  lastEditDate: string;
}

/** The scopes the app's configuration asks for: what Shopify grants at install. */
const APP_SCOPES = /^scopes\s*=\s*"([^"]*)"/m.exec(readFileSync(path.resolve(import.meta.dirname, "../../shopify.app.toml"), "utf8"))?.[1] ?? "";

/** Orders older than this are invisible to a shop's tokens without `read_all_orders` (Shopify's Order docs). */
export const ORDER_WINDOW_DAYS = 60;

/** Whether a shop's tokens may read an order created at `createdAt` (ISO). */
export function orderVisible(shop: FakeShop | undefined, createdAt: string, now = Date.now()): boolean {
  if (!shop || shop.scopes.split(",").includes("read_all_orders")) return true;
  return Date.parse(createdAt) >= now - ORDER_WINDOW_DAYS * 86_400_000;
}

/** Expiring offline tokens as Shopify issues them: an hour, with a refresh token good for 90 days. */
const ACCESS_TOKEN_SECONDS = 3_600;
const REFRESH_TOKEN_SECONDS = 90 * 86_400;

/** What Shopify's token exchange answers for an expiring offline token. */
export interface ExpiringTokenPair {
  access_token: string;
  scope: string;
  expires_in: number;
  refresh_token: string;
  refresh_token_expires_in: number;
}

export interface FakeAdmin {
  url: string;
  calls: AdminCall[];
  /** Every GraphQL request received, oldest first (also served at `GET /__requests`). */
  requests: RecordedAdminRequest[];
  /** The latest offline access token handed out, by shop. */
  tokens: Map<string, string>;
  /** Every access token handed out (non-expiring ones stay valid until an uninstall; expiring ones until `expiresAt`). */
  issued: Set<string>;
  /** When each expiring access token stops working (ms since the epoch). */
  expiresAt: Map<string, number>;
  /** Hands out an expiring offline token pair for the shop, as token exchange with expiring=1 does (seeding a session without the exchange). */
  issueOfflineToken(shop: string): ExpiringTokenPair;
  /** Ends every expiring access token of the shop now, as an hour passing would (refresh tokens keep working). */
  expireTokens(shop: string): void;
  /** The merchant uninstalls the app: Shopify revokes every token of the shop, refresh tokens too (the Admin API answers 401). */
  uninstall(shop: string): void;
  /** The merchant's granted scopes change (what currentAppInstallation.accessScopes and token answers report). */
  grantScopes(shop: string, scopes: string[]): void;
  shops: Map<string, FakeShop>;
  addShop(shop: Partial<FakeShop> & { domain: string }): FakeShop;
  /** Answers GraphQL operations whose query contains `match`. */
  onGraphql(match: string, resolver: GraphqlResolver): void;
  /** Every GraphQL answer from now on `ms` later (reset: as started), as Shopify a network away answers. */
  answerLate(ms: number): void;
  /**
   * Forgets what a test set up: the resolvers added after start, throttling and the query cost
   * limit, the calls and requests recorded. Shops and their tokens stay (the app's process keeps
   * one fake Admin: it routes Admin API calls to one origin).
   */
  reset(): void;
  /** Shopify's cost bucket of each shop, now. */
  bucket(shop: string): ThrottleStatus;
  /** Sets every shop's bucket (size, restore rate; `currentlyAvailable`: its level now). */
  throttle(bucket: Partial<ThrottleStatus>): void;
  /**
   * The single-query cost limit from now on (none given: Shopify's 1,000). Lower, it stands for
   * the per-field costs Shopify adds beyond its documented rules: a query the rules price under
   * 1,000 is refused with MAX_COST_EXCEEDED as Shopify refuses it.
   */
  limitQueryCost(points?: number): void;
  /** MAX_COST_EXCEEDED answers given, by the operation's name. */
  costRefused: Record<string, number>;
  /** THROTTLED answers given, and operations answered, by the `match` of their resolver. */
  throttled: Record<string, number>;
  answered: Record<string, number>;
  close(): Promise<void>;
}

export async function startFakeAdmin(
  options: {
    /** The app's client id and secret: token exchange checks the session token against them. */
    apiKey: string;
    apiSecret: string;
    port?: number;
    /** The demo: also serve an App Bridge stub and links that open the embedded admin. */
    demo?: { appUrl: string };
    /** Benches: every GraphQL answer this much later, as Shopify a network away answers. */
    latencyMs?: number;
  },
): Promise<FakeAdmin> {
  const { apiKey, apiSecret } = options;
  const calls: AdminCall[] = [];
  const requests: RecordedAdminRequest[] = [];
  const tokens = new Map<string, string>();
  const issued = new Set<string>();
  const expiresAt = new Map<string, number>();
  const shopOfToken = new Map<string, string>();
  const refreshTokens = new Map<string, { shop: string; expiresAt: number; retired: boolean; previous?: string }>();
  /** An expiring pair as Shopify answers it (the offline token response plus expiry and refresh token). */
  const expiringPair = (shop: string, previous?: string) => {
    const token = `shpat_fake_offline_${crypto.randomUUID().replaceAll("-", "")}`;
    const refresh = `shprt_fake_${crypto.randomUUID().replaceAll("-", "")}`;
    issued.add(token);
    tokens.set(shop, token);
    expiresAt.set(token, Date.now() + ACCESS_TOKEN_SECONDS * 1000);
    shopOfToken.set(token, shop);
    refreshTokens.set(refresh, { shop, expiresAt: Date.now() + REFRESH_TOKEN_SECONDS * 1000, retired: false, previous });
    return { access_token: token, scope: (shops.get(shop) ?? addShop({ domain: shop })).scopes, expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh, refresh_token_expires_in: REFRESH_TOKEN_SECONDS };
  };
  const shops = new Map<string, FakeShop>();
  const resolvers: { match: string; resolver: GraphqlResolver }[] = [];
  const buckets = new CostBuckets();
  const throttled: Record<string, number> = {};
  const answered: Record<string, number> = {};
  const costRefused: Record<string, number> = {};
  let maxCost: number | undefined;
  let builtInResolvers = 0;
  let latencyMs = options.latencyMs ?? 0;

  const addShop: FakeAdmin["addShop"] = (shop) => {
    const full: FakeShop = {
      name: shop.domain.replace(".myshopify.com", ""),
      currencyCode: "USD",
      primaryDomainUrl: `https://${shop.domain}`,
      ianaTimezone: "UTC",
      scopes: APP_SCOPES,
      segments: [],
      segmentMembers: {},
      ...shop,
    };
    shops.set(full.domain, full);
    return full;
  };

  resolvers.push({
    match: "shop {",
    resolver: (_q, _v, domain) => {
      const shop = shops.get(domain) ?? addShop({ domain });
      return {
        shop: {
          name: shop.name,
          myshopifyDomain: shop.domain,
          currencyCode: shop.currencyCode,
          primaryDomain: { url: shop.primaryDomainUrl },
          ianaTimezone: shop.ianaTimezone,
        },
      };
    },
  });

  // QueryRoot.segments: a connection in the default CREATION_DATE order (oldest first), `first`/`after`
  // (Shopify: one of first/last is required); cursors are opaque. Search `query` is not modelled.
  resolvers.push({
    match: "segments(",
    resolver: (_q, _v, domain) => {
      const shop = shops.get(domain) ?? addShop({ domain });
      return {
        segments: (args: { first?: number | null; last?: number | null; after?: string | null; reverse?: boolean | null }) => {
          if (args.first == null && args.last == null) throw new Error("you must provide one of first or last");
          const all = args.reverse ? [...shop.segments].reverse() : shop.segments;
          const start = args.after ? Number(Buffer.from(args.after, "base64url").toString()) + 1 : 0;
          const page = all.slice(start, start + (args.first ?? args.last ?? 0));
          const cursor = (i: number) => Buffer.from(String(start + i)).toString("base64url");
          return {
            nodes: page,
            edges: page.map((node, i) => ({ node, cursor: cursor(i) })),
            pageInfo: {
              hasNextPage: start + page.length < all.length,
              hasPreviousPage: start > 0,
              startCursor: page.length ? cursor(0) : null,
              endCursor: page.length ? cursor(page.length - 1) : null,
            },
          };
        },
      };
    },
  });

  // QueryRoot.segment(id:): the store's segment, or null for an id it does not have (Shopify's
  // answer for a well-formed id of no segment; the field is nullable).
  resolvers.push({
    match: "segment(id:",
    resolver: (_q, _v, domain) => {
      const shop = shops.get(domain) ?? addShop({ domain });
      return { segment: (args: { id?: string | null }) => shop.segments.find((seg) => seg.id === args.id) ?? null };
    },
  });

  // QueryRoot.customerSegmentMembers(segmentId:): a connection with totalCount; one of first/last is
  // required (Shopify refuses a query without either). A segment without a members list has none.
  resolvers.push({
    match: "customerSegmentMembers(",
    resolver: (_q, _v, domain) => {
      const shop = shops.get(domain) ?? addShop({ domain });
      return {
        customerSegmentMembers: (args: { segmentId?: string | null; first?: number | null; last?: number | null; after?: string | null }) => {
          if (args.first == null && args.last == null) throw new Error("you must provide one of first or last");
          // A segment the store does not have (deleted since it was picked) is an error, not an empty list.
          if (!shop.segments.some((seg) => seg.id === args.segmentId)) throw new Error(`Segment does not exist: ${args.segmentId}`);
          const all = shop.segmentMembers[args.segmentId ?? ""] ?? [];
          const start = args.after ? Number(Buffer.from(args.after, "base64url").toString()) + 1 : 0;
          const page = all.slice(start, start + (args.first ?? args.last ?? 0));
          const cursor = (i: number) => Buffer.from(String(start + i)).toString("base64url");
          return {
            totalCount: all.length,
            edges: page.map((n, i) => ({ node: { id: `gid://shopify/CustomerSegmentMember/${n}` }, cursor: cursor(i) })),
            pageInfo: {
              hasNextPage: start + page.length < all.length,
              hasPreviousPage: start > 0,
              startCursor: page.length ? cursor(0) : null,
              endCursor: page.length ? cursor(page.length - 1) : null,
            },
          };
        },
      };
    },
  });

  /** One GraphQL request as Shopify answers it (see fake-graphql.ts): always HTTP 200. */
  function graphql(shop: string, query: string, variables: Record<string, unknown>, operationName: string | null): unknown {
    const prepared = prepare(query, variables, operationName, maxCost);
    if (!("document" in prepared)) {
      if (prepared.errors.some((e) => (e.extensions as { code?: string } | undefined)?.code === "MAX_COST_EXCEEDED")) {
        const name = /(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? "anonymous";
        costRefused[name] = (costRefused[name] ?? 0) + 1;
      }
      return prepared;
    }
    const found = resolvers.filter((r) => query.includes(r.match)).at(-1);
    const name = found?.match ?? prepared.operationName ?? "anonymous";
    if (!buckets.take(shop, prepared.requested)) {
      throttled[name] = (throttled[name] ?? 0) + 1;
      return throttledBody(prepared.requested, buckets.status(shop));
    }
    if (!found) {
      buckets.refund(shop, prepared.requested);
      return { errors: [{ message: `fake admin: no resolver for ${query.slice(0, 80)}` }] };
    }
    const result = found.resolver(query, variables, shop);
    if (result instanceof GraphqlReply) {
      buckets.refund(shop, prepared.requested);
      return result.body;
    }
    answered[name] = (answered[name] ?? 0) + 1;
    const out = answer(prepared, variables, result);
    const actual = actualCost(prepared, variables, out.data);
    buckets.refund(shop, prepared.requested - actual);
    return { ...out, extensions: { cost: { requestedQueryCost: prepared.requested, actualQueryCost: actual, throttleStatus: buckets.status(shop) } } };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The Host header gives the address the caller used (the App Bridge stub calls back to it).
    const url = new URL(req.url ?? "/", `http://${header(req, "host") ?? "fake-admin"}`);
    const shop = url.searchParams.get("shop") ?? "";
    const raw = await readBody(req);
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const accessToken = header(req, "x-shopify-access-token");
    calls.push({ shop, path: url.pathname, body, accessToken });

    if (url.pathname === "/admin/oauth/access_token" && req.method === "POST") {
      if (body.client_id !== apiKey || body.client_secret !== apiSecret) {
        return json(res, 400, { error: "invalid_client" });
      }
      if (body.grant_type === "refresh_token") {
        // The previous refresh token stays usable until its replacement is first used (Shopify, 2026-08-28).
        const known = refreshTokens.get(String(body.refresh_token));
        if (!known || known.shop !== shop || known.retired || known.expiresAt <= Date.now()) return json(res, 400, { error: "invalid_grant" });
        if (known.previous) refreshTokens.get(known.previous)!.retired = true;
        return json(res, 200, expiringPair(shop, String(body.refresh_token)));
      }
      if (String(body.subject_token_type).endsWith(":offline-access-token")) {
        // Migration of a non-expiring offline token to an expiring pair.
        const subject = String(body.subject_token);
        if (!issued.has(subject) || expiresAt.has(subject) || body.expiring !== "1") return json(res, 400, { error: "invalid_subject_token" });
        return json(res, 200, expiringPair(shop));
      }
      try {
        const { payload } = await jwtVerify(String(body.subject_token), new TextEncoder().encode(apiSecret), {
          audience: apiKey,
        });
        if (payload.dest !== `https://${shop}`) return json(res, 400, { error: "invalid_subject_token" });
        const online = String(body.requested_token_type).endsWith(":online-access-token");
        if (!shops.has(shop)) addShop({ domain: shop });
        if (!online && body.expiring === "1") return json(res, 200, expiringPair(shop));
        const token = `shpat_fake_${online ? "online" : "offline"}_${crypto.randomUUID().replaceAll("-", "")}`;
        if (!online) tokens.set(shop, token);
        issued.add(token);
        shopOfToken.set(token, shop);
        if (!shops.has(shop)) addShop({ domain: shop });
        const scope = shops.get(shop)!.scopes;
        return json(
          res,
          200,
          online
            ? {
                access_token: token,
                scope,
                expires_in: 86_399,
                associated_user_scope: scope,
                associated_user: {
                  id: Number(payload.sub),
                  first_name: "Dana",
                  last_name: "Merchant",
                  email: "dana@example.com",
                  account_owner: true,
                  locale: "en",
                  collaborator: false,
                  email_verified: true,
                },
              }
            : { access_token: token, scope },
        );
      } catch {
        return json(res, 400, { error: "invalid_subject_token" });
      }
    }

    // What it received, like the emulator's /__emulator/requests: ?operation= and ?shop= narrow it.
    if (url.pathname === "/__requests" && req.method === "GET") {
      const operation = url.searchParams.get("operation");
      return json(res, 200, { data: requests.filter((r) => (!operation || r.operation === operation) && (!shop || r.shop === shop)) });
    }

    // The App Bridge stub and fresh session tokens are served always (tests drive a browser too).
    if (req.method === "GET") {
      const demo = await demoRoute(url, shop, options.demo?.appUrl, apiKey, apiSecret);
      if (demo) {
        res.writeHead(demo.status, demo.headers);
        res.end(demo.body);
        return;
      }
    }

    if (/^\/admin\/api\/[^/]+\/graphql\.json$/.test(url.pathname) && req.method === "POST") {
      if (!accessToken || !issued.has(accessToken) || (expiresAt.get(accessToken) ?? Infinity) <= Date.now()) {
        return json(res, 401, { errors: "[API] Invalid API key or access token (unrecognized login or wrong password)" });
      }
      const query = String(body.query ?? "");
      const variables = (body.variables ?? {}) as Record<string, unknown>;
      const operation = typeof body.operationName === "string" ? body.operationName : (/(?:query|mutation|subscription)\s+(\w+)/.exec(query)?.[1] ?? "anonymous");
      requests.push({ at: new Date().toISOString(), shop, operation, variables });
      if (latencyMs) await sleep(latencyMs);
      return json(res, 200, graphql(shop, query, variables, typeof body.operationName === "string" ? body.operationName : null));
    }
    return json(res, 404, { errors: "Not Found" });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { errors: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  const admin: FakeAdmin = {
    url: `http://127.0.0.1:${port}`,
    calls,
    requests,
    tokens,
    issued,
    expiresAt,
    issueOfflineToken: (shop) => expiringPair(shop),
    expireTokens: (shop) => {
      for (const [token, at] of expiresAt) if (at > Date.now() && shopOfToken.get(token) === shop) expiresAt.set(token, Date.now());
    },
    grantScopes: (shop, granted) => {
      (shops.get(shop) ?? addShop({ domain: shop })).scopes = granted.join(",");
    },
    uninstall: (shop) => {
      for (const [token, owner] of shopOfToken) if (owner === shop) issued.delete(token);
      for (const [refresh, r] of refreshTokens) if (r.shop === shop) refreshTokens.delete(refresh);
      forgetSubscriptions(admin, shop);
    },
    shops,
    addShop,
    onGraphql: (match, resolver) => resolvers.push({ match, resolver }),
    answerLate: (ms) => {
      latencyMs = ms;
    },
    reset: () => {
      latencyMs = options.latencyMs ?? 0;
      resolvers.length = builtInResolvers;
      buckets.reset();
      maxCost = undefined;
      calls.length = 0;
      requests.length = 0;
    },
    bucket: (shop) => buckets.status(shop),
    throttle: (bucket) => buckets.configure(bucket),
    limitQueryCost: (points) => {
      maxCost = points;
    },
    costRefused,
    throttled,
    answered,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  installStorefrontResolvers(admin);
  installWebhookSubscriptionResolvers(admin);
  installMarketingActivityResolvers(admin, (body) => new GraphqlReply(body));
  // The granted scopes (after the storefront's currentAppInstallation { id }: the last match answers).
  admin.onGraphql("accessScopes", (_q, _v, domain) => ({
    currentAppInstallation: { accessScopes: (shops.get(domain)?.scopes.split(",").filter(Boolean) ?? []).map((handle) => ({ handle })) },
  }));
  builtInResolvers = resolvers.length;
  return admin;
}

/**
 * Demo helpers standing in for the Shopify admin around the iframe (the CDN is unreachable here):
 * - /cdn/app-bridge.js: a stub of App Bridge that gives the app fresh session tokens and adds
 *   them to the app's own fetches, as the real one does;
 * - /demo/session-token?shop=: a fresh session token;
 * - /demo/open?shop=: opens the embedded app as the admin would, with an id_token.
 */
async function demoRoute(url: URL, shop: string, appUrl: string | undefined, apiKey: string, apiSecret: string) {
  const { mintSessionToken } = await import("./session-token");
  const token = () => mintSessionToken({ shop, apiKey, secret: apiSecret, expiresInSeconds: 300 });
  if (url.pathname === "/demo/session-token") {
    return { status: 200, headers: { "content-type": "text/plain", "access-control-allow-origin": "*" }, body: await token() };
  }
  if (url.pathname === "/demo/open" && appUrl) {
    const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
    const target = `${appUrl}/app?embedded=1&shop=${shop}&host=${host}&id_token=${await token()}`;
    return { status: 302, headers: { location: target }, body: "" };
  }
  if (url.pathname === "/cdn/app-bridge.js") {
    return { status: 200, headers: { "content-type": "text/javascript" }, body: appBridgeStub(url.origin) };
  }
  return undefined;
}

function appBridgeStub(origin: string): string {
  return `(() => {
  const params = new URLSearchParams(location.search);
  const shop = params.get("shop") || sessionStorage.getItem("demo-shop") || "";
  if (shop) sessionStorage.setItem("demo-shop", shop);
  const idToken = () => fetch(${JSON.stringify(origin)} + "/demo/session-token?shop=" + encodeURIComponent(shop)).then((r) => r.text());
  const nativeFetch = window.fetch.bind(window);
  window.fetch = async (input, init = {}) => {
    const url = new URL(typeof input === "string" ? input : input.url, location.href);
    if (url.origin !== location.origin) return nativeFetch(input, init);
    const headers = new Headers(init.headers || (typeof input === "string" ? undefined : input.headers));
    headers.set("Authorization", "Bearer " + (await idToken()));
    return nativeFetch(input, { ...init, headers });
  };
  // The real admin shows the nav menu and toasts outside the iframe; the stub draws them in the page.
  const style = document.createElement("style");
  style.textContent = \`
    ui-nav-menu { display: flex; flex-wrap: wrap; gap: 4px; padding: 8px 16px; background: #1a1a1a; position: sticky; top: 0; z-index: 500;
      font: 500 13px/20px -apple-system, BlinkMacSystemFont, "San Francisco", "Segoe UI", Roboto, sans-serif; }
    ui-nav-menu a { color: #e3e3e3; text-decoration: none; padding: 4px 10px; border-radius: 8px; }
    ui-nav-menu a:hover { background: #303030; }
    ui-nav-menu a[aria-current="page"], ui-nav-menu a.stub-active { background: #303030; color: #fff; }
    #stub-toast { position: fixed; left: 50%; bottom: 24px; transform: translateX(-50%); z-index: 1000; padding: 10px 16px;
      border-radius: 10px; background: #1a1a1a; color: #fff; font: 500 14px/20px -apple-system, "Segoe UI", Roboto, sans-serif;
      box-shadow: 0 8px 16px rgba(0,0,0,.2); }
    #stub-toast.error { background: #c70a24; }
    #stub-loading { position: fixed; top: 0; left: 0; height: 3px; width: 100%; background: #2c6ecb; z-index: 1001; }\`;
  document.head.appendChild(style);
  const markActive = () => document.querySelectorAll("ui-nav-menu a").forEach((a) => {
    const path = new URL(a.href, location.href).pathname;
    a.classList.toggle("stub-active", path === location.pathname);
  });
  setInterval(markActive, 300);
  const toasts = [];
  let toastTimer;
  window.shopify = {
    config: { shop, apiKey: document.currentScript && document.currentScript.dataset.apiKey },
    idToken,
    toast: {
      show: (message, opts = {}) => {
        console.info("[toast]", message);
        toasts.push(message);
        let el = document.getElementById("stub-toast");
        if (!el) { el = document.createElement("div"); el.id = "stub-toast"; el.setAttribute("role", "status"); document.body.appendChild(el); }
        el.textContent = message;
        el.className = opts.isError ? "error" : "";
        clearTimeout(toastTimer);
        toastTimer = setTimeout(() => el.remove(), opts.duration || 5000);
      },
      hide: () => document.getElementById("stub-toast")?.remove(),
    },
    /** what the stub showed, for browser tests */
    __toasts: toasts,
    /** how often the app called loading(): its layout does on mount, so a count above 0 means the page is hydrated */
    __loadingCalls: 0,
    loading: (on) => {
      window.shopify.__loadingCalls += 1;
      let el = document.getElementById("stub-loading");
      if (on && !el) { el = document.createElement("div"); el.id = "stub-loading"; document.body.appendChild(el); }
      if (!on && el) el.remove();
    },
    ready: Promise.resolve(),
  };
})();`;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
