import { isIP } from "node:net";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { readBodyLimited } from "./body.server";
import { authenticate } from "../shopify.server";
import { STOREFRONT_POLICY } from "../storefront/storefront-policy";
import { receiveStorefrontEvent } from "../storefront/events.server";

/**
 * The app proxy's storefront-event endpoint (POST /apps/marketing-sync/events on the shop, which
 * Shopify forwards, signed, to /proxy/events): signature → 401, body bound and zod → 400,
 * rate limits (address, shop, visitor) → 429, then the event is queued. The route's one entry.
 */
export async function handleProxyEvent(request: Request): Promise<Response> {
  // A ?shop=… put in front of a genuine request must not choose the shop the app acts for. Shopify's
  // library refuses repeated signed parameters too (since shopify-api 14); this answers 400 first.
  const query = new URL(request.url).searchParams;
  const repeated = PROXY_PARAMS.find((name) => query.getAll(name).length > 1);
  if (repeated) return json(400, { error: `Repeated query parameter ${repeated}` });
  try {
    // Shopify's own check of the proxy signature (query params, timestamp within 90 s).
    await authenticate.public.appProxy(request);
  } catch (error) {
    if (error instanceof Response) return json(401, { error: "Invalid or missing app proxy signature" });
    throw error;
  }
  const url = new URL(request.url);
  const shop = url.searchParams.get("shop") ?? "";
  const read = await readBodyLimited(request, STOREFRONT_POLICY.maxEventBytes);
  if (!read.ok) {
    logger().warn({ shop, refusal: read.refusal }, "storefront event refused: body not read");
    if (read.refusal === "busy") return json(503, { error: "Busy, try again later" }, { connection: "close", "retry-after": "5" });
    if (read.refusal === "too-slow") return json(408, { error: "Body not received in time" }, { connection: "close" });
    return json(400, { error: `Body larger than ${STOREFRONT_POLICY.maxEventBytes} bytes` }, { connection: "close" });
  }
  const body = read.body.toString("utf8");
  const outcome = await receiveStorefrontEvent({
    shop,
    loggedInCustomerId: url.searchParams.get("logged_in_customer_id") || null,
    rawBody: body,
    clientIp: clientIpOf(request.headers),
  });
  if (outcome.status === 400) logger().info({ shop, error: outcome.body.error }, "storefront event refused");
  return json(outcome.status, outcome.body, outcome.status === 429 ? { "retry-after": String(outcome.retryAfterSeconds) } : {});
}

/** The parameters Shopify's proxy adds and signs: each must appear once. */
const PROXY_PARAMS = ["shop", "logged_in_customer_id", "path_prefix", "timestamp", "signature"];

/**
 * The visitor's address as Shopify saw it. Shopify's proxy puts the address that connected to it
 * in X-Forwarded-For; a client may send its own X-Forwarded-For, and proxies that append keep
 * that in front, so only the entries from the right are trustworthy: Shopify's is the last one,
 * or the one before the TRUSTED_PROXY_HOPS entries the app's own proxies append. No
 * address there → null (such requests share one window).
 */
function clientIpOf(headers: Headers): string | null {
  const entries = (headers.get("x-forwarded-for") ?? "").split(",").map((e) => e.trim());
  const entry = entries.at(-1 - config().trustedProxyHops) ?? "";
  // A port is no part of the address: `[v6]:port`, `v4:port`.
  const address = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)?.[1] ?? /^([\d.]+):\d+$/.exec(entry)?.[1] ?? entry;
  return isIP(address) ? address.toLowerCase() : null;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  // No-store: answers differ per visitor and must not be cached by the proxy.
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });
}
