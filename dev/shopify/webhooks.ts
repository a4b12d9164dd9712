import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { getHmac } from "@shopify/shopify-api/test-helpers";

/** Shopify's documented sample bodies, copied into the project (see its README). */
export const FIXTURES_DIR = path.resolve(import.meta.dirname, "../../test/fixtures/shopify-webhooks");

/** A documented sample body, e.g. fixture("orders/create"). */
export function fixture(topic: string): string {
  return readFileSync(path.join(FIXTURES_DIR, `${topic.replace("/", ".")}.json`), "utf8");
}

export function signBody(rawBody: string, secret: string): string {
  return getHmac(rawBody, secret);
}

export interface WebhookDelivery {
  topic: string;
  shop: string;
  body: string | object;
  /** The app secret that signs the body. */
  secret: string;
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
    "x-shopify-api-version": d.apiVersion ?? "2026-10",
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
