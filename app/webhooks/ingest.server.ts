import { logger } from "../logger.server";
import { recordDelivery } from "../pipeline/ingest.server";
import {
  checkHeaders,
  verifyDelivery,
  verifyWebhook,
  WebhookRejection,
  type HeaderSource,
  type VerifiedDelivery,
} from "./receive.server";

/**
 * Authenticates a delivery, records it with the work it implies, and acknowledges it. No call to
 * the marketing service happens here: the worker does that. The Remix route's entry.
 */
export async function receiveWebhook(request: Request): Promise<Response> {
  try {
    return await acknowledge(await verifyWebhook(request));
  } catch (error) {
    if (error instanceof WebhookRejection) {
      // A body left unread would hold the keep-alive connection: close it after answering.
      const headers = error.status === 413 ? { connection: "close" } : undefined;
      return new Response(error.message, { status: error.status, headers });
    }
    throw error;
  }
}

/**
 * The same for a body already read: the production server's fast path, mounted in front of Remix
 * (Remix's per-request machinery cost more than the whole acknowledgement). Returns the status.
 */
export async function receiveRawWebhook(headers: HeaderSource, rawBody: string): Promise<{ status: number; body: string }> {
  try {
    checkHeaders(headers);
    await acknowledge(verifyDelivery(headers, rawBody));
    return { status: 200, body: "" };
  } catch (error) {
    if (error instanceof WebhookRejection) return { status: error.status, body: error.message };
    throw error;
  }
}

async function acknowledge(delivery: VerifiedDelivery): Promise<Response> {
  const result = await recordDelivery(delivery);
  logger().debug({ shop: delivery.shop, topic: delivery.topic, eventId: delivery.eventId, result }, "webhook recorded");
  return new Response(null, { status: 200 });
}
