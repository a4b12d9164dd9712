import { parse } from "lossless-json";
import type { FakeAdmin } from "./fake-admin";

/**
 * Shopify's store behind the fake Admin holds the customers whose webhooks were sent for a shop,
 * with the email consent they carried, and answers the app's `ConsentOrigin` read from them, as
 * the real store would (app/compliance/consent-origin.server.ts confirms subscribed consent so).
 * Customer ids are Shopify-wide: a body sent under another shop is that shop's record only.
 * `customerEmailMarketingConsentUpdate` changes a known customer's state as Shopify's 2026-04
 * schema describes it (input SUBSCRIBED, UNSUBSCRIBED or PENDING only; userErrors otherwise).
 * Returns the function that records a delivery before it is sent.
 */
export function answerConsentFromWebhooks(admin: Pick<FakeAdmin, "onGraphql">): (delivery: { topic: string; shop: string; body: string | object }) => void {
  const consentByShopCustomer = new Map<string, string>();
  admin.onGraphql("ConsentOrigin", (_query, variables, shop) => {
    const state = consentByShopCustomer.get(`${shop}|${String(variables.id)}`);
    return { customer: state ? { id: variables.id, defaultEmailAddress: { marketingState: state } } : null };
  });
  admin.onGraphql("customerEmailMarketingConsentUpdate(", (_query, _variables, shop) => ({
    customerEmailMarketingConsentUpdate: ({ input }: { input: ConsentUpdateInput }) => {
      const key = `${shop}|${input.customerId}`;
      const state = input.emailMarketingConsent.marketingState;
      // The schema: "Only three values are accepted as input: SUBSCRIBED, UNSUBSCRIBED, and PENDING."
      if (!["SUBSCRIBED", "UNSUBSCRIBED", "PENDING"].includes(state)) {
        return { customer: null, userErrors: [{ field: ["input", "emailMarketingConsent", "marketingState"], message: `Marketing state ${state} cannot be set`, code: "INCLUSION" }] };
      }
      if (!consentByShopCustomer.has(key)) {
        return { customer: null, userErrors: [{ field: ["input", "customerId"], message: "Customer not found", code: "INVALID" }] };
      }
      consentByShopCustomer.set(key, state);
      return {
        customer: {
          id: input.customerId,
          defaultEmailAddress: { marketingState: state, marketingOptInLevel: input.emailMarketingConsent.marketingOptInLevel ?? null, marketingUpdatedAt: input.emailMarketingConsent.consentUpdatedAt ?? new Date().toISOString() },
        },
        userErrors: [],
      };
    },
  }));
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

/** CustomerEmailMarketingConsentUpdateInput (Shopify 2026-04). */
interface ConsentUpdateInput {
  customerId: string;
  emailMarketingConsent: { marketingState: string; marketingOptInLevel?: string | null; consentUpdatedAt?: string | null };
}
