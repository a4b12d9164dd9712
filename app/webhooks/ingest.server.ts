import { webhooksAnswered } from "../observability/metrics.server";
import { logger } from "../logger.server";
import type { VerifiedDelivery } from "../pipeline/delivery";
import { recordDelivery } from "../pipeline/record.server";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  fetchWebhookRequest,
  nodeWebhookRequest,
  verifyWebhook,
  WebhookRejection,
  type HeaderSource,
  type WebhookRequest,
} from "./receive.server";

/** What to answer Shopify: a status, a short reason, and whether to close the connection. */
interface WebhookAnswer {
  status: number;
  body: string | null;
  /** A body left unread (413, 408, 503 busy) would hold the keep-alive connection. */
  close: boolean;
}

/**
 * Authenticates a delivery, records it with the work it implies, and says what to answer. No
 * call to the marketing service happens here: the worker does that.
 */
async function answerWebhook(request: WebhookRequest): Promise<WebhookAnswer> {
  try {
    await acknowledge(await verifyWebhook(request));
    webhooksAnswered.inc({ status: "200" });
    return { status: 200, body: null, close: false };
  } catch (error) {
    const { status, body } = answerFor(error, request.headers);
    webhooksAnswered.inc({ status: String(status) });
    return { status, body, close: status === 413 || status === 408 || (status === 503 && error instanceof WebhookRejection) };
  }
}

/** The Remix route's entry (app/routes/webhooks.tsx): where no Express server is in front (the dev server). */
export async function receiveWebhook(request: Request): Promise<Response> {
  const answer = await answerWebhook(fetchWebhookRequest(request));
  return new Response(answer.body, { status: answer.status, headers: answer.close ? { connection: "close" } : undefined });
}

/**
 * The production server's entry (app/server/http.server.ts), in front of Remix. A Fetch Request
 * costs more than its CPU: each holds AbortSignals behind WeakRefs that survive young-generation
 * collections, so every acknowledgement left old-generation garbage and longer pauses (measured
 * 2026-11-25, commit 08de591).
 */
export function receiveNodeWebhook(req: IncomingMessage, res: ServerResponse, next: (error: unknown) => void): void {
  answerWebhook(nodeWebhookRequest(req)).then((answer) => {
    res.writeHead(answer.status, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(answer.body ?? ""),
      ...(answer.close ? { connection: "close" } : {}),
    });
    res.end(answer.body ?? undefined);
  }, next);
}

async function acknowledge(delivery: VerifiedDelivery): Promise<void> {
  const result = await recordDelivery(delivery);
  if (result === "unknown-shop") throw new WebhookRejection(404, "Shop not installed");
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
