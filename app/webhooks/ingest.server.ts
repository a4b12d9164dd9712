import { logger } from "../logger.server";
import { recordDelivery } from "../pipeline/ingest.server";
import { topicInfo } from "../topics";
import {
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
    await acknowledge(await verifyWebhook(request));
    return new Response(null, { status: 200 });
  } catch (error) {
    const { status, body } = answerFor(error, request.headers);
    // A body left unread would hold the keep-alive connection: close it after answering.
    return new Response(body, { status, headers: status === 413 ? { connection: "close" } : undefined });
  }
}

async function acknowledge(delivery: VerifiedDelivery): Promise<void> {
  const result = await recordDelivery(delivery);
  if (result === "unknown-shop" && topicInfo(delivery.topic)?.role === "compliance") {
    // Nothing is stored about a shop the app does not know (or already purged): the request is
    // fulfilled as it stands, and answering 200 stops Shopify retrying it for days.
    logger().info({ shop: delivery.shop, topic: delivery.topic }, "compliance request for a shop with no data");
    return;
  }
  if (result === "unknown-shop") {
    throw new WebhookRejection(404, "Shop not installed");
  }
  logger().debug({ shop: delivery.shop, topic: delivery.topic, eventId: delivery.eventId, result }, "webhook recorded");
}

/**
 * A rejection's status and reason. Anything else is a failure on our side (the database, say):
 * logged with its stack, answered 503 without detail so that Shopify retries.
 */
function answerFor(error: unknown, headers: HeaderSource): { status: number; body: string } {
  if (error instanceof WebhookRejection) {
    // Every refusal is logged once, with its reason (the headers are as sent: cut short).
    logger().warn(
      { status: error.status, reason: error.message, shop: headers.get("x-shopify-shop-domain")?.slice(0, 100), topic: headers.get("x-shopify-topic")?.slice(0, 100) },
      "webhook rejected",
    );
    return { status: error.status, body: error.message };
  }
  logger().error({ err: error, shop: headers.get("x-shopify-shop-domain")?.slice(0, 255), topic: headers.get("x-shopify-topic")?.slice(0, 100) }, "webhook could not be recorded");
  return { status: 503, body: "Temporarily unavailable" };
}
