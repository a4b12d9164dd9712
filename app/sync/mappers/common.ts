/**
 * Shared helpers of the mappers: identity, addresses, line items and compaction. Everything here is
 * pure. Event bodies are built in ../event-bodies.ts; the planning contract (context, state, plan)
 * is in ../plan-contract.ts.
 */
import { emailSchema, type Address, type LineItem } from "../../services/marketing/schemas";
import { fromMinor, minorToDecimal, multiplyMinor, sumMinor, toMinor, type MoneyInput } from "../money";
import type { CartLineItem, OrderLineItem, ShopifyAddress } from "../payloads";
import type { SyncContext } from "../plan-contract";

// ---------------------------------------------------------------------------
// Identity
// ---------------------------------------------------------------------------

/**
 * Products have no person, but every event endpoint needs email or referenceId. Product events are
 * attributed to the store itself: referenceId `shop:<shopDomain>`. One place, so it can change.
 */
export const STORE_ACTOR_PREFIX = "shop:";
export function storeActorReferenceId(shopDomain: string): string {
  return `${STORE_ACTOR_PREFIX}${shopDomain.trim().toLowerCase()}`;
}

/** A usable email (trimmed, lower-cased, accepted by the service's email rule) or null. */
export function cleanEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== "string") return null;
  const email = raw.trim().toLowerCase();
  // The service's email rule refuses "" too.
  return emailSchema.safeParse(email).success ? email : null;
}

export type PersonRef = { email: string } | { referenceId: string };

/**
 * Rule 1: name the person by email when known, else by the Shopify customer id. A payload's id is
 * never blank (`shopifyId` refuses one), so with one the person is always named.
 */
export function personRef(email: string | null, customerId: string): PersonRef;
export function personRef(email: string | null, customerId: string | null): PersonRef | null;
export function personRef(email: string | null, customerId: string | null): PersonRef | null {
  if (email) return { email };
  if (customerId) return { referenceId: customerId };
  return null;
}

// ---------------------------------------------------------------------------
// Compaction
// ---------------------------------------------------------------------------

type KeptKeys<T> = { [K in keyof T]-?: null extends T[K] ? never : undefined extends T[K] ? never : K }[keyof T];
/** Keys that may be null/undefined become optional and non-null; the others stay as they are. */
type Compacted<T> = { [K in KeptKeys<T>]: T[K] } & {
  [K in Exclude<keyof T, KeptKeys<T>>]?: Exclude<T[K], null | undefined>;
};

/** Drops null, undefined and "" values (the service's schemas are strict: optional ≠ nullable). */
export function compact<T extends Record<string, unknown>>(obj: T): Compacted<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === null || v === undefined || v === "") continue;
    out[k] = v;
  }
  return out as Compacted<T>;
}

/** Shopify address → the service's address object; undefined when nothing is left. */
export function mapAddress(a: ShopifyAddress | null | undefined): Address | undefined {
  if (!a) return undefined;
  const out = compact({
    first_name: a.first_name,
    last_name: a.last_name,
    phone: a.phone,
    company: a.company,
    address1: a.address1,
    address2: a.address2,
    city: a.city,
    state: a.province ?? a.province_code,
    postal_code: a.zip,
    country: a.country ?? a.country_code,
  });
  return Object.keys(out).length > 0 ? (out as Address) : undefined;
}

/** The store's handle in admin.shopify.com links: `<handle>.myshopify.com` → `<handle>`. */
function storeHandle(shopDomain: string): string {
  return shopDomain.trim().toLowerCase().replace(/\.myshopify\.com$/, "");
}

/**
 * Customer event fields beyond the profile: `url` is the customer's page in the Shopify admin (the
 * merchant's link back); `shipping_address` is the default address, the one Shopify's checkout
 * ships to unless the buyer picks another. A customer has no billing address in Shopify (it is an
 * order's), so `billing_address` is left to order events.
 */
export function customerLinks(
  c: { id: string; default_address: ShopifyAddress | null },
  ctx: Pick<SyncContext, "shopDomain">,
): { url: string; shipping_address: Address | undefined } {
  return {
    url: `https://admin.shopify.com/store/${encodeURIComponent(storeHandle(ctx.shopDomain))}/customers/${encodeURIComponent(c.id)}`,
    shipping_address: mapAddress(c.default_address),
  };
}

/**
 * Line item `url`: the storefront's variant link (`/variants/<id>` opens the product page with that
 * variant chosen). Line payloads carry no product handle, so this is the one link every line has.
 */
export function lineUrl(storefrontUrl: string, variantId: string | null | undefined): string | undefined {
  return variantId ? `${storefrontUrl.replace(/\/+$/, "")}/variants/${encodeURIComponent(variantId)}` : undefined;
}

export function productUrl(storefrontUrl: string, handle: string | null | undefined): string | undefined {
  if (!handle) return undefined;
  return `${storefrontUrl.replace(/\/+$/, "")}/products/${encodeURIComponent(handle)}`;
}

/** A valid ISO currency or undefined. */
export function currencyOf(...candidates: Array<string | null | undefined>): string | undefined {
  for (const c of candidates) {
    if (typeof c === "string" && /^[A-Z]{3}$/.test(c.trim().toUpperCase())) return c.trim().toUpperCase();
  }
  return undefined;
}

/** Money field → number in `currency`, undefined when missing. */
export function amount(value: MoneyInput | null | undefined, currency: string | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  return fromMinor(toMinor(value, currency), currency);
}

const LS_ATTRIBUTE_NAMES = ["_ls", "__ls", "ls_revenue_hash"] as const;

/**
 * The website tracker's revenue hash, carried through checkout as a hidden cart attribute
 * (attributes starting with "_" are not shown to the buyer). Accepted names: `_ls`, `__ls`,
 * `ls_revenue_hash`. Shopify turns cart attributes into order `note_attributes`.
 */
export function revenueHash(
  attributes: ReadonlyArray<{ name: string | null; value: string | null }>,
  extra?: Record<string, unknown> | ReadonlyArray<{ name: string | null; value: string | null }> | null,
): string | undefined {
  const list = [...attributes];
  if (Array.isArray(extra)) list.push(...extra);
  else if (extra) {
    for (const [name, value] of Object.entries(extra)) list.push({ name, value: typeof value === "string" ? value : null });
  }
  for (const wanted of LS_ATTRIBUTE_NAMES) {
    const hit = list.find((a) => a.name === wanted && (a.value ?? "").trim() !== "");
    if (hit?.value) return hit.value.trim();
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Line items
// ---------------------------------------------------------------------------

function imageOf(li: { image_url?: string | null; image?: unknown }): string | undefined {
  if (li.image_url) return li.image_url;
  const img = li.image;
  // A blank URL comes back as "", which compact() leaves out like a missing one.
  if (typeof img === "string") return img;
  if (img) {
    const o = img as { src?: string | null; url?: string | null };
    return o.src ?? o.url ?? undefined;
  }
  return undefined;
}

/**
 * Line item `id` is the Shopify product id, so purchases join the product events; custom items
 * without a product fall back to the line item id.
 */
function lineId(productId: string | null, lineItemId: string | null, fallback: string): string {
  return productId ?? lineItemId ?? fallback;
}

function lineName(...names: Array<string | null | undefined>): string {
  for (const n of names) if (typeof n === "string" && n.trim() !== "") return n.trim();
  return "Item";
}

export interface MappedLines {
  products: LineItem[];
  /** Σ line totals after discounts, minor units. */
  totalMinor: bigint;
  totalQuantity: number;
}

/**
 * What the buyer still gets: an order edit (or a refund) lowers `current_quantity`, never `quantity`.
 * The line's discounts and taxes are Shopify's for the ordered quantity, so they shrink in proportion.
 */
function orderLineMinor(li: OrderLineItem, currency: string | undefined) {
  const ordered = li.quantity ?? 0;
  const quantity = li.current_quantity !== null && li.current_quantity >= 0 ? li.current_quantity : ordered;
  const share = (minor: bigint) => (quantity < ordered ? (minor * BigInt(quantity)) / BigInt(ordered) : minor);
  const gross = li.price !== null ? multiplyMinor(li.price, quantity, currency) : null;
  // discount_allocations is the current field; total_discount the legacy one.
  const allocations = li.discount_allocations.map((d) => d.amount);
  const discounts = share(
    allocations.length > 0 ? sumMinor(allocations, currency) : li.total_discount !== null ? toMinor(li.total_discount, currency) : 0n,
  );
  const taxes = li.tax_lines.length > 0 ? share(sumMinor(li.tax_lines.map((t) => t.price), currency)) : null;
  return { quantity, gross, discounts, taxes, net: gross !== null ? gross - discounts : null };
}

/** A line an order edit removed (current_quantity 0) is no longer sold. */
export function isRemovedLine(li: OrderLineItem): boolean {
  return li.current_quantity === 0;
}

/** Order/refund line item: total = price × quantity − discounts (exact). */
export function mapOrderLine(li: OrderLineItem, currency: string | undefined, index: number, storefrontUrl?: string): LineItem {
  const m = orderLineMinor(li, currency);
  return compact({
    id: lineId(li.product_id, li.id, `line-${index + 1}`),
    name: lineName(li.name, li.title, li.sku),
    url: storefrontUrl ? lineUrl(storefrontUrl, li.variant_id) : undefined,
    brand: li.vendor,
    sku: li.sku,
    variant_id: li.variant_id,
    image_url: imageOf(li),
    price: amount(li.price, currency),
    quantity: m.quantity,
    total: m.net !== null ? fromMinor(m.net, currency) : undefined,
    discounts: fromMinor(m.discounts, currency),
    taxes: m.taxes !== null ? fromMinor(m.taxes, currency) : undefined,
  }) as LineItem;
}

export function mapOrderLines(items: readonly OrderLineItem[], currency: string | undefined, storefrontUrl?: string): MappedLines {
  let totalMinor = 0n;
  let totalQuantity = 0;
  const products = items.flatMap((li, i) => {
    if (isRemovedLine(li)) return [];
    const m = orderLineMinor(li, currency);
    if (m.net !== null) totalMinor += m.net;
    totalQuantity += m.quantity;
    return [mapOrderLine(li, currency, i, storefrontUrl)];
  });
  return { products, totalMinor, totalQuantity };
}

/**
 * Cart/checkout line item. Checkout `line_price` is price × quantity before discounts (discounts
 * are in discount_allocations/applied_discounts); cart `line_price` is already the final line price.
 */
export function mapCartLines(
  items: readonly CartLineItem[],
  currency: string | undefined,
  kind: "cart" | "checkout",
  storefrontUrl?: string,
): MappedLines {
  let totalMinor = 0n;
  let totalQuantity = 0;
  const products = items.map((li, i) => {
    const quantity = li.quantity ?? 0;
    const unit = li.price ?? li.discounted_price;
    const linePrice = li.line_price !== null ? toMinor(li.line_price, currency) : unit !== null ? multiplyMinor(unit, quantity, currency) : null;
    const allocations = [...li.discount_allocations.map((d) => d.amount), ...li.applied_discounts.map((d) => d.amount)];
    const discounts = kind === "checkout" ? sumMinor(allocations, currency) : 0n;
    const lineTotal = linePrice !== null ? linePrice - discounts : null;
    const taxes = li.tax_lines.length > 0 ? sumMinor(li.tax_lines.map((t) => t.price), currency) : null;
    if (lineTotal !== null) totalMinor += lineTotal;
    totalQuantity += quantity;
    return compact({
      id: lineId(li.product_id, li.variant_id ?? li.id, li.key ?? `line-${i + 1}`),
      name: lineName(li.presentment_title, li.title, li.sku),
      url: storefrontUrl ? lineUrl(storefrontUrl, li.variant_id) : undefined,
      brand: li.vendor,
      sku: li.sku,
      variant_id: li.variant_id,
      image_url: li.image_url ?? undefined,
      price: amount(unit, currency),
      quantity,
      total: lineTotal !== null ? fromMinor(lineTotal, currency) : undefined,
      discounts: kind === "checkout" && allocations.length > 0 ? fromMinor(discounts, currency) : undefined,
      taxes: taxes !== null ? fromMinor(taxes, currency) : undefined,
    }) as LineItem;
  });
  return { products, totalMinor, totalQuantity };
}

export { minorToDecimal };

