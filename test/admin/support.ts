import { decode } from "turbo-stream";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

/** How a request presents itself: a valid session token, or a broken one. */
export type TokenKind = "valid" | "forged" | "expired" | "wrong-audience";

export async function tokenFor(shop: string, kind: TokenKind = "valid"): Promise<string> {
  switch (kind) {
    case "forged":
      return mintSessionToken({ shop, secret: "someone-elses-secret-123" });
    case "expired":
      return mintSessionToken({ shop, overrides: { exp: Math.floor(Date.now() / 1000) - 120, nbf: Math.floor(Date.now() / 1000) - 300, iat: Math.floor(Date.now() / 1000) - 300 } });
    case "wrong-audience":
      return mintSessionToken({ shop, overrides: { aud: "another-apps-client-id" } });
    default:
      return mintSessionToken({ shop });
  }
}

/** The embedded admin's first load of a page: a document request with id_token, as Shopify opens it. */
export async function openPage(appUrl: string, shop: string, path: string): Promise<Response> {
  const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
  const sep = path.includes("?") ? "&" : "?";
  const url = `${appUrl}${path}${sep}embedded=1&shop=${shop}&host=${host}&id_token=${await tokenFor(shop)}`;
  return fetch(url, { headers: { "user-agent": CHROME_UA }, redirect: "manual" });
}

/** Decodes a Remix single-fetch body (turbo-stream). */
export async function decodeBody(res: Response): Promise<unknown> {
  if (!res.body) return undefined;
  const decoded = await decode(res.body as ReadableStream<Uint8Array>);
  await decoded.done;
  return decoded.value;
}

/** A client-side data request, as the app's own fetches send it (App Bridge adds the bearer token). */
export async function loadData(appUrl: string, shop: string, path: string, token: TokenKind = "valid"): Promise<Response> {
  const [p, q] = path.split("?");
  const url = `${appUrl}${p}.data${q ? `?${q}` : ""}`;
  return fetch(url, { headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await tokenFor(shop, token)}` } });
}

/** The loader data of one route from a single-fetch response. */
export async function routeData<T = Record<string, unknown>>(res: Response, route: string): Promise<T> {
  const body = (await decodeBody(res)) as Record<string, { data?: unknown; error?: unknown }>;
  const entry = body[route];
  if (!entry || !("data" in entry)) throw new Error(`no data for ${route}: ${JSON.stringify(body).slice(0, 300)}`);
  return entry.data as T;
}

/** A form post to a page's action, as Remix's <Form> sends it. */
export async function postForm(appUrl: string, shop: string, path: string, fields: Record<string, string>, token: TokenKind = "valid"): Promise<Response> {
  return fetch(`${appUrl}${path}.data`, {
    method: "POST",
    headers: {
      "user-agent": CHROME_UA,
      authorization: `Bearer ${await tokenFor(shop, token)}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The action's result from a single-fetch action response. */
export async function actionData<T = Record<string, unknown>>(res: Response): Promise<T> {
  const body = (await decodeBody(res)) as { data?: unknown };
  if (!body || !("data" in body)) throw new Error(`no action data: ${JSON.stringify(body).slice(0, 300)}`);
  return body.data as T;
}
