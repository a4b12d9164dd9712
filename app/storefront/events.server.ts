import { z } from "zod";
import { database } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import { serviceCallSchema, type ServiceCall } from "../services/marketing/schemas";
import { cartEventBody, customEventBody, eventCall, productEventBody } from "../sync/event-bodies";
import { compact } from "../sync/mappers/common";
import { parseSettings } from "../sync/settings";
import { STOREFRONT_POLICY } from "./storefront-policy";
import { hitRateLimits, type LimitedBy } from "./rate-limit.server";

/**
 * Storefront events from the web pixel (extensions/storefront-events), received through the app
 * proxy: validated, rate-limited (per address, shop and visitor), and queued as OutboundCalls (the
 * same durable queue webhooks feed), so an outage of the service loses nothing. The entry:
 * receiveStorefrontEvent.
 */

const text = (max: number) => z.string().trim().min(1).max(max);
const money = z.number().finite().min(0).max(1e12);
// Web pages only: z.url() alone accepts any scheme (javascript:, data:), which the service would show as a link.
const webUrl = () => z.url({ protocol: /^https?$/ });

const productSchema = z.strictObject({
  id: text(100),
  variantId: text(100).optional(),
  title: text(500).optional(),
  url: webUrl().max(2048).optional(),
  imageUrl: webUrl().max(2048).optional(),
  price: money.optional(),
  currency: z.string().regex(/^[A-Za-z]{3}$/).optional(),
  sku: text(255).optional(),
  vendor: text(255).optional(),
  type: text(255).optional(),
});

const lineSchema = z.strictObject({
  productId: text(100),
  variantId: text(100).optional(),
  title: text(500),
  quantity: z.number().int().min(1).max(10_000),
  price: money.optional(),
  sku: text(255).optional(),
  url: webUrl().max(2048).optional(),
  imageUrl: webUrl().max(2048).optional(),
});

const cartSchema = z.strictObject({
  /** Shopify's cart id (a gid with a `?key=` secret, or a bare token): only the token is kept. */
  id: text(500).optional(),
  currency: z.string().regex(/^[A-Za-z]{3}$/).optional(),
  total: money.optional(),
  lines: z.array(lineSchema).max(100),
});

/**
 * A signup on the storefront (tracker-loader.js): the email or phone a consenting visitor typed into
 * Shopify's newsletter, contact or account form, with the tracker's visitor id. Typed by the visitor,
 * never verified: it goes to the service only as a silent event that links the tracker's visitor to
 * it (identifiedEvent); the other events never take their person from a body (identityOf).
 */
const identifiedSchema = z
  .strictObject({
    event: z.literal("visitor_identified"),
    visitorId: text(200),
    form: z.enum(["newsletter", "contact", "account"]),
    email: z.email().max(254).optional(),
    phone: z
      .string()
      .trim()
      .max(30)
      .regex(/^\+?[\d\s().-]*\d{4}[\d\s().-]*$/, "Not a phone number")
      .optional(),
  })
  .refine((v) => v.email !== undefined || v.phone !== undefined, { message: "An email or a phone is required", path: ["email"] });

/** What the web pixel and the loader post. The email of a browsing event is never taken from here (see identityOf). */
export const storefrontEventSchema = z.discriminatedUnion("event", [
  identifiedSchema,
  z.strictObject({ event: z.literal("product_viewed"), visitorId: text(200).optional(), url: webUrl().max(2048).optional(), product: productSchema }),
  z.strictObject({ event: z.literal("product_added_to_cart"), visitorId: text(200).optional(), url: webUrl().max(2048).optional(), cart: cartSchema }),
  z.strictObject({ event: z.literal("product_removed_from_cart"), visitorId: text(200).optional(), url: webUrl().max(2048).optional(), cart: cartSchema }),
  z.strictObject({ event: z.literal("cart_viewed"), visitorId: text(200).optional(), url: webUrl().max(2048).optional(), cart: cartSchema }),
  z.strictObject({ event: z.literal("checkout_started"), visitorId: text(200).optional(), url: webUrl().max(2048).optional(), cart: cartSchema }),
]);
export type StorefrontEvent = z.infer<typeof storefrontEventSchema>;

export interface StorefrontRequest {
  shop: string;
  /** From the signed proxy query (`logged_in_customer_id`): the only customer identity trusted. */
  loggedInCustomerId: string | null;
  rawBody: string;
  /**
   * The visitor's address as Shopify's proxy forwarded it (proxy.server.ts clientIpOf; null if
   * none): the address limit's key, and the visitor key of a visitor with no id.
   */
  clientIp: string | null;
}

export type StorefrontOutcome =
  | { status: 202; body: { queued: true; event: string } }
  | { status: 202; body: { queued: false; reason: "anonymous" | "not_connected" | "disabled" } }
  | { status: 400; body: { error: string; fields?: Record<string, string> } }
  | { status: 429; body: { error: string }; retryAfterSeconds: number };

/** Authenticated by the route (proxy signature); everything else happens here. */
export async function receiveStorefrontEvent(req: StorefrontRequest): Promise<StorefrontOutcome> {
  if (Buffer.byteLength(req.rawBody, "utf8") > STOREFRONT_POLICY.maxEventBytes) {
    return { status: 400, body: { error: `Body larger than ${STOREFRONT_POLICY.maxEventBytes} bytes` } };
  }
  let json: unknown;
  try {
    json = JSON.parse(req.rawBody);
  } catch {
    return { status: 400, body: { error: "Body is not JSON" } };
  }
  const parsed = storefrontEventSchema.safeParse(json);
  if (!parsed.success) {
    const fields = Object.fromEntries(parsed.error.issues.slice(0, 10).map((i) => [i.path.join(".") || "_body", i.message]));
    return { status: 400, body: { error: "Invalid storefront event", fields } };
  }
  const event = parsed.data;
  const customerId = req.loggedInCustomerId && /^\d{1,20}$/.test(req.loggedInCustomerId) ? req.loggedInCustomerId : null;
  const visitorKey = customerId ? `customer:${customerId}` : event.visitorId ? `visitor:${event.visitorId}` : `ip:${req.clientIp ?? "unknown"}`;

  const limit = await hitRateLimits(req.shop, req.clientIp, visitorKey);
  if (!limit.allowed) {
    await bump(database().sql, req.shop, "eventsRateLimited");
    return { status: 429, body: { error: TOO_MANY[limit.limitedBy] }, retryAfterSeconds: limit.retryAfterSeconds };
  }

  const outcome = await database().sql.transaction(async (tx) => enqueue(tx, req.shop, customerId, event));
  logger().debug({ shop: req.shop, event: event.event, outcome: outcome.body }, "storefront event");
  return outcome;
}

const TOO_MANY: Record<LimitedBy, string> = {
  client: "Too many storefront events from this address",
  shop: "Too many storefront events for this shop",
  visitor: "Too many storefront events from this visitor",
};

async function enqueue(tx: SqlQueryable, shop: string, customerId: string | null, event: StorefrontEvent): Promise<StorefrontOutcome> {
  const [row] = await tx.query<{ settings: unknown; connected: boolean }>(
    // A paused shop has connected: its calls wait for the reconnection, as webhook calls do.
    `SELECT settings, ("serviceKeyEnc" IS NOT NULL AND "uninstalledAt" IS NULL) AS connected FROM "Shop" WHERE domain = $1`,
    [shop],
  );
  if (!row?.connected) {
    await bump(tx, shop, "eventsIgnored");
    return { status: 202, body: { queued: false, reason: "not_connected" } };
  }
  const settings = safeSettings(row.settings);
  if (!settings?.storefrontEvents) {
    await bump(tx, shop, "eventsIgnored");
    return { status: 202, body: { queued: false, reason: "disabled" } };
  }
  if (event.event === "visitor_identified") return identifiedEvent(tx, shop, settings.source, event);
  const person = await identityOf(tx, shop, customerId, event.visitorId);
  if (!person) {
    // No one to attach the event to: counted, never sent.
    await bump(tx, shop, "eventsAnonymous");
    return { status: 202, body: { queued: false, reason: "anonymous" } };
  }
  const now = new Date();
  let objectKey: string;
  let kind: string;
  let call: ServiceCall;
  if (event.event === "product_viewed") {
    const p = event.product;
    objectKey = `storefront-visitor:${person.email ?? person.referenceId}`;
    kind = "product";
    const body = productEventBody(person, settings.source, {
      id: p.id,
      name: p.title,
      url: p.url ?? event.url,
      image_url: p.imageUrl,
      price: p.price,
      currency: p.currency,
      sku: p.sku,
      vendor: p.vendor,
      type: p.type,
      variant_id: p.variantId,
    });
    call = serviceCallSchema.parse(eventCall("product", "viewed", body));
  } else {
    const cart = event.cart;
    const cartId = cartToken(cart.id) ?? `visitor-${event.visitorId ?? customerId}`;
    objectKey = `storefront-cart:${cartId}`;
    kind = "cart";
    // The first event seen for a cart creates it; later ones update it (one row per cart).
    // updatedAt is the cart's last event: carts quiet for 30 days are forgotten (pruneStorefrontCarts).
    const [seen] = await tx.query<{ created: boolean }>(
      `INSERT INTO "ObjectState" (shop, "objectKey", state, "updatedAt") VALUES ($1, $2, '{"kind":"storefront-cart"}'::jsonb, now())
       ON CONFLICT (shop, "objectKey") DO UPDATE SET "updatedAt" = now() RETURNING (xmax = 0) AS created`,
      [shop, objectKey],
    );
    const quantity = cart.lines.reduce((n, l) => n + l.quantity, 0);
    const body = cartEventBody(person, settings.source, {
      id: cartId,
      occurredAt: now.toISOString(),
      products: cart.lines.map((l) =>
        compact({ id: l.productId, name: l.title, variant_id: l.variantId, quantity: l.quantity, price: l.price, sku: l.sku, url: l.url, image_url: l.imageUrl }),
      ),
      total: cart.total,
      total_products: quantity,
      url: event.url,
      currency: cart.currency,
    });
    call = serviceCallSchema.parse(eventCall("cart", seen.created ? "created" : "updated", body));
  }
  await tx.query(`INSERT INTO "OutboundCall" (shop, "objectKey", kind, call) VALUES ($1, $2, $3, $4::jsonb)`, [
    shop,
    objectKey,
    kind,
    JSON.stringify(call),
  ]);
  await bump(tx, shop, "eventsQueued");
  return { status: 202, body: { queued: true, event: event.event } };
}

/**
 * The visitor's signup, for the service: a silent custom event (no automation starts from an
 * address nobody verified) on the email typed, else on the tracker's visitor, that carries the
 * tracker's visitor reference, so the service can join the visitor's browsing to the person.
 */
async function identifiedEvent(tx: SqlQueryable, shop: string, source: string, event: z.infer<typeof identifiedSchema>): Promise<StorefrontOutcome> {
  const visitor = visitorReference(event.visitorId);
  const person = event.email ? { email: event.email } : { referenceId: visitor };
  const properties = { visitorReference: visitor, form: event.form, email: event.email, phone: event.phone };
  const body = customEventBody(person, source, { silent: true, eventName: IDENTIFIED_EVENT, properties });
  const call = serviceCallSchema.parse({ op: "event.custom", body });
  await tx.query(`INSERT INTO "OutboundCall" (shop, "objectKey", kind, call) VALUES ($1, $2, $3, $4::jsonb)`, [
    shop,
    `storefront-visitor:${event.email ?? visitor}`,
    `custom:${IDENTIFIED_EVENT}`,
    JSON.stringify(call),
  ]);
  await bump(tx, shop, "eventsQueued");
  return { status: 202, body: { queued: true, event: event.event } };
}

/** The service's name for a storefront signup (docs/event-mapping.md). */
export const IDENTIFIED_EVENT = "storefront_identified";

/**
 * The person an event is attached to: the logged-in customer's email as the customer webhooks
 * last recorded it (never an address sent by the browser), else the tracker's visitor id.
 */
async function identityOf(
  tx: SqlQueryable,
  shop: string,
  customerId: string | null,
  visitorId: string | undefined,
): Promise<{ email: string; referenceId?: undefined } | { referenceId: string; email?: undefined } | null> {
  if (customerId) {
    const [row] = await tx.query<{ state: unknown }>(`SELECT state FROM "ObjectState" WHERE shop = $1 AND "objectKey" = $2`, [
      shop,
      `customer:${customerId}`,
    ]);
    const known = z.looseObject({ email: z.string().min(3).nullable().optional(), deleted: z.boolean().optional() }).safeParse(row?.state);
    if (known.success && known.data.email && !known.data.deleted) return { email: known.data.email };
  }
  return visitorId ? { referenceId: visitorReference(visitorId) } : null;
}

/**
 * An anonymous visitor's reference in the service: namespaced, so that no visitor id the browser
 * chooses can equal a customer's reference (their Shopify id, digits) or the store's (`shop:…`)
 * and file events on that person's contact.
 */
export const visitorReference = (visitorId: string): string => `visitor:${visitorId}`;

/** `gid://shopify/Cart/<token>?key=<secret>` or `<token>` → `<token>`; the key never leaves. */
function cartToken(id: string | undefined): string | undefined {
  if (!id) return undefined;
  const token = id.split("?")[0].split("/").pop();
  return token && /^[\w-]{1,200}$/.test(token) ? token : undefined;
}

function safeSettings(value: unknown) {
  try {
    return parseSettings(value ?? {});
  } catch {
    return null;
  }
}

type Counter = "eventsQueued" | "eventsAnonymous" | "eventsIgnored" | "eventsRateLimited";

async function bump(tx: SqlQueryable, shop: string, counter: Counter): Promise<void> {
  await tx.query(
    `INSERT INTO "StorefrontState" (shop, "${counter}", "lastEventAt", "updatedAt") VALUES ($1, 1, now(), now())
     ON CONFLICT (shop) DO UPDATE SET "${counter}" = "StorefrontState"."${counter}" + 1, "lastEventAt" = now(), "updatedAt" = now()`,
    [shop],
  );
}

/** What the admin shows about storefront events. */
export async function storefrontEventCounts(shop: string) {
  const [row] = await database().sql.query<{
    queued: number;
    anonymous: number;
    ignored: number;
    rateLimited: number;
    lastEventAt: Date | null;
  }>(
    `SELECT "eventsQueued" AS queued, "eventsAnonymous" AS anonymous, "eventsIgnored" AS ignored,
            "eventsRateLimited" AS "rateLimited", "lastEventAt" AT TIME ZONE 'UTC' AS "lastEventAt"
       FROM "StorefrontState" WHERE shop = $1`,
    [shop],
  );
  return row ?? { queued: 0, anonymous: 0, ignored: 0, rateLimited: 0, lastEventAt: null };
}
