import { z } from "zod";

/**
 * Per-shop sync settings. Every default is the privacy-safe choice: nothing is pushed as a
 * contact or deleted unless the merchant opts in, and consent is what the customer gave Shopify.
 */
export const shopSettingsSchema = z.object({
  /**
   * trust_shopify (default for shops created from 2026-11-26): Shopify's recorded consent is kept —
   * a customer subscribed at Shopify is subscribed in the service, no second confirmation.
   * double_opt_in: a Shopify "subscribed" customer gets the service's confirmation email, unless
   * Shopify's own double opt-in confirmed them (confirmed_opt_in). Shops stored before keep their
   * choice (migration 202611261001_keep_opt_in_mode wrote the old default into their settings).
   * docs/customers-and-consent.md has both modes' outcomes.
   */
  optInMode: z.enum(["double_opt_in", "trust_shopify"]).default("trust_shopify"),
  /** Push customers without marketing consent as inactive/unconfirmed contacts. */
  syncNonSubscribers: z.boolean().default(false),
  /** Delete the contact when the Shopify customer is deleted; otherwise record `customer/deleted`. */
  deleteContactOnCustomerDelete: z.boolean().default(false),
  /**
   * On a customer's erasure request (customers/redact) also delete their contact in the service.
   * On by default: erasure is the customer's right; the merchant may keep the contact (the
   * Privacy page shows which), and then answers for it in their marketing account.
   */
  eraseContactOnRedact: z.boolean().default(true),
  /** Wait this long after the last checkout change before sending `cart/abandoned`. */
  abandonmentDelayMinutes: z.number().int().min(15).max(4320).default(60),
  /**
   * When `order/completed` is sent. Default paid_and_fulfilled: "completed" drives post-purchase
   * flows (thank-you, review request, cross-sell). Sending it on payment alone asks for reviews of
   * goods not yet shipped; on fulfilment alone it fires for unpaid orders (manual/COD, payment
   * pending) that may still be voided. Both together is the moment the purchase is really done.
   */
  orderCompletedOn: z.enum(["paid_and_fulfilled", "paid", "fulfilled"]).default("paid_and_fulfilled"),
  /** `is_contact` on customer/user events: let those events create/update contacts. */
  customerEventsCreateContacts: z.boolean().default(false),
  /**
   * The storefront tracker snippet mode. modern: the service's current tracker, which sets no
   * cookie before consent (the privacy-safe default); legacy: the old cookie-based snippet;
   * compat: both, for themes that still call the old API.
   */
  trackerMode: z.enum(["modern", "legacy", "compat"]).default("modern"),
  /** Send storefront browsing events (product viewed, cart viewed); off unless the merchant opts in. */
  storefrontEvents: z.boolean().default(false),
  /**
   * People who signed up through the marketing service's own forms (any source but the app's) and
   * confirmed become Shopify customers, subscribed and tagged (app/signups). On by default, as
   * Shopify's bar for email apps asks (customer data synced to and from Shopify); chosen at
   * connection and in Settings. Shops connected before 2026-11-28 keep it off until they choose
   * (migration 20261128120000_signup_customers).
   */
  signupsToShopify: z.boolean().default(true),
  /** The `source` field of every service call. */
  source: z.string().trim().min(1).max(100).default("shopify"),
});

export type ShopSettings = z.output<typeof shopSettingsSchema>;
export type ShopSettingsInput = z.input<typeof shopSettingsSchema>;

export const defaultSettings: ShopSettings = Object.freeze(shopSettingsSchema.parse({}));

/**
 * Parses stored or submitted settings (an object or its JSON text). Missing keys take the
 * defaults, unknown keys are dropped; an invalid value throws the ZodError (for the settings form).
 */
export function parseSettings(json: unknown): ShopSettings {
  let value: unknown = json;
  if (typeof json === "string") value = json.trim() === "" ? {} : (JSON.parse(json) as unknown);
  if (value === null || value === undefined) value = {};
  return shopSettingsSchema.parse(value);
}
