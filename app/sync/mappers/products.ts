/**
 * products/create|update|delete → product events, attributed to the store (STORE_ACTOR_PREFIX).
 *
 * Only live products are advertised: status "active" (missing status = legacy payload = active)
 * AND published_at set. A draft create sends nothing; a live product that becomes
 * draft/archived/unpublished gets `product/deleted`; publishing it later sends `product/created`.
 */
import type { ProductEvent, ProductVariant } from "../../services/marketing/schemas";
import { compareMoney } from "../money";
import type { ProductPayload } from "../payloads";
import { amount, compact, currencyOf, productUrl, storeActorReferenceId } from "./common";
import { eventCall, productEventBody } from "../event-bodies";
import { priorOf, type ProductSyncState, type SyncContext, type SyncPlan } from "../plan-contract";

export function productObjectKey(productId: string): string {
  return `product:${productId}`;
}

export function isAdvertised(p: Pick<ProductPayload, "status" | "published_at">): boolean {
  return (p.status ?? "active") === "active" && p.published_at !== null;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", ensp: " ", emsp: " ", thinsp: " ",
  hellip: "…", mdash: "—", ndash: "–", lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«",
  raquo: "»", bull: "•", middot: "·", copy: "©", reg: "®", trade: "™", deg: "°", times: "×",
  divide: "÷", euro: "€", pound: "£", yen: "¥", cent: "¢", sect: "§", para: "¶", frac12: "½",
  frac14: "¼", frac34: "¾", plusmn: "±", micro: "µ", shy: "",
  aacute: "á", eacute: "é", iacute: "í", oacute: "ó", uacute: "ú", agrave: "à", egrave: "è",
  ugrave: "ù", acirc: "â", ecirc: "ê", ocirc: "ô", auml: "ä", euml: "ë", iuml: "ï", ouml: "ö",
  uuml: "ü", Auml: "Ä", Ouml: "Ö", Uuml: "Ü", szlig: "ß", ccedil: "ç", ntilde: "ñ", oslash: "ø",
  aring: "å", aelig: "æ",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name] ?? NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** body_html → plain text: scripts/styles dropped, tags removed, entities decoded, whitespace collapsed. */
export function htmlToText(html: string | null | undefined): string {
  if (!html) return "";
  const withoutCode = html.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ").replace(/<!--[\s\S]*?-->/g, " ");
  // Tags become spaces so "<p>a</p><p>b</p>" reads "a b", not "ab".
  const stripped = withoutCode.replace(/<\/?[a-z][^>]*>/gi, " ");
  return decodeEntities(stripped).replace(/\s+/g, " ").trim();
}

function variantOptions(v: ProductPayload["variants"][number]): string[] {
  return [v.option1, v.option2, v.option3].filter(
    // Single-variant products carry the placeholder option "Default Title".
    (o): o is string => typeof o === "string" && o.trim() !== "" && o !== "Default Title",
  );
}

function minPrice(p: ProductPayload, currency: string | undefined): number | undefined {
  let min: string | null = null;
  for (const v of p.variants) {
    if (v.price !== null && (min === null || compareMoney(v.price, min, currency) < 0)) min = v.price;
  }
  return amount(min, currency);
}

/** The store, in whose name product events are sent (products have no person). */
function storeActor(ctx: SyncContext) {
  return { referenceId: storeActorReferenceId(ctx.shopDomain) };
}

export function productBodyFrom(p: ProductPayload, ctx: SyncContext): ProductEvent {
  const currency = currencyOf(ctx.currency);
  const variants: ProductVariant[] = p.variants
    .filter((v) => v.id !== null)
    .map((v) =>
      compact({
        id: v.id as string,
        sku: v.sku,
        price: amount(v.price, currency),
        barcode: v.barcode,
        options: variantOptions(v),
      }),
    );
  const single = p.variants.length === 1 ? p.variants[0] : undefined;
  const categoryName = typeof p.category === "string" ? p.category : (p.category?.full_name ?? p.category?.name ?? null);
  const categories = [...new Set([p.product_type, categoryName].filter((c): c is string => !!c && c.trim() !== ""))];
  const description = htmlToText(p.body_html);
  return productEventBody(storeActor(ctx), ctx.settings.source, {
    id: p.id,
    name: p.title,
    description,
    url: productUrl(ctx.storefrontUrl, p.handle),
    image_url: p.image?.src ?? p.images.find((i) => i.src)?.src ?? undefined,
    vendor: p.vendor,
    // Shopify's vendor is the product's brand (the theme's structured data uses it so).
    brand: p.vendor,
    // The customer-facing id: the handle in the product's storefront address.
    public_id: p.handle,
    type: p.product_type,
    tags: p.tags ?? [],
    categories,
    price: minPrice(p, currency),
    currency,
    variants,
    sku: single?.sku,
    barcode: single?.barcode,
    variant_id: single?.id,
    created_at: p.created_at,
    modified_at: p.updated_at,
  });
}

function productState(advertised: boolean, deleted = false): ProductSyncState {
  return { kind: "product", advertised, deleted };
}

export function mapProduct(topic: "create" | "update", p: ProductPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "product");
  const objectKey = productObjectKey(p.id);
  const objectUpdatedAt = p.updated_at;
  if (prior?.deleted) return { objectKey, objectUpdatedAt, calls: [], nextState: prior, skipped: "product was deleted" };
  const live = isAdvertised(p);

  if (!live) {
    // Unknown prior (e.g. synced before this state existed) counts as advertised: withdraw it.
    const wasAdvertised = topic === "update" && prior?.advertised !== false;
    if (!wasAdvertised) {
      return { objectKey, objectUpdatedAt, calls: [], nextState: productState(false), skipped: `product is not live (status ${p.status ?? "unknown"}, ${p.published_at ? "published" : "unpublished"}): not advertised` };
    }
    const body = productEventBody(storeActor(ctx), ctx.settings.source, { id: p.id, modified_at: p.updated_at });
    return { objectKey, objectUpdatedAt, calls: [eventCall("product", "deleted", body)], nextState: productState(false) };
  }

  const body = productBodyFrom(p, ctx);
  // created: a create, or a product we withdrew/never announced going live. An update that
  // changes nothing we send (inventory) is dropped by the pipeline's content hash.
  const action = topic === "create" || prior?.advertised === false ? "created" : "updated";
  return { objectKey, objectUpdatedAt, calls: [eventCall("product", action, body)], nextState: productState(true) };
}

export function mapProductDelete(productId: string, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "product");
  const objectKey = productObjectKey(productId);
  const nextState = productState(false, true);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: "already deleted" };
  if (prior?.advertised === false) {
    return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: "product was never advertised (or already withdrawn)" };
  }
  const body = productEventBody(storeActor(ctx), ctx.settings.source, { id: productId, modified_at: ctx.now.toISOString() });
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("product", "deleted", body)], nextState };
}
