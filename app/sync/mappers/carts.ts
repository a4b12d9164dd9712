/**
 * carts/create|update → cart/created|updated, only when the cart names a person.
 * Cart webhooks rarely do (no email/customer for anonymous storefront carts): those are skipped,
 * the checkout (which has the email) carries the cart from there.
 */
import type { CartEvent } from "../../services/marketing/schemas";
import { fromMinor } from "../money";
import type { CartPayload } from "../payloads";
import {
  cleanEmail,
  compact,
  currencyOf,
  eventCall,
  mapCartLines,
  personRef,
  priorOf,
  type SyncContext,
  type SyncPlan,
} from "./common";

export function cartObjectKey(token: string): string {
  return `cart:${token}`;
}

/**
 * Shopify cart permalink `/cart/<variant>:<qty>,…` rebuilds the cart in any browser, so it serves
 * as the cart URL. Without variant ids it falls back to `/cart`.
 */
export function cartPermalink(storefrontUrl: string, lines: ReadonlyArray<{ variant_id: string | null; quantity: number | null }>): string {
  const base = storefrontUrl.replace(/\/+$/, "");
  const parts = lines.filter((l) => l.variant_id && (l.quantity ?? 0) > 0).map((l) => `${l.variant_id}:${l.quantity}`);
  return parts.length > 0 && parts.length === lines.length ? `${base}/cart/${parts.join(",")}` : `${base}/cart`;
}

export function mapCart(action: "created" | "updated", c: CartPayload, ctx: SyncContext): SyncPlan {
  const token = (c.token ?? c.id) as string;
  const objectKey = cartObjectKey(token);
  const prior = priorOf(ctx.prior, "cart");
  const email = cleanEmail(c.email) ?? cleanEmail(c.customer?.email);
  const ref = personRef(email, c.customer?.id ?? c.customer_id);
  if (!ref) {
    return { objectKey, objectUpdatedAt: c.updated_at, calls: [], nextState: prior, skipped: "cart is not tied to a person (no email or customer)" };
  }
  const currency = currencyOf(c.currency, c.line_items[0]?.price_set?.shop_money?.currency_code, ctx.currency);
  // Stryker disable next-line StringLiteral: mapCartLines only tells "checkout" apart (line discounts); any other kind is a cart
  const lines = mapCartLines(c.line_items, currency, "cart", ctx.storefrontUrl);
  const body = compact({
    ...ref,
    source: ctx.settings.source,
    id: token,
    occurredAt: c.updated_at ?? ctx.now.toISOString(),
    products: lines.products,
    total: fromMinor(lines.totalMinor, currency),
    total_products: lines.totalQuantity,
    url: cartPermalink(ctx.storefrontUrl, c.line_items),
    currency,
    modified_at: c.updated_at,
  }) as CartEvent;
  // An unchanged cart is dropped by the pipeline's content hash.
  return {
    objectKey,
    objectUpdatedAt: c.updated_at,
    calls: [eventCall("cart", action, body)],
    nextState: { kind: "cart", created: true },
  };
}
