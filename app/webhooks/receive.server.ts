import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { readBodyLimited, readNodeBodyLimited, type LimitedBody } from "../server/body.server";
import { config } from "../config.server";
import { bodyShopFields, isKnownTopic, normalizeTopic, topicInfo } from "../sync/topics.server";
// What verification yields, and all it yields: the record the pipeline keeps, no headers.
import type { VerifiedDelivery } from "../pipeline/delivery";

/** Shopify sends small bodies; anything much larger is not a real delivery. */
export const MAX_WEBHOOK_BYTES = 2 * 1024 * 1024;

const REQUIRED_HEADERS = ["x-shopify-topic", "x-shopify-hmac-sha256", "x-shopify-shop-domain", "x-shopify-webhook-id"];
/** Upper bounds for the headers we keep: Shopify's are far shorter, anything longer is forged. */
const HEADER_LIMITS: Record<string, number> = {
  "x-shopify-topic": 100,
  "x-shopify-hmac-sha256": 100,
  "x-shopify-shop-domain": 255,
  "x-shopify-webhook-id": 200,
  "x-shopify-event-id": 200,
  "x-shopify-triggered-at": 64,
  "x-shopify-api-version": 32,
};
/** A shop's permanent domain: what Shopify puts in X-Shopify-Shop-Domain. */
export const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/;

/** A delivery that is not genuine or not well-formed, with the status to answer. */
export class WebhookRejection extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 405 | 408 | 413 | 503,
    message: string,
  ) {
    super(message);
    this.name = "WebhookRejection";
  }
}

export interface HeaderSource {
  get(name: string): string | null;
}

/** One request as both transports give it: the Remix route's Fetch Request, or Node's (Express). */
export interface WebhookRequest {
  method: string;
  headers: HeaderSource;
  /** The body up to `limit` bytes, or why it was not read (app/server/body.server.ts). */
  readBody(limit: number): Promise<LimitedBody>;
}

export const fetchWebhookRequest = (request: Request): WebhookRequest => ({
  method: request.method,
  headers: request.headers,
  readBody: (limit) => readBodyLimited(request, limit),
});

export const nodeWebhookRequest = (req: IncomingMessage): WebhookRequest => ({
  method: req.method ?? "",
  // Node joins a repeated header with ", " as Fetch's Headers do.
  headers: { get: (name) => nodeHeader(req.headers[name]) },
  readBody: (limit) => readNodeBodyLimited(req, limit),
});

const nodeHeader = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;

/**
 * Reads and authenticates one webhook delivery. Throws a WebhookRejection for anything that is
 * not a genuine, well-formed delivery.
 */
export async function verifyWebhook(request: WebhookRequest): Promise<VerifiedDelivery> {
  if (request.method !== "POST") throw new WebhookRejection(405, "Method not allowed");
  checkHeaders(request.headers);
  const read = await request.readBody(MAX_WEBHOOK_BYTES);
  if (!read.ok) {
    // Busy: too much is being read at once (a flood of uploads); Shopify retries a 503 later.
    if (read.refusal === "busy") throw new WebhookRejection(503, "Busy, try again later");
    if (read.refusal === "too-slow") throw new WebhookRejection(408, "Body not received in time");
    throw new WebhookRejection(413, "Payload too large");
  }
  return verifyDelivery(request.headers, read.body);
}

/**
 * 400 when a header Shopify always sends is missing, too long, or not of Shopify's form (the shop
 * domain, the topic); 413 when the declared size is too large. Nothing here is trusted yet.
 */
export function checkHeaders(headers: HeaderSource): void {
  const missing = REQUIRED_HEADERS.filter((h) => !headers.get(h));
  if (missing.length) throw new WebhookRejection(400, `Missing header ${missing.join(", ")}`);
  for (const [name, limit] of Object.entries(HEADER_LIMITS)) {
    if ((headers.get(name)?.length ?? 0) > limit) throw new WebhookRejection(400, `Header ${name} is too long`);
  }
  if (!SHOP_DOMAIN.test(headers.get("x-shopify-shop-domain")!)) throw new WebhookRejection(400, "Header x-shopify-shop-domain is not a myshopify.com domain");
  if (!isKnownTopic(headers.get("x-shopify-topic")!)) throw new WebhookRejection(400, "Header x-shopify-topic is not a subscribed topic");
  const length = headers.get("content-length");
  if (length !== null && !/^\d{1,12}$/.test(length)) throw new WebhookRejection(400, "Header content-length is not a number");
  if (Number(length ?? 0) > MAX_WEBHOOK_BYTES) throw new WebhookRejection(413, "Payload too large");
}

/**
 * Authenticates a delivery whose headers passed checkHeaders: the HMAC over the bytes as received
 * (with the current app secret, or the previous one during a rotation), then the body's own
 * statement of its shop for the topics that act on a whole shop or a person.
 */
export function verifyDelivery(headers: HeaderSource, rawBytes: Buffer | string): VerifiedDelivery {
  const bytes = typeof rawBytes === "string" ? Buffer.from(rawBytes, "utf8") : rawBytes;
  const shop = headers.get("x-shopify-shop-domain")!;
  const topic = headers.get("x-shopify-topic")!;
  const cfg = config();
  const hmac = headers.get("x-shopify-hmac-sha256")!;
  if (!validHmac(bytes, hmac, cfg.apiSecret) && !(cfg.apiSecretPrevious && validHmac(bytes, hmac, cfg.apiSecretPrevious))) {
    throw new WebhookRejection(401, "Unauthorized");
  }
  const rawBody = decodeBody(bytes);
  const mismatch = bodyShopMismatch(topic, rawBody, shop);
  if (mismatch) {
    throw new WebhookRejection(400, mismatch);
  }
  return {
    shop,
    topic,
    webhookId: headers.get("x-shopify-webhook-id")!,
    eventId: headers.get("x-shopify-event-id"),
    triggeredAt: headers.get("x-shopify-triggered-at"),
    apiVersion: headers.get("x-shopify-api-version"),
    rawBody,
  };
}

/**
 * Shopify's documented check: base64 HMAC-SHA256 of the raw body with the app secret. Done here
 * rather than through authenticate.webhook() because that one JSON.parses the body (losing ids
 * beyond 2^53) and loads the shop session, neither of which acknowledging needs.
 */
export function validHmac(rawBody: Buffer | string, hmacHeader: string, secret: string): boolean {
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  const given = Buffer.from(hmacHeader, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text; bytes that are not UTF-8, or a NUL (which no database text column holds), are refused. */
function decodeBody(bytes: Buffer): string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new WebhookRejection(400, "Body is not UTF-8");
  }
  if (text.includes("\u0000")) throw new WebhookRejection(400, "Body contains a NUL character");
  return text;
}

// Keys that only the other customer privacy request carries: a signed data request re-sent as a
// redaction (which deletes the customer's rows and the contact) is refused, and the reverse.
const OTHER_REQUEST_KEYS: Record<string, string[]> = {
  "customers/redact": ["data_request", "orders_requested"],
  "customers/data_request": ["orders_to_redact"],
};

/** Top-level fields that name the shop in any topic's body, compared with the header wherever present. */
const ANY_TOPIC_SHOP_FIELDS = ["shop_domain", "myshopify_domain"];

/** Why the body contradicts the header shop (or cannot vouch for it), else undefined. */
export function bodyShopMismatch(topic: string, rawBody: string, shop: string): string | undefined {
  const role = topicInfo(topic)?.role;
  const name = normalizeTopic(topic);
  if (name === "customers/delete") return notACustomer(rawBody);
  const sync = role !== "lifecycle" && role !== "compliance";
  // The acknowledgement's hot path: a sync body is parsed here only if it may name a shop.
  if (sync && !ANY_TOPIC_SHOP_FIELDS.some((f) => rawBody.includes(`"${f}"`))) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    // Sync topics: planning records it as invalid, with the parser's reason.
    return sync ? undefined : "Body is not valid JSON";
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) return sync ? undefined : "Body is not a JSON object";
  const record = body as Record<string, unknown>;
  const fields = sync ? ANY_TOPIC_SHOP_FIELDS : bodyShopFields(name);
  const foreign = (OTHER_REQUEST_KEYS[name] ?? []).find((k) => Object.hasOwn(record, k));
  if (foreign) return `Body is not a ${name} request (it carries ${foreign})`;
  const named = fields.map((f) => record[f]).filter((v): v is string => typeof v === "string" && v.endsWith(".myshopify.com"));
  if (named.some((d) => d.toLowerCase() !== shop)) return "Body names another shop than the header";
  // The lifecycle topics may name no shop (app/scopes_update never does; Shopify's 2026-04
  // app/uninstalled sample has both domains null): they are acted on only as Shopify confirms
  // them with the shop's own token (app/shops/installation.server.ts), so a genuine one is never refused.
  if (!named.length && role === "compliance") return "Body does not name the shop";
  return undefined;
}

/**
 * customers/delete deletes a person: another object's signed body (an order, whose id may match a
 * customer's) re-sent under this topic is refused by its own admin_graphql_api_id, and a live
 * customer's record by its created_at.
 */
function notACustomer(rawBody: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return undefined; // planning records it as invalid, with the parser's reason
  }
  if (!body || typeof body !== "object") return undefined;
  const { admin_graphql_api_id: gid, created_at: createdAt } = body as Record<string, unknown>;
  if (typeof gid === "string" && !gid.startsWith("gid://shopify/Customer/")) return "Body is not a customer";
  // A deletion carries the id and little else; a customer's whole record (a create or update body,
  // which has its creation time) re-sent under this topic would delete a live customer.
  return typeof createdAt === "string" ? "Body is a customer record, not a deletion" : undefined;
}

