import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { jwtVerify } from "jose";
import { installStorefrontResolvers } from "./fake-storefront";

/**
 * A small fake of the Shopify Admin API for tests and the demo: OAuth token exchange and
 * GraphQL. The app reaches it instead of https://<shop>.myshopify.com when SHOPIFY_ADMIN_API_ORIGIN
 * is set (see app/shopify.server.ts, which passes the shop as ?shop=).
 */

export interface AdminCall {
  shop: string;
  path: string;
  body: unknown;
  accessToken?: string;
}

export type GraphqlResolver = (query: string, variables: Record<string, unknown>, shop: string) => unknown;

/** A resolver's whole answer (errors, extensions) instead of `{ data: <result> }`. */
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
}

export interface FakeAdmin {
  url: string;
  calls: AdminCall[];
  /** The latest offline access token handed out, by shop. */
  tokens: Map<string, string>;
  /** Every access token handed out (valid until the app is uninstalled from its shop, as Shopify's). */
  issued: Set<string>;
  /** The access scopes granted per shop (currentAppInstallation.accessScopes); a test may change them. */
  scopes: Map<string, string[]>;
  /** The merchant uninstalls the app: Shopify revokes every token of the shop (the Admin API answers 401). */
  uninstall(shop: string): void;
  shops: Map<string, FakeShop>;
  addShop(shop: Partial<FakeShop> & { domain: string }): FakeShop;
  /** Answers GraphQL operations whose query contains `match`. */
  onGraphql(match: string, resolver: GraphqlResolver): void;
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
  },
): Promise<FakeAdmin> {
  const { apiKey, apiSecret } = options;
  const calls: AdminCall[] = [];
  const tokens = new Map<string, string>();
  const issued = new Set<string>();
  const tokenShops = new Map<string, string>();
  const scopes = new Map<string, string[]>();
  const shops = new Map<string, FakeShop>();
  const resolvers: { match: string; resolver: GraphqlResolver }[] = [];

  const addShop: FakeAdmin["addShop"] = (shop) => {
    const full: FakeShop = {
      name: shop.domain.replace(".myshopify.com", ""),
      currencyCode: "USD",
      primaryDomainUrl: `https://${shop.domain}`,
      ianaTimezone: "UTC",
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
      try {
        const { payload } = await jwtVerify(String(body.subject_token), new TextEncoder().encode(apiSecret), {
          audience: apiKey,
        });
        if (payload.dest !== `https://${shop}`) return json(res, 400, { error: "invalid_subject_token" });
        const online = String(body.requested_token_type).endsWith(":online-access-token");
        const token = `shpat_fake_${online ? "online" : "offline"}_${crypto.randomUUID().replaceAll("-", "")}`;
        if (!online) tokens.set(shop, token);
        issued.add(token);
        tokenShops.set(token, shop);
        if (!shops.has(shop)) addShop({ domain: shop });
        const scope = "read_customers,write_customers,read_orders,read_products,read_checkouts";
        if (!scopes.has(shop)) scopes.set(shop, scope.split(","));
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
      if (!accessToken || !issued.has(accessToken)) {
        return json(res, 401, { errors: "[API] Invalid API key or access token (unrecognized login or wrong password)" });
      }
      const query = String(body.query ?? "");
      const variables = (body.variables ?? {}) as Record<string, unknown>;
      const found = resolvers.filter((r) => query.includes(r.match)).at(-1);
      if (!found) return json(res, 200, { errors: [{ message: `fake admin: no resolver for ${query.slice(0, 80)}` }] });
      const result = found.resolver(query, variables, shop);
      return json(res, 200, result instanceof GraphqlReply ? result.body : { data: result });
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
    tokens,
    issued,
    scopes,
    uninstall: (shop) => {
      for (const [token, owner] of tokenShops) if (owner === shop) issued.delete(token);
    },
    shops,
    addShop,
    onGraphql: (match, resolver) => resolvers.push({ match, resolver }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  installStorefrontResolvers(admin);
  // The granted scopes (after the storefront's currentAppInstallation { id }: the last match answers).
  admin.onGraphql("accessScopes", (_q, _v, domain) => ({
    currentAppInstallation: { accessScopes: (scopes.get(domain) ?? []).map((handle) => ({ handle })) },
  }));
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
    ui-nav-menu { display: flex; gap: 4px; padding: 8px 16px; background: #1a1a1a; position: sticky; top: 0; z-index: 500;
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
    loading: (on) => {
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
