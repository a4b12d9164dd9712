import { parse } from "lossless-json";
import type { FakeAdmin } from "./fake-admin";

/**
 * Shopify's store behind the fake Admin holds the customers whose webhooks were sent for a shop,
 * with the email consent they carried, and answers the app's `ConsentOrigin` read from them, as
 * the real store would (app/compliance/consent-origin.server.ts confirms subscribed consent so).
 * Customer ids are Shopify-wide: a body sent under another shop is that shop's record only.
 * `customerEmailMarketingConsentUpdate` changes a known customer's state as Shopify's 2026-04
 * schema describes it (input SUBSCRIBED, UNSUBSCRIBED or PENDING only; userErrors otherwise).
 * `customerByIdentifier(identifier: { emailAddress })` finds a customer by its email, and
 * `customerCreate` creates one as the kept schema's CustomerInput describes it: one customer per
 * email in a store ("Email has already been taken"), the consent's state SUBSCRIBED, UNSUBSCRIBED
 * or PENDING only, and consent only with an email.
 * Returns the function that records a delivery before it is sent.
 */
export function answerConsentFromWebhooks(admin: Pick<FakeAdmin, "onGraphql">): (delivery: { topic: string; shop: string; body: string | object }) => void {
  const consentByShopCustomer = new Map<string, string>();
  // shop|lower-case email → the customer's GID and tags.
  const customersByEmail = new Map<string, { id: string; tags: string[] }>();
  let nextCustomer = 9_100_000_000_000;
  admin.onGraphql("customerByIdentifier(", (_query, _variables, shop) => ({
    customerByIdentifier: ({ identifier }: { identifier: { emailAddress?: string | null } }) => {
      const found = identifier.emailAddress ? customersByEmail.get(`${shop}|${identifier.emailAddress.trim().toLowerCase()}`) : undefined;
      return found ? { id: found.id, tags: found.tags } : null;
    },
  }));
  admin.onGraphql("customerCreate(", (_query, _variables, shop) => ({
    customerCreate: ({ input }: { input: CustomerCreateInput }) => {
      const refuse = (field: string[], message: string) => ({ customer: null, userErrors: [{ field, message }] });
      const email = input.email?.trim().toLowerCase();
      const consent = input.emailMarketingConsent;
      if (email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) return refuse(["email"], "Email is invalid");
      if (email && customersByEmail.has(`${shop}|${email}`)) return refuse(["email"], "Email has already been taken");
      if (consent && !email) return refuse(["emailMarketingConsent"], "An email address is required to set the email marketing consent state.");
      if (consent && !["SUBSCRIBED", "UNSUBSCRIBED", "PENDING"].includes(consent.marketingState)) {
        return refuse(["emailMarketingConsent", "marketingState"], `Marketing state ${consent.marketingState} cannot be set`);
      }
      if (!email && !input.phone && !input.firstName && !input.lastName) return refuse(["customer"], "Customer must have a name, phone number or email address");
      const id = `gid://shopify/Customer/${++nextCustomer}`;
      const tags = typeof input.tags === "string" ? input.tags.split(",").map((t) => t.trim()).filter(Boolean) : (input.tags ?? []);
      if (email) customersByEmail.set(`${shop}|${email}`, { id, tags });
      consentByShopCustomer.set(`${shop}|${id}`, consent?.marketingState ?? "NOT_SUBSCRIBED");
      return { customer: { id }, userErrors: [] };
    },
  }));
  // nodes(ids:): each id's object in the order asked, null for one the shop does not hold.
  admin.onGraphql("ConsentOrigin", (_query, variables, shop) => ({
    nodes: (variables.ids as string[]).map((id) => {
      const state = consentByShopCustomer.get(`${shop}|${id}`);
      return state ? { id, defaultEmailAddress: { marketingState: state } } : null;
    }),
  }));
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
    const email = typeof body.email === "string" ? body.email : typeof body.email_address === "string" ? body.email_address : null;
    if (email && !customersByEmail.has(`${delivery.shop}|${email.toLowerCase()}`)) {
      const tags = typeof body.tags === "string" ? body.tags.split(",").map((t) => t.trim()).filter(Boolean) : [];
      customersByEmail.set(`${delivery.shop}|${email.toLowerCase()}`, { id: String(gid), tags });
    }
  };
}

/** CustomerEmailMarketingConsentUpdateInput (Shopify 2026-04). */
interface ConsentUpdateInput {
  customerId: string;
  emailMarketingConsent: { marketingState: string; marketingOptInLevel?: string | null; consentUpdatedAt?: string | null };
}

/** CustomerInput (Shopify 2026-04), the fields customerCreate reads here. */
interface CustomerCreateInput {
  email?: string;
  phone?: string;
  firstName?: string;
  lastName?: string;
  tags?: string[] | string;
  emailMarketingConsent?: { marketingState: string; marketingOptInLevel?: string | null; consentUpdatedAt?: string | null };
}
