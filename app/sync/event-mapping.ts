/**
 * What each event field the marketing service accepts is filled from, and why the others are left
 * out: the source of docs/event-mapping.md (scripts/event-mapping.ts writes its tables;
 * test/sync/event-mapping.test.ts holds the tables, the service schemas and the mappers' output
 * together). Pure data: the mappers do not read it.
 */
import { SUBSCRIPTION_STATES } from "./mappers/subscriptions";

/** A field: its Shopify source, or `null` and why it is left out. */
export interface FieldRow {
  field: string;
  source: string | null;
  note?: string;
}
export interface FieldTable {
  /** Anchor and heading of the table in the document. */
  name: string;
  /** Which Shopify topics (or app moments) produce it. */
  from: string;
  rows: FieldRow[];
}

const sent = (field: string, source: string, note?: string): FieldRow => ({ field, source, ...(note ? { note } : {}) });
const out = (field: string, why: string): FieldRow => ({ field, source: null, note: why });

/** Fields every event endpoint takes (§4.5 common fields). */
export const COMMON_FIELDS: FieldTable = {
  name: "Common fields (every event)",
  from: "every mapper",
  rows: [
    sent("email", "the customer's email when one is known (order email, customer email, checkout email)"),
    sent("referenceId", "the Shopify customer id when no email is known; product events: `shop:<shop domain>` (see Product events)"),
    out("uuid", "the app keeps no event uuids: email or referenceId always name the person"),
    sent("source", "the shop's `source` setting (default `shopify`)"),
    sent("silent", "`true` for events of a history import, an unknown-object lookup or a reconcile: old news starts no automation"),
    out("test", "the app never sends test events: they store nothing"),
  ],
};

export const EVENT_TABLES: Record<"cart" | "product" | "order" | "customer" | "user" | "subscription", FieldTable> = {
  cart: {
    name: "Cart events",
    from: "the web pixel's product_added_to_cart / product_removed_from_cart / cart_viewed / checkout_started (app proxy) → cart/created|updated; checkouts/create|update → cart/updated; the abandonment timer → cart/abandoned. carts/* webhooks are not subscribed: they name no person",
    rows: [
      sent("id", "cart token (pixel: the token of Shopify's cart id, its `?key=` secret dropped; checkouts: `cart_token`, else the checkout token), so a cart's events share one id"),
      sent("occurredAt", "`updated_at` (cart/abandoned: when the reminder is sent)"),
      sent("products", "`line_items` (Line items table)"),
      sent("total", "checkouts: Σ line totals after line discounts; pixel cart_viewed / checkout_started: Shopify's cart or checkout total (none on an add)", "checkout `total_price` adds tax and shipping, which the pixel's cart total does not have: left out"),
      sent("total_products", "Σ line quantities"),
      sent("url", "pixel: the storefront page the event happened on; checkouts: `abandoned_checkout_url`"),
      sent("currency", "pixel: the cart's `currencyCode`; checkout `presentment_currency`"),
      sent("modified_at", "`updated_at`"),
    ],
  },
  product: {
    name: "Product events",
    from: "products/create|update|delete → product/created|updated|deleted (live products only)",
    rows: [
      sent("id", "product id"),
      sent("modified_at", "`updated_at`"),
      sent("created_at", "`created_at`"),
      sent("name", "`title`"),
      sent("description", "`body_html` as plain text"),
      sent("url", "storefront `/products/<handle>`"),
      sent("image_url", "`image.src`, else the first image"),
      sent("sku", "the variant's `sku` when the product has one variant"),
      sent("barcode", "the variant's `barcode` when the product has one variant"),
      sent("vendor", "`vendor`"),
      sent("type", "`product_type`"),
      sent("brand", "`vendor`", "Shopify's vendor field is the product's brand"),
      sent("public_id", "`handle`", "the id a shopper sees, in the product's address"),
      sent("variant_id", "the variant's id when the product has one variant"),
      sent("currency", "the shop currency"),
      sent("price", "the lowest variant `price`"),
      sent("categories", "`product_type` and the taxonomy `category` name"),
      sent("tags", "`tags`"),
      sent("variants", "`variants` (id, sku, price, barcode, options without `Default Title`); past the 100 a webhook details, read from the Admin API (`variant_gids` names them)"),
    ],
  },
  order: {
    name: "Order events",
    from: "orders/* and refunds/create → order/created|updated|completed|deleted",
    rows: [
      sent("id", "order id"),
      sent("occurred_at", "`processed_at`, else `created_at` (created, and an order first seen through an update: a history import, the reconcile sweep); `updated_at` (updated, completed); `cancelled_at` (cancelled); the edit's `committed_at` (orders/edited); the refund's `processed_at` (refunds)"),
      sent("products", "`line_items` (Line items table)"),
      sent("currency", "`currency` (shop currency)"),
      sent("publicId", "`name` (`#1001`), else `order_number`"),
      sent("total", "`current_total_price` (the order after edits), else `total_price` (after discounts, with shipping and taxes)"),
      sent("shipping", "`current_shipping_price_set`, else `total_shipping_price_set`, else Σ shipping lines"),
      sent("discounts", "`current_total_discounts`, else `total_discounts`"),
      sent("taxes", "`current_total_tax`, else `total_tax`"),
      sent("fees", "`current_total_additional_fees_set`"),
      sent("status", "financial, fulfillment and refund state (`paid`, `fulfilled`, `refunded`, …)"),
      sent("url", "`order_status_url`"),
      sent("phone", "`phone`, else the billing address phone"),
      sent("billing_address", "`billing_address`"),
      sent("shipping_address", "`shipping_address`"),
      sent("payment_gateway", "the first of `payment_gateway_names`"),
      sent("_ls", "the website tracker's hash from the cart attributes (`note_attributes`)"),
    ],
  },
  customer: {
    name: "Customer events",
    from: "customers/create|update|delete → customer/created|updated|deleted; subscription contracts → customer/updated (subscriptions[] only)",
    rows: [
      sent("id", "customer id"),
      sent("is_contact", "Settings → customer events create contacts (always `false` on customer/deleted)"),
      sent("first_name", "`first_name`"),
      sent("last_name", "`last_name`"),
      sent("name", "`first_name` + `last_name`"),
      sent("customer_email", "`email`"),
      sent("status", "`state` (`enabled`, `disabled`, `invited`, `declined`)"),
      sent("phone", "`phone`"),
      sent("url", "the customer's page in the Shopify admin (`admin.shopify.com/store/<handle>/customers/<id>`)"),
      out("avatar_url", "Shopify customers have no picture"),
      sent("currency", "`currency`"),
      out("payment_gateway", "a customer has none in Shopify; each order's is on its order events"),
      out("crm", "no CRM is involved: Shopify is the source"),
      sent("created_at", "`created_at`"),
      sent("modified_at", "`updated_at`"),
      out("user_id", "the customer's store account is the same Shopify customer: user events carry the same `id`"),
      out("public_id", "Shopify shows customers no id of their own"),
      sent("purchase_count", "`orders_count` (when Shopify still sends it)"),
      sent("purchase_value", "`total_spent` (when Shopify still sends it)"),
      sent("address", "`default_address`"),
      out("billing_address", "Shopify keeps no billing address on a customer, only on each order (order events carry it)"),
      sent("shipping_address", "`default_address`", "the address Shopify's checkout ships to unless the buyer picks another"),
      out("user", "the store account's state travels as user events (customers/enable|disable)"),
      out("plan", "a customer can hold several subscription contracts: each is in `subscriptions[]`"),
      out("plan_name", "as `plan`"),
      out("plan_interval", "as `plan`"),
      out("plan_id", "as `plan`"),
      out("plan_amount", "as `plan`"),
      out("plan_interval_count", "as `plan`"),
      sent("subscriptions", "every subscription contract of the customer the app has seen (Customer subscriptions table)"),
    ],
  },
  user: {
    name: "User events",
    from: "customers/enable → user/created (the first), user/updated (later); customers/disable → user/updated with status `disabled`",
    rows: [
      sent("id", "customer id"),
      sent("is_contact", "Settings → customer events create contacts when the account is enabled; `false` when disabled"),
      sent("username", "`email`"),
      sent("first_name", "`first_name`"),
      sent("last_name", "`last_name`"),
      sent("display_name", "`first_name` + `last_name`"),
      out("role", "store accounts have no roles"),
      out("url", "the customer's admin page goes as the customer event's `url`"),
      out("avatar_url", "Shopify customers have no picture"),
      sent("status", "the topic: `enabled` or `disabled` (the body's `state` can lag)"),
      sent("created_at", "`created_at`"),
      sent("modified_at", "`updated_at`"),
      out("deleted_at", "a disabled store account is not a deleted one; a deleted customer is the customer event's `deleted`"),
      out("last_login", "Shopify does not tell apps when a customer signed in"),
    ],
  },
  subscription: {
    name: "Subscription events",
    from: "subscription_contracts/*, subscription_billing_attempts/* (Subscription states table)",
    rows: [
      sent("id", "subscription contract id"),
      sent("url", "the customer's account page on the store (`/account`), where customer accounts list subscriptions", "Shopify sends no link of the contract itself"),
      sent("currency", "`currency_code` (billing attempts: the contract's, as last seen)"),
      sent("products", "contract `lines` (Line items table), read from the Admin API's `subscriptionContract` when the webhook has none (API 2026-04); billing attempts carry no lines"),
    ],
  },
};

/** Line items of cart, order and subscription events. */
export const LINE_ITEM_TABLE: FieldTable = {
  name: "Line items",
  from: "order, refund, cart and checkout `line_items`; subscription contract `lines`",
  rows: [
    sent("id", "`product_id`, else the line's own id: purchases join the product events"),
    sent("name", "`name` / `title` (subscriptions: `title`, `variant_title`)"),
    sent("url", "storefront `/variants/<variant_id>`, which opens the product page on that variant", "line payloads carry no product handle"),
    sent("image_url", "the line's image (checkouts, subscriptions `variant_image`)"),
    sent("sku", "`sku` (cart and order only: the interface has no sku on subscription lines)"),
    sent("brand", "`vendor`"),
    sent("variant_id", "`variant_id`"),
    sent("price", "`price` (subscriptions: `current_price`)"),
    sent("total", "price × quantity − the line's discounts (orders: of the quantity left after edits, discounts and taxes in proportion)"),
    sent("discounts", "the line's `discount_allocations` (orders, checkouts)"),
    sent("taxes", "Σ the line's `tax_lines`"),
    out("fees", "Shopify charges fees per order (order `fees`), not per line"),
    out("shipping", "Shopify charges shipping per order (order `shipping`), not per line"),
    sent("quantity", "`current_quantity` (orders: what is left after edits; a line at 0 is left out), else `quantity`"),
  ],
};

export const ADDRESS_TABLE: FieldTable = {
  name: "Addresses",
  from: "order `billing_address` / `shipping_address`, customer `default_address`",
  rows: [
    out("label", "Shopify addresses have no label"),
    sent("first_name", "`first_name`"),
    sent("last_name", "`last_name`"),
    sent("phone", "`phone`"),
    sent("company", "`company`"),
    sent("address1", "`address1`"),
    sent("address2", "`address2`"),
    sent("city", "`city`"),
    sent("state", "`province`, else `province_code`"),
    sent("postal_code", "`zip`"),
    sent("country", "`country`, else `country_code`"),
  ],
};

export const CUSTOMER_SUBSCRIPTION_TABLE: FieldTable = {
  name: "Customer subscriptions",
  from: "the customer event's `subscriptions[]`, one item per contract, from the contract webhooks",
  rows: [
    out("plan", "Shopify's selling plan has an id and a name (`plan_id`, `plan_name`), no third code"),
    sent("plan_name", "the first line's `selling_plan_name`, when Shopify sends it"),
    sent("plan_interval", "`billing_policy.interval` (`day`, `week`, `month`, `year`)"),
    sent("status", "contract `status` (`active`, `paused`, `cancelled`, `expired`, `failed`)"),
    sent("currency", "`currency_code`"),
    sent("plan_id", "the first line's `selling_plan_id`, when Shopify sends it"),
    sent("plan_amount", "Σ line `current_price` × `quantity`: what one billing cycle costs"),
    sent("plan_interval_count", "`billing_policy.interval_count`"),
    sent("start_date", "`created_at`, else when subscription_contracts/create arrived"),
    sent("end_date", "when the contract became cancelled, expired or failed (`updated_at`, else arrival)"),
    out("trial_end_date", "Shopify subscription contracts have no trial"),
    sent("canceled_at", "when the contract became cancelled (`updated_at`, else arrival)"),
  ],
};

/**
 * The contact's tags (person upsert `tags`: name → true adds, false removes): the customer's own
 * Shopify tags and the mirrored segments' tags (app/segments/segments.server.ts names them).
 */
export const CONTACT_TAG_TABLE: FieldTable = {
  name: "Contact tags",
  from: "customers/create|update (whole lists), customer.tags_added|tags_removed, customer.joined_segment|left_segment → person upsert `tags`",
  rows: [
    sent("<customer tag>", "each Shopify customer tag: `true` when added, `false` when removed (a whole list is compared with the last one)", "tags set in the service by anyone else stay"),
    sent(
      "shopify-segment:<segment name>",
      "customer.joined_segment → `true`, customer.left_segment → `false`, for the segments picked in Settings; any other segment is ignored with the reason",
      "the segment's name when it was picked (commas become spaces); a name already taken by another picked segment gets ` (<segment id>)`; kept apart from the customer's tags, so a whole tag list never removes it",
    ),
  ],
};

/** Every table of the document, in its order. */
export const FIELD_TABLES: FieldTable[] = [
  COMMON_FIELDS,
  EVENT_TABLES.cart,
  EVENT_TABLES.product,
  EVENT_TABLES.order,
  EVENT_TABLES.customer,
  EVENT_TABLES.user,
  EVENT_TABLES.subscription,
  LINE_ITEM_TABLE,
  ADDRESS_TABLE,
  CUSTOMER_SUBSCRIPTION_TABLE,
  CONTACT_TAG_TABLE,
];

const cell = (s: string) => s.replace(/\|/g, "\\|");

function renderTable(t: FieldTable): string {
  const lines = [`### ${t.name}`, "", `From: ${cell(t.from)}.`, "", "| Field | Shopify source | Note |", "|---|---|---|"];
  for (const r of t.rows) lines.push(`| \`${r.field}\` | ${r.source === null ? "**left out**" : cell(r.source)} | ${cell(r.note ?? "")} |`);
  return lines.join("\n");
}

function renderStates(): string {
  const lines = [
    "### Subscription states",
    "",
    "| State | Shopify topics | Subscription event | Custom event (`POST /api/events`) | Meaning |",
    "|---|---|---|---|---|",
  ];
  for (const [state, e] of Object.entries(SUBSCRIPTION_STATES)) {
    const entry = e as { topics: readonly string[]; status: string | null; action: string | null; eventName: string | null; meaning: string };
    const topics = entry.topics.map((t) => `\`${t}\``).join(", ") + (entry.status ? `, or any contract topic whose \`status\` becomes \`${entry.status}\`` : "");
    lines.push(
      `| ${state} | ${topics} | ${entry.action ? `\`subscription/${entry.action}\`` : "—"} | ${entry.eventName ? `\`${entry.eventName}\`` : "—"} | ${cell(entry.meaning)} |`,
    );
  }
  return lines.join("\n");
}

export const GENERATED_START = "<!-- generated by scripts/event-mapping.ts from app/sync/event-mapping.ts: do not edit below -->";
export const GENERATED_END = "<!-- end of generated tables -->";

/** The generated part of docs/event-mapping.md. */
export function renderEventMapping(): string {
  return [GENERATED_START, "", renderStates(), "", ...FIELD_TABLES.flatMap((t) => [renderTable(t), ""]), GENERATED_END].join("\n");
}
