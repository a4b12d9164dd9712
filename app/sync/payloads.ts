/**
 * Lenient zod schemas for the Shopify webhook bodies the sync maps (REST webhook format, API 2026-04).
 *
 * Real deliveries are messier than the documentation samples, so every schema here:
 * - lets unknown fields pass (looseObject),
 * - tolerates null/missing for every field it does not strictly need (→ null),
 * - defaults arrays to [],
 * - reads ids as strings (never through a lossy number), preferring the number inside
 *   `admin_graphql_api_id` because sample ids above 2^53 were already rounded,
 * - keeps money as exact canonical decimal strings (see money.ts),
 * - normalises timestamps to UTC ISO 8601 (`2022-01-01T00:00:00.000Z`) so they compare as strings.
 */
import { z } from "zod";
import { canonicalDecimal, isMoneyLike } from "./money";
import { SHOPIFY_CONSENT_STATES, type ShopifyConsentState } from "./consent";

// ---------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------

/** Optional + nullable, normalised to null. */
const nul = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => (v ?? null) as z.output<T> | null);
/** Array defaulting to [] for null/missing. */
const arr = <T extends z.ZodType>(item: T) => z.array(item).nullish().transform((v) => (v ?? []) as z.output<T>[]);

/**
 * A Shopify numeric id as a string. Numbers must be integers (a rounded one is still the best we
 * have); strings are trimmed; bigints (from other parsers) are accepted too.
 */
export const shopifyId = z
  .union([z.string(), z.number(), z.bigint()])
  .transform((v, ctx) => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") {
      if (!Number.isInteger(v) || v < 0) {
        ctx.addIssue({ code: "custom", message: `Expected a Shopify id, got ${v}` });
        return z.NEVER;
      }
      // String() reproduces the JSON literal (e.g. a rounded "706405506930370000"), which is what a
      // reader of the payload sees; only ids >= 1e21 would print with an exponent.
      return v < 1e21 ? String(v) : BigInt(v).toString();
    }
    const s = v.trim();
    const fromGid = gidNumber(s);
    if (fromGid) return fromGid;
    if (s === "") {
      ctx.addIssue({ code: "custom", message: "Expected a Shopify id, got an empty string" });
      return z.NEVER;
    }
    return s;
  });
export type ShopifyId = z.output<typeof shopifyId>;

/** The numeric part of "gid://shopify/Customer/706405506930370084" (also with ?query). */
export function gidNumber(gid: string | null | undefined): string | null {
  if (typeof gid !== "string") return null;
  const m = /^gid:\/\/shopify\/[A-Za-z0-9_]+\/(\d+)(?:[?#].*)?$/.exec(gid.trim());
  return m ? m[1] : null;
}

/** The id to use: the one inside the GraphQL gid when present, else the REST id. */
export function preferGid(gid: string | null | undefined, id: string | null | undefined): string | null {
  return gidNumber(gid) ?? id ?? null;
}

/**
 * Opaque tokens (cart/checkout tokens, cart ids like "exampleCartId"). Blank counts as missing:
 * Shopify sends `cart_token: ""` for draft-order and wallet checkouts, and `??` fallbacks must apply.
 */
const token = z.union([z.string(), z.number()]).transform((v) => String(v).trim() || null);

/** Free text: numbers are accepted (zip codes, phones sent as numbers). */
const text = z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v));

/** A name or title: blank counts as missing, so the mappers' fallbacks (another name, a default) apply. */
const label = text.transform((v) => (v.trim() === "" ? null : v));

/** Exact decimal money as a canonical string ("12.50"); "" counts as missing. */
export const money = z.union([z.string(), z.number()]).transform((v, ctx) => {
  if (v === "") return null;
  if (!isMoneyLike(v)) {
    ctx.addIssue({ code: "custom", message: `Expected a decimal amount, got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return canonicalDecimal(v);
});

// Years the service, the database and every client can store. Not Date.UTC(1, 0, 1): Date.UTC reads
// years 0–99 as 1900–1999, which made the earliest instant 1901-01-01.
const EARLIEST = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * ISO timestamp normalised to UTC; unparsable text counts as missing (lenient). A date outside
 * the years 1–9999 (a numeric 1e20, "+275760-09-13") is refused: no system downstream can hold it.
 */
export const timestamp = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const t = typeof v === "number" ? v : Date.parse(v);
  if (Number.isNaN(t)) return null;
  if (!(t >= EARLIEST && t <= LATEST)) {
    ctx.addIssue({ code: "custom", message: `timestamp ${String(v).slice(0, 40)} is outside the years 1–9999` });
    return z.NEVER;
  }
  return new Date(t).toISOString();
});

/** "a, b ,c" or ["a","b"] → ["a","b","c"] (trimmed, empties and duplicates dropped). */
export const tagList = z.union([z.string(), z.array(z.union([z.string(), z.number()]))]).transform((v) => {
  const parts = typeof v === "string" ? v.split(",") : v.map(String);
  return [...new Set(parts.map((s) => s.trim()).filter((s) => s !== ""))];
});

const currencyCode = z.string().transform((v) => {
  const c = v.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(c) ? c : null;
});

const moneyAmount = z.looseObject({ amount: nul(money), currency_code: nul(currencyCode) });
/** Shopify's { shop_money, presentment_money } pair. */
export const moneySet = z.looseObject({ shop_money: nul(moneyAmount), presentment_money: nul(moneyAmount) });

export const address = z.looseObject({
  first_name: nul(text),
  last_name: nul(text),
  name: nul(text),
  phone: nul(text),
  company: nul(text),
  address1: nul(text),
  address2: nul(text),
  city: nul(text),
  province: nul(text),
  province_code: nul(text),
  zip: nul(text),
  country: nul(text),
  country_code: nul(text),
});
export type ShopifyAddress = z.output<typeof address>;

/** Unknown states (e.g. a future Shopify value) read as null = "no consent information". */
const consentState = z.string().transform((v): ShopifyConsentState | null => {
  const s = v.trim().toLowerCase();
  return (SHOPIFY_CONSENT_STATES as readonly string[]).includes(s) ? (s as ShopifyConsentState) : null;
});

export const emailMarketingConsent = z.looseObject({
  state: nul(consentState),
  opt_in_level: nul(z.string().transform((v) => v.toLowerCase())),
  consent_updated_at: nul(timestamp),
});
export type EmailMarketingConsent = z.output<typeof emailMarketingConsent>;

// ---------------------------------------------------------------------------
// Customers
// ---------------------------------------------------------------------------

const customerShape = {
  id: nul(shopifyId),
  admin_graphql_api_id: nul(z.string()),
  email: nul(z.string()),
  first_name: nul(text),
  last_name: nul(text),
  phone: nul(text),
  state: nul(z.string()),
  note: nul(z.string()),
  verified_email: nul(z.boolean()),
  tags: nul(tagList),
  currency: nul(currencyCode),
  created_at: nul(timestamp),
  updated_at: nul(timestamp),
  orders_count: nul(z.number()),
  total_spent: nul(money),
  default_address: nul(address),
  addresses: arr(address),
  email_marketing_consent: nul(emailMarketingConsent),
};

const resolveId = <T extends { id: string | null; admin_graphql_api_id: string | null }>(o: T): T => ({
  ...o,
  id: preferGid(o.admin_graphql_api_id, o.id),
});

/** Customer as embedded in orders/checkouts (may be partial). */
export const embeddedCustomer = z.looseObject(customerShape).transform(resolveId);
export type EmbeddedCustomer = z.output<typeof embeddedCustomer>;

const requireId = <T extends { id: string | null }>(what: string) =>
  (o: T, ctx: z.RefinementCtx) => {
    if (o.id === null) ctx.addIssue({ code: "custom", path: ["id"], message: `${what} id is required` });
  };

/** customers/create|update|delete|enable|disable. */
export const customerPayload = z
  .looseObject(customerShape)
  .transform(resolveId)
  .superRefine(requireId("Customer"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type CustomerPayload = z.output<typeof customerPayload>;

/** customers_email_marketing_consent/update. */
export const consentUpdatePayload = z
  .looseObject({
    customer_id: nul(shopifyId),
    admin_graphql_api_customer_id: nul(z.string()),
    email_address: nul(z.string()),
    email_marketing_consent: nul(emailMarketingConsent),
  })
  .transform((o) => ({ ...o, customer_id: preferGid(o.admin_graphql_api_customer_id, o.customer_id) }))
  .superRefine((o, ctx) => {
    if (o.customer_id === null) ctx.addIssue({ code: "custom", path: ["customer_id"], message: "customer_id is required" });
  })
  .transform((o) => ({ ...o, customer_id: o.customer_id as string }));
export type ConsentUpdatePayload = z.output<typeof consentUpdatePayload>;

/** customer.tags_added / customer.tags_removed (GraphQL-style body): only the tags that changed. */
export const customerTagsPayload = z.looseObject({ customerId: shopifyId, tags: tagList, occurredAt: nul(timestamp) });
export type CustomerTagsPayload = z.output<typeof customerTagsPayload>;

/**
 * customer.joined_segment / customer.left_segment: which customer joined or left which segment
 * (gids; nothing else: not the segment's name, not the customer's email).
 */
export const segmentMembershipPayload = z.looseObject({
  customer_id: shopifyId,
  segment_id: shopifyId,
  shop_id: nul(z.string()),
  /** Set by the member import (app/segments/member-import.server.ts), never by Shopify: when the segment was picked. */
  picked_at: z.iso.datetime({ offset: true }).optional(),
});
export type SegmentMembershipPayload = z.output<typeof segmentMembershipPayload>;

/** customers/purchasing_summary (GraphQL-style body): the customer's sales totals. */
export const purchasingSummaryPayload = z.looseObject({
  customerId: shopifyId,
  numberOfOrders: nul(z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/).transform(Number)])),
  amountSpent: nul(z.looseObject({ amount: nul(money), currencyCode: nul(currencyCode) })),
  lastOrderId: nul(z.string()),
  occurredAt: nul(timestamp),
});
export type PurchasingSummaryPayload = z.output<typeof purchasingSummaryPayload>;

/** customers/merge: the kept and the deleted customer (gids), and how the merge ended. */
export const customerMergePayload = z.looseObject({
  admin_graphql_api_customer_kept_id: shopifyId,
  admin_graphql_api_customer_deleted_id: shopifyId,
  status: nul(z.string().transform((v) => v.trim().toLowerCase())),
});
export type CustomerMergePayload = z.output<typeof customerMergePayload>;

// ---------------------------------------------------------------------------
// Orders, refunds
// ---------------------------------------------------------------------------

const taxLine = z.looseObject({ price: nul(money), rate: nul(z.number()), title: nul(z.string()) });
const discountAllocation = z.looseObject({ amount: nul(money), amount_set: nul(moneySet) });
const noteAttribute = z.looseObject({ name: nul(text), value: nul(text) });

export const orderLineItem = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    product_id: nul(shopifyId),
    variant_id: nul(shopifyId),
    name: nul(label),
    title: nul(label),
    variant_title: nul(label),
    sku: nul(text),
    vendor: nul(text),
    price: nul(money),
    price_set: nul(moneySet),
    quantity: nul(z.number().int()),
    current_quantity: nul(z.number().int()),
    total_discount: nul(money),
    discount_allocations: arr(discountAllocation),
    tax_lines: arr(taxLine),
    requires_shipping: nul(z.boolean()),
    gift_card: nul(z.boolean()),
    image_url: nul(z.string()),
    image: nul(z.union([z.string(), z.looseObject({ src: nul(z.string()), url: nul(z.string()) })])),
  })
  .transform(resolveId);
export type OrderLineItem = z.output<typeof orderLineItem>;

const shippingLine = z.looseObject({
  price: nul(money),
  discounted_price: nul(money),
  is_removed: nul(z.boolean()),
  title: nul(z.string()),
});

export const orderPayload = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    name: nul(label),
    order_number: nul(z.union([z.number(), z.string()])),
    email: nul(z.string()),
    contact_email: nul(z.string()),
    phone: nul(text),
    token: nul(token),
    checkout_token: nul(token),
    cart_token: nul(token),
    created_at: nul(timestamp),
    updated_at: nul(timestamp),
    processed_at: nul(timestamp),
    cancelled_at: nul(timestamp),
    closed_at: nul(timestamp),
    cancel_reason: nul(z.string()),
    currency: nul(currencyCode),
    presentment_currency: nul(currencyCode),
    financial_status: nul(z.string()),
    fulfillment_status: nul(z.string()),
    total_price: nul(money),
    subtotal_price: nul(money),
    total_tax: nul(money),
    total_discounts: nul(money),
    total_line_items_price: nul(money),
    total_shipping_price_set: nul(moneySet),
    // The order as it stands after edits and refunds (order edits change these, not total_price).
    current_total_price: nul(money),
    current_subtotal_price: nul(money),
    current_total_tax: nul(money),
    current_total_discounts: nul(money),
    current_shipping_price_set: nul(moneySet),
    current_total_additional_fees_set: nul(moneySet),
    original_total_additional_fees_set: nul(moneySet),
    shipping_lines: arr(shippingLine),
    order_status_url: nul(z.string()),
    payment_gateway_names: arr(z.string()),
    note_attributes: arr(noteAttribute),
    line_items: arr(orderLineItem),
    billing_address: nul(address),
    shipping_address: nul(address),
    customer: nul(embeddedCustomer),
    test: nul(z.boolean()),
    tags: nul(tagList),
  })
  .transform(resolveId)
  .superRefine(requireId("Order"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type OrderPayload = z.output<typeof orderPayload>;

/** orders/delete, products/delete: only the id is guaranteed. */
export const deletePayload = z
  .looseObject({ id: nul(shopifyId), admin_graphql_api_id: nul(z.string()) })
  .transform(resolveId)
  .superRefine(requireId("Deleted resource"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type DeletePayload = z.output<typeof deletePayload>;

/** orders/edited: { order_edit: {...} }. */
export const orderEditedPayload = z.looseObject({
  order_edit: z.looseObject({
    id: nul(shopifyId),
    order_id: shopifyId,
    created_at: nul(timestamp),
    committed_at: nul(timestamp),
    line_items: nul(
      z.looseObject({
        additions: arr(z.looseObject({ id: nul(shopifyId), delta: nul(z.number()) })),
        removals: arr(z.looseObject({ id: nul(shopifyId), delta: nul(z.number()) })),
      }),
    ),
  }),
});
export type OrderEditedPayload = z.output<typeof orderEditedPayload>;

const refundLineItem = z.looseObject({
  id: nul(shopifyId),
  line_item_id: nul(shopifyId),
  quantity: nul(z.number().int()),
  subtotal: nul(money),
  total_tax: nul(money),
  subtotal_set: nul(moneySet),
  total_tax_set: nul(moneySet),
  line_item: nul(orderLineItem),
});

const transaction = z.looseObject({
  id: nul(shopifyId),
  kind: nul(z.string()),
  status: nul(z.string()),
  amount: nul(money),
  currency: nul(currencyCode),
  test: nul(z.boolean()),
});

export const refundPayload = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    order_id: shopifyId,
    created_at: nul(timestamp),
    processed_at: nul(timestamp),
    note: nul(z.string()),
    refund_line_items: arr(refundLineItem),
    transactions: arr(transaction),
    refund_shipping_lines: arr(z.looseObject({ subtotal_amount_set: nul(moneySet), tax_amount_set: nul(moneySet) })),
    order_adjustments: arr(
      z.looseObject({
        amount: nul(money),
        tax_amount: nul(money),
        amount_set: nul(moneySet),
        tax_amount_set: nul(moneySet),
        kind: nul(z.string()),
      }),
    ),
  })
  .transform(resolveId)
  .superRefine(requireId("Refund"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type RefundPayload = z.output<typeof refundPayload>;

// ---------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------

const image = z.looseObject({ src: nul(z.string()), alt: nul(z.string()) });

export const productVariant = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    title: nul(text),
    sku: nul(text),
    barcode: nul(text),
    price: nul(money),
    option1: nul(text),
    option2: nul(text),
    option3: nul(text),
  })
  .transform(resolveId);
export type ProductVariantPayload = z.output<typeof productVariant>;

export const productPayload = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    title: nul(label),
    body_html: nul(z.string()),
    handle: nul(z.string()),
    product_type: nul(text),
    vendor: nul(text),
    status: nul(z.string().transform((s) => s.toLowerCase())),
    published_at: nul(timestamp),
    tags: nul(tagList),
    created_at: nul(timestamp),
    updated_at: nul(timestamp),
    image: nul(image),
    images: arr(image),
    variants: arr(productVariant),
    // 2024+: standard product taxonomy category ({name, full_name}); older: string.
    category: nul(z.union([z.string(), z.looseObject({ name: nul(z.string()), full_name: nul(z.string()) })])),
  })
  .transform(resolveId)
  .superRefine(requireId("Product"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type ProductPayload = z.output<typeof productPayload>;

// ---------------------------------------------------------------------------
// Carts, checkouts
// ---------------------------------------------------------------------------

export const cartLineItem = z.looseObject({
  id: nul(shopifyId),
  key: nul(z.string()),
  product_id: nul(shopifyId),
  variant_id: nul(shopifyId),
  title: nul(label),
  presentment_title: nul(label),
  variant_title: nul(label),
  sku: nul(text),
  vendor: nul(text),
  quantity: nul(z.number().int()),
  price: nul(money),
  line_price: nul(money),
  discounted_price: nul(money),
  total_discount: nul(money),
  price_set: nul(moneySet),
  applied_discounts: arr(z.looseObject({ amount: nul(money) })),
  discount_allocations: arr(discountAllocation),
  tax_lines: arr(taxLine),
  image_url: nul(z.string()),
});
export type CartLineItem = z.output<typeof cartLineItem>;

export const checkoutPayload = z
  .looseObject({
    id: nul(shopifyId),
    token: nul(token),
    cart_token: nul(token),
    email: nul(z.string()),
    phone: nul(text),
    created_at: nul(timestamp),
    updated_at: nul(timestamp),
    completed_at: nul(timestamp),
    closed_at: nul(timestamp),
    currency: nul(currencyCode),
    presentment_currency: nul(currencyCode),
    abandoned_checkout_url: nul(z.string()),
    buyer_accepts_marketing: nul(z.boolean()),
    line_items: arr(cartLineItem),
    total_price: nul(money),
    subtotal_price: nul(money),
    total_tax: nul(money),
    total_discounts: nul(money),
    total_line_items_price: nul(money),
    shipping_lines: arr(shippingLine),
    note_attributes: arr(noteAttribute),
    customer: nul(embeddedCustomer),
  })
  .superRefine((o, ctx) => {
    if (!o.token && !o.id && !o.cart_token) {
      ctx.addIssue({ code: "custom", path: ["token"], message: "Checkout token or id is required" });
    }
  });
export type CheckoutPayload = z.output<typeof checkoutPayload>;

// ---------------------------------------------------------------------------
// Subscription contracts
// ---------------------------------------------------------------------------

const subscriptionLine = z.looseObject({
  id: nul(shopifyId),
  title: nul(label),
  variant_title: nul(label),
  product_id: nul(shopifyId),
  variant_id: nul(shopifyId),
  sku: nul(text),
  quantity: nul(z.number().int()),
  current_price: nul(z.union([money, z.looseObject({ amount: nul(money), currency_code: nul(currencyCode) })])),
  variant_image: nul(z.union([z.string(), image])),
  vendor: nul(text),
  selling_plan_id: nul(shopifyId),
  selling_plan_name: nul(label),
});

/** billing_policy / delivery_policy: how often the contract bills ("week", 4 = every 4 weeks). */
const subscriptionPolicy = z.looseObject({
  interval: nul(z.string().transform((s) => s.toLowerCase())),
  interval_count: nul(z.number().int()),
});

export const subscriptionContractPayload = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    customer_id: nul(shopifyId),
    admin_graphql_api_customer_id: nul(z.string()),
    currency_code: nul(currencyCode),
    status: nul(z.string().transform((s) => s.toLowerCase())),
    origin_order_id: nul(shopifyId),
    revision_id: nul(token),
    created_at: nul(timestamp),
    updated_at: nul(timestamp),
    lines: arr(subscriptionLine),
    billing_policy: nul(subscriptionPolicy),
  })
  .transform(resolveId)
  .transform((o) => ({ ...o, customer_id: preferGid(o.admin_graphql_api_customer_id, o.customer_id) }))
  .superRefine(requireId("Subscription contract"))
  .transform((o) => ({ ...o, id: o.id as string }));
export type SubscriptionContractPayload = z.output<typeof subscriptionContractPayload>;

/**
 * subscription_billing_attempts/success|failure|challenged. The attempt names its contract only;
 * `id` is null in Shopify's samples, so the idempotency key (or the order) identifies the attempt.
 */
export const subscriptionBillingAttemptPayload = z
  .looseObject({
    id: nul(shopifyId),
    admin_graphql_api_id: nul(z.string()),
    idempotency_key: nul(token),
    order_id: nul(shopifyId),
    admin_graphql_api_order_id: nul(z.string()),
    subscription_contract_id: nul(shopifyId),
    admin_graphql_api_subscription_contract_id: nul(z.string()),
    error_code: nul(z.string()),
    error_message: nul(z.string()),
  })
  .transform((o) => ({
    ...o,
    id: preferGid(o.admin_graphql_api_id, o.id),
    order_id: preferGid(o.admin_graphql_api_order_id, o.order_id),
    subscription_contract_id: preferGid(o.admin_graphql_api_subscription_contract_id, o.subscription_contract_id),
  }))
  .superRefine((o, ctx) => {
    if (o.subscription_contract_id === null) {
      ctx.addIssue({ code: "custom", path: ["subscription_contract_id"], message: "subscription_contract_id is required" });
    }
  })
  .transform((o) => ({ ...o, subscription_contract_id: o.subscription_contract_id as string }));
export type SubscriptionBillingAttemptPayload = z.output<typeof subscriptionBillingAttemptPayload>;

/** subscription_billing_cycles/skip: one billing cycle of a contract skipped. */
export const subscriptionBillingCyclePayload = z
  .looseObject({
    subscription_contract_id: nul(shopifyId),
    admin_graphql_api_subscription_contract_id: nul(z.string()),
    cycle_index: nul(z.number().int()),
    cycle_start_at: nul(timestamp),
    cycle_end_at: nul(timestamp),
    billing_attempt_expected_date: nul(timestamp),
    skipped: nul(z.boolean()),
  })
  .transform((o) => ({ ...o, subscription_contract_id: preferGid(o.admin_graphql_api_subscription_contract_id, o.subscription_contract_id) }))
  .superRefine((o, ctx) => {
    if (o.subscription_contract_id === null) {
      ctx.addIssue({ code: "custom", path: ["subscription_contract_id"], message: "subscription_contract_id is required" });
    }
  })
  .transform((o) => ({ ...o, subscription_contract_id: o.subscription_contract_id as string }));
export type SubscriptionBillingCyclePayload = z.output<typeof subscriptionBillingCyclePayload>;
