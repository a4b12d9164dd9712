// Webhook helpers with the test app's secret filled in (the signing itself lives in dev/shopify).
import * as shopify from "../../dev/shopify/webhooks";
import { TEST_API_SECRET } from "./env";

export { FIXTURES_DIR, fixture } from "../../dev/shopify/webhooks";
export type TestWebhookDelivery = Omit<shopify.WebhookDelivery, "secret"> & { secret?: string };

export const signBody = (rawBody: string, secret = TEST_API_SECRET) => shopify.signBody(rawBody, secret);

export const webhookHeaders = (d: TestWebhookDelivery & { body: string }) =>
  shopify.webhookHeaders({ ...d, secret: d.secret ?? TEST_API_SECRET });

export const sendWebhook = (appUrl: string, d: TestWebhookDelivery) =>
  shopify.sendWebhook(appUrl, { ...d, secret: d.secret ?? TEST_API_SECRET });
