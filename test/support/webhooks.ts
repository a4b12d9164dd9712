import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { TEST_API_SECRET } from "./env";

export const FIXTURES_DIR = path.resolve(import.meta.dirname, "../../../shared/fixtures/shopify-webhooks");

/** A documented sample body, e.g. fixture("orders/create"). */
export function fixture(topic: string): string {
  return readFileSync(path.join(FIXTURES_DIR, `${topic.replace("/", ".")}.json`), "utf8");
}

export function signBody(rawBody: string, secret = TEST_API_SECRET): string {
  return createHmac("sha256", secret).update(rawBody, "utf8").digest("base64");
}

export interface WebhookDelivery {
  topic: string;
  shop: string;
  body: string | object;
  secret?: string;
  webhookId?: string;
  eventId?: string;
  triggeredAt?: string;
  apiVersion?: string;
  /** Replace or drop (undefined) any header, to build broken deliveries. */
  headers?: Record<string, string | undefined>;
}

/** The headers Shopify sends with a delivery, HMAC included. */
export function webhookHeaders(d: WebhookDelivery & { body: string }): Record<string, string> {
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json",
    "x-shopify-topic": d.topic,
    "x-shopify-hmac-sha256": signBody(d.body, d.secret),
    "x-shopify-shop-domain": d.shop,
    "x-shopify-api-version": d.apiVersion ?? "2026-04",
    "x-shopify-webhook-id": d.webhookId ?? randomUUID(),
    "x-shopify-event-id": d.eventId ?? randomUUID(),
    "x-shopify-triggered-at": d.triggeredAt ?? new Date().toISOString(),
    "user-agent": "Shopify-Captain-Hook",
    ...d.headers,
  };
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Signs and POSTs a delivery to the app over HTTP, exactly as Shopify does. */
export async function sendWebhook(appUrl: string, delivery: WebhookDelivery): Promise<Response> {
  const body = typeof delivery.body === "string" ? delivery.body : JSON.stringify(delivery.body);
  return fetch(new URL("/webhooks", appUrl), {
    method: "POST",
    headers: webhookHeaders({ ...delivery, body }),
    body,
  });
}
