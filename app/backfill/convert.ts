/**
 * Bulk-operation JSONL (Admin GraphQL shapes) → the webhook bodies the sync mappers read, so a
 * backfilled object goes through exactly the same mapping, ordering and dedupe as a live one.
 * Pure; every field is optional (history is messy), and unknown fields are ignored.
 */
import { z } from "zod";

export const BACKFILL_KINDS = ["customers", "products", "orders"] as const;
export type BackfillKind = (typeof BACKFILL_KINDS)[number];

/**
 * The topic a converted object is planned as. Customers and orders as updates (an order complete
 * when first seen is history: no order/completed); products as creates, so a draft never seen
 * before is simply not advertised (an update would withdraw it).
 */
export const BACKFILL_TOPIC: Record<BackfillKind, string> = {
  customers: "customers/update",
  products: "products/create",
  orders: "orders/updated",
};

const str = z.string().nullish();
const moneyV2 = z.looseObject({ amount: z.union([z.string(), z.number()]).nullish(), currencyCode: str }).nullish();
const moneyBag = z.looseObject({ shopMoney: moneyV2 }).nullish();
const address = z
  .looseObject({
    firstName: str,
    lastName: str,
    company: str,
    address1: str,
    address2: str,
    city: str,
    province: str,
    provinceCode: str,
    zip: str,
    country: str,
    countryCodeV2: str,
    phone: str,
  })
  .nullish();

const emailAddress = z.looseObject({ emailAddress: str, marketingState: str, marketingOptInLevel: str, marketingUpdatedAt: str }).nullish();

const customerNode = z.looseObject({
  id: z.string(),
  defaultEmailAddress: emailAddress,
  defaultPhoneNumber: z.looseObject({ phoneNumber: str }).nullish(),
  firstName: str,
  lastName: str,
  state: str,
  tags: z.array(z.string()).nullish(),
  createdAt: str,
  updatedAt: str,
  numberOfOrders: z.union([z.string(), z.number()]).nullish(),
  amountSpent: moneyV2,
  defaultAddress: address,
});

const productNode = z.looseObject({
  id: z.string(),
  title: str,
  handle: str,
  descriptionHtml: str,
  vendor: str,
  productType: str,
  status: str,
  tags: z.array(z.string()).nullish(),
  publishedAt: str,
  createdAt: str,
  updatedAt: str,
  featuredMedia: z.looseObject({ preview: z.looseObject({ image: z.looseObject({ url: str }).nullish() }).nullish() }).nullish(),
});

const variantNode = z.looseObject({
  id: z.string(),
  sku: str,
  barcode: str,
  price: z.union([z.string(), z.number()]).nullish(),
  title: str,
  selectedOptions: z.array(z.looseObject({ value: str })).nullish(),
});

const orderNode = z.looseObject({
  id: z.string(),
  name: str,
  email: str,
  phone: str,
  createdAt: str,
  updatedAt: str,
  processedAt: str,
  cancelledAt: str,
  closedAt: str,
  currencyCode: str,
  displayFinancialStatus: str,
  displayFulfillmentStatus: str,
  totalPriceSet: moneyBag,
  subtotalPriceSet: moneyBag,
  totalTaxSet: moneyBag,
  totalDiscountsSet: moneyBag,
  totalShippingPriceSet: moneyBag,
  statusPageUrl: str,
  test: z.boolean().nullish(),
  tags: z.array(z.string()).nullish(),
  customer: z.looseObject({ id: z.string(), defaultEmailAddress: emailAddress }).nullish(),
  billingAddress: address,
  shippingAddress: address,
});

const lineItemNode = z.looseObject({
  id: z.string(),
  name: str,
  title: str,
  sku: str,
  vendor: str,
  quantity: z.number().nullish(),
  originalUnitPriceSet: moneyBag,
  product: z.looseObject({ id: z.string() }).nullish(),
  variant: z.looseObject({ id: z.string() }).nullish(),
});

/** "gid://shopify/Customer/123" → "123" (the raw value when it is not a gid). */
function numericId(gid: string): string {
  return /\/(\d+)(?:\?.*)?$/.exec(gid)?.[1] ?? gid;
}

const lower = (v: string | null | undefined) => (v ? v.toLowerCase() : null);
const amountOf = (m: z.infer<typeof moneyV2>) => (m?.amount === undefined || m?.amount === null ? null : String(m.amount));

function restAddress(a: z.infer<typeof address>) {
  if (!a) return null;
  return {
    first_name: a.firstName ?? null,
    last_name: a.lastName ?? null,
    company: a.company ?? null,
    address1: a.address1 ?? null,
    address2: a.address2 ?? null,
    city: a.city ?? null,
    province: a.province ?? null,
    province_code: a.provinceCode ?? null,
    zip: a.zip ?? null,
    country: a.country ?? null,
    country_code: a.countryCodeV2 ?? null,
    phone: a.phone ?? null,
  };
}

export function customerBody(line: unknown): Record<string, unknown> {
  const c = customerNode.parse(line);
  // Consent lives on the customer's default email address (no address: no consent known).
  const consent = c.defaultEmailAddress?.marketingState ? c.defaultEmailAddress : null;
  return {
    id: numericId(c.id),
    admin_graphql_api_id: c.id,
    email: c.defaultEmailAddress?.emailAddress ?? null,
    first_name: c.firstName ?? null,
    last_name: c.lastName ?? null,
    phone: c.defaultPhoneNumber?.phoneNumber ?? null,
    state: lower(c.state),
    // Not read (null) is unknown, never "no tags": the mapper would remove them all.
    tags: c.tags ? c.tags.join(", ") : null,
    created_at: c.createdAt ?? null,
    updated_at: c.updatedAt ?? null,
    orders_count: c.numberOfOrders === null || c.numberOfOrders === undefined ? null : Number(c.numberOfOrders),
    total_spent: amountOf(c.amountSpent),
    currency: c.amountSpent?.currencyCode ?? null,
    default_address: restAddress(c.defaultAddress),
    addresses: [],
    email_marketing_consent: consent
      ? {
          state: lower(consent.marketingState),
          opt_in_level: lower(consent.marketingOptInLevel),
          consent_updated_at: consent.marketingUpdatedAt ?? null,
        }
      : null,
  };
}

/** A product's variant (Admin GraphQL) as the products/* webhook details it; null for anything else. */
export function restVariant(productGid: string, child: unknown): Record<string, unknown> | null {
  const v = variantNode.safeParse(child);
  if (!v.success || !v.data.id.includes("/ProductVariant/")) return null;
  const options = (v.data.selectedOptions ?? []).map((o) => o.value ?? null);
  return {
    id: numericId(v.data.id),
    admin_graphql_api_id: v.data.id,
    product_id: numericId(productGid),
    sku: v.data.sku ?? null,
    barcode: v.data.barcode ?? null,
    price: v.data.price === null || v.data.price === undefined ? null : String(v.data.price),
    title: v.data.title ?? null,
    option1: options[0] ?? null,
    option2: options[1] ?? null,
    option3: options[2] ?? null,
  };
}

export function productBody(line: unknown, children: unknown[]): Record<string, unknown> {
  const p = productNode.parse(line);
  const imageUrl = p.featuredMedia?.preview?.image?.url;
  const variants = children.flatMap((child) => restVariant(p.id, child) ?? []);
  return {
    id: numericId(p.id),
    admin_graphql_api_id: p.id,
    title: p.title ?? null,
    handle: p.handle ?? null,
    body_html: p.descriptionHtml ?? null,
    vendor: p.vendor ?? null,
    product_type: p.productType ?? null,
    status: lower(p.status),
    tags: (p.tags ?? []).join(", "),
    published_at: p.publishedAt ?? null,
    created_at: p.createdAt ?? null,
    updated_at: p.updatedAt ?? null,
    image: imageUrl ? { src: imageUrl } : null,
    images: imageUrl ? [{ src: imageUrl }] : [],
    variants,
  };
}

export function orderBody(line: unknown, children: unknown[]): Record<string, unknown> {
  const o = orderNode.parse(line);
  const lineItems = children.flatMap((child) => {
    const li = lineItemNode.safeParse(child);
    if (!li.success || !li.data.id.includes("/LineItem/")) return [];
    return [
      {
        id: numericId(li.data.id),
        admin_graphql_api_id: li.data.id,
        name: li.data.name ?? li.data.title ?? null,
        title: li.data.title ?? li.data.name ?? null,
        sku: li.data.sku ?? null,
        vendor: li.data.vendor ?? null,
        quantity: li.data.quantity ?? null,
        price: amountOf(li.data.originalUnitPriceSet?.shopMoney),
        product_id: li.data.product ? numericId(li.data.product.id) : null,
        variant_id: li.data.variant ? numericId(li.data.variant.id) : null,
      },
    ];
  });
  const shipping = amountOf(o.totalShippingPriceSet?.shopMoney);
  return {
    id: numericId(o.id),
    admin_graphql_api_id: o.id,
    name: o.name ?? null,
    email: o.email ?? o.customer?.defaultEmailAddress?.emailAddress ?? null,
    phone: o.phone ?? null,
    created_at: o.createdAt ?? null,
    updated_at: o.updatedAt ?? null,
    processed_at: o.processedAt ?? null,
    cancelled_at: o.cancelledAt ?? null,
    closed_at: o.closedAt ?? null,
    currency: o.currencyCode ?? null,
    financial_status: lower(o.displayFinancialStatus),
    // GraphQL says UNFULFILLED where the webhook says null.
    fulfillment_status: o.displayFulfillmentStatus === "UNFULFILLED" ? null : lower(o.displayFulfillmentStatus),
    total_price: amountOf(o.totalPriceSet?.shopMoney),
    subtotal_price: amountOf(o.subtotalPriceSet?.shopMoney),
    total_tax: amountOf(o.totalTaxSet?.shopMoney),
    total_discounts: amountOf(o.totalDiscountsSet?.shopMoney),
    total_shipping_price_set: shipping === null ? null : { shop_money: { amount: shipping, currency_code: o.currencyCode ?? null } },
    order_status_url: o.statusPageUrl ?? null,
    test: o.test ?? false,
    tags: (o.tags ?? []).join(", "),
    customer: o.customer ? { id: numericId(o.customer.id), admin_graphql_api_id: o.customer.id, email: o.customer.defaultEmailAddress?.emailAddress ?? null } : null,
    billing_address: restAddress(o.billingAddress),
    shipping_address: restAddress(o.shippingAddress),
    line_items: lineItems,
  };
}

const contractLineNode = z.looseObject({
  id: z.string(),
  title: str,
  variantTitle: str,
  productId: str,
  variantId: str,
  sku: str,
  quantity: z.number().nullish(),
  currentPrice: moneyV2,
  variantImage: z.looseObject({ url: str }).nullish(),
  sellingPlanId: str,
  sellingPlanName: str,
});
const policyNode = z.looseObject({ interval: str, intervalCount: z.number().nullish() }).nullish();
const contractNode = z.looseObject({
  id: z.string(),
  createdAt: str,
  currencyCode: str,
  status: str,
  billingPolicy: z.looseObject({ interval: str, intervalCount: z.number().nullish(), minCycles: z.number().nullish(), maxCycles: z.number().nullish() }).nullish(),
  deliveryPolicy: policyNode,
});

/**
 * A subscription contract (Admin GraphQL) in the shape of the subscription_contracts/* webhook, with
 * the lines, dates and policies that webhook lacks since API 2026-04 (its `lines` as earlier
 * versions sent them). No `updated_at`: the webhook's own version is what is planned, and a read made
 * later must not pass for it.
 */
export function contractBody(line: unknown, children: unknown[]): Record<string, unknown> {
  const c = contractNode.parse(line);
  const policy = (p: z.infer<typeof policyNode>) => (p ? { interval: lower(p.interval), interval_count: p.intervalCount ?? null } : null);
  const lines = children.flatMap((child) => {
    const l = contractLineNode.safeParse(child);
    if (!l.success) return [];
    return [
      {
        id: numericId(l.data.id),
        admin_graphql_api_id: l.data.id,
        title: l.data.title ?? null,
        variant_title: l.data.variantTitle ?? null,
        product_id: l.data.productId ? numericId(l.data.productId) : null,
        variant_id: l.data.variantId ? numericId(l.data.variantId) : null,
        sku: l.data.sku ?? null,
        quantity: l.data.quantity ?? null,
        current_price: l.data.currentPrice ? { amount: amountOf(l.data.currentPrice), currency_code: l.data.currentPrice.currencyCode ?? null } : null,
        variant_image: l.data.variantImage?.url ?? null,
        selling_plan_id: l.data.sellingPlanId ? numericId(l.data.sellingPlanId) : null,
        selling_plan_name: l.data.sellingPlanName ?? null,
      },
    ];
  });
  const billing = policy(c.billingPolicy);
  return {
    id: numericId(c.id),
    admin_graphql_api_id: c.id,
    created_at: c.createdAt ?? null,
    currency_code: c.currencyCode ?? null,
    status: lower(c.status),
    billing_policy: billing ? { ...billing, min_cycles: c.billingPolicy?.minCycles ?? null, max_cycles: c.billingPolicy?.maxCycles ?? null } : null,
    delivery_policy: policy(c.deliveryPolicy),
    lines,
  };
}

export function convert(kind: BackfillKind, line: unknown, children: unknown[]): Record<string, unknown> {
  if (kind === "customers") return customerBody(line);
  if (kind === "products") return productBody(line, children);
  return orderBody(line, children);
}
