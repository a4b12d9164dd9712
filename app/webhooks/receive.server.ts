import { createHmac, timingSafeEqual } from "node:crypto";
import { config } from "../config.server";
import { logger } from "../logger.server";

/** Shopify sends small bodies; anything much larger is not a real delivery. */
export const MAX_WEBHOOK_BYTES = 2 * 1024 * 1024;

const REQUIRED_HEADERS = ["x-shopify-topic", "x-shopify-hmac-sha256", "x-shopify-shop-domain", "x-shopify-webhook-id"];

export interface VerifiedDelivery {
  shop: string;
  topic: string;
  webhookId: string;
  eventId: string | null;
  triggeredAt: string | null;
  apiVersion: string | null;
  rawBody: string;
}

/** A delivery that is not genuine or not well-formed, with the status to answer. */
export class WebhookRejection extends Error {
  constructor(
    readonly status: 400 | 401 | 405 | 413,
    message: string,
  ) {
    super(message);
    this.name = "WebhookRejection";
  }
}

export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * Reads and authenticates one webhook delivery from a Fetch Request (the Remix route). Throws a
 * WebhookRejection for anything that is not a genuine, well-formed delivery.
 */
export async function verifyWebhook(request: Request): Promise<VerifiedDelivery> {
  if (request.method !== "POST") throw new WebhookRejection(405, "Method not allowed");
  checkHeaders(request.headers);
  return verifyDelivery(request.headers, await readBodyWithLimit(request, MAX_WEBHOOK_BYTES));
}

/** 400 when a header Shopify always sends is missing, 413 when the declared size is too large. */
export function checkHeaders(headers: HeaderSource): void {
  const missing = REQUIRED_HEADERS.filter((h) => !headers.get(h));
  if (missing.length) throw new WebhookRejection(400, `Missing header ${missing.join(", ")}`);
  if (Number(headers.get("content-length") ?? 0) > MAX_WEBHOOK_BYTES) throw new WebhookRejection(413, "Payload too large");
}

/** Authenticates a delivery whose headers passed checkHeaders and whose body has been read. */
export function verifyDelivery(headers: HeaderSource, rawBody: string): VerifiedDelivery {
  if (!validHmac(rawBody, headers.get("x-shopify-hmac-sha256")!, config().apiSecret)) {
    logger().warn({ shop: headers.get("x-shopify-shop-domain"), topic: headers.get("x-shopify-topic") }, "webhook HMAC rejected");
    throw new WebhookRejection(401, "Unauthorized");
  }
  return {
    shop: headers.get("x-shopify-shop-domain")!,
    topic: headers.get("x-shopify-topic")!,
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
export function validHmac(rawBody: string, hmacHeader: string, secret: string): boolean {
  const expected = createHmac("sha256", secret).update(rawBody, "utf8").digest();
  const given = Buffer.from(hmacHeader, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readBodyWithLimit(request: Request, limit: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new WebhookRejection(413, "Payload too large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
