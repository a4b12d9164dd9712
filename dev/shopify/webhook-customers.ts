import { parse } from "lossless-json";
import type { FakeAdmin } from "./fake-admin";

/**
 * Shopify's store behind the fake Admin holds the customers whose webhooks were sent for a shop,
 * with the email consent they carried, and answers the app's `ConsentOrigin` read from them, as
 * the real store would (app/compliance/consent-origin.server.ts confirms subscribed consent so).
 * Customer ids are Shopify-wide: a body sent under another shop is that shop's record only.
 * Returns the function that records a delivery before it is sent.
 */
export function answerConsentFromWebhooks(admin: Pick<FakeAdmin, "onGraphql">): (delivery: { topic: string; shop: string; body: string | object }) => void {
  const consentByShopCustomer = new Map<string, string>();
  admin.onGraphql("ConsentOrigin", (_query, variables, shop) => {
    const state = consentByShopCustomer.get(`${shop}|${String(variables.id)}`);
    return { customer: state ? { id: variables.id, defaultEmailAddress: { marketingState: state } } : null };
  });
  return (delivery) => {
    if (!delivery.topic.startsWith("customers")) return;
    let body: Record<string, unknown>;
    try {
      // Lossless: customer ids pass 2^53.
      body = (typeof delivery.body === "string" ? parse(delivery.body) : delivery.body) as Record<string, unknown>;
    } catch {
      return; // not JSON: nothing to record
    }
    const consent = (body.email_marketing_consent as { state?: unknown } | null | undefined)?.state;
    const gid =
      body.admin_graphql_api_customer_id ??
      body.admin_graphql_api_id ??
      `gid://shopify/Customer/${String(body.customer_id ?? body.id)}`;
    if (typeof consent === "string") consentByShopCustomer.set(`${delivery.shop}|${String(gid)}`, consent.toUpperCase());
  };
}
