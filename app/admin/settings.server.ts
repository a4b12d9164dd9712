import { z } from "zod";
import { prisma } from "../db.server";
import { logger } from "../logger.server";
import { sweepSignupsSoon } from "../signups/signups.server";
import { syncTracker } from "../storefront/tracker.server";
import { defaultSettings, parseSettings, shopSettingsSchema, type ShopSettings } from "../sync/settings";
import { fieldErrors } from "./forms";

/** The shop's saved settings; unreadable stored settings fall back to the defaults. */
export async function loadSettings(shop: string): Promise<ShopSettings> {
  const row = await prisma().shop.findUnique({ where: { domain: shop }, select: { settings: true } });
  try {
    return parseSettings(row?.settings ?? {});
  } catch {
    return defaultSettings;
  }
}

// The HTML form: checkboxes send "on" or nothing, numbers arrive as text.
const checkbox = z.preprocess((v) => v === "on" || v === "true", z.boolean());
const settingsFormSchema = shopSettingsSchema.extend({
  syncNonSubscribers: checkbox,
  deleteContactOnCustomerDelete: checkbox,
  customerEventsCreateContacts: checkbox,
  storefrontEvents: checkbox,
  signupsToShopify: checkbox,
  abandonmentDelayMinutes: z.preprocess(
    (v) => (typeof v === "string" && v.trim() !== "" ? Number(v) : v),
    z
      .number({ error: "Enter a number of minutes." })
      .int({ error: "Enter a whole number of minutes." })
      .min(15, { error: "The shortest delay is 15 minutes." })
      .max(4320, { error: "The longest delay is 4320 minutes (3 days)." }),
  ),
  source: z.string().trim().min(1, { error: "Enter a source name." }).max(100, { error: "Use at most 100 characters." }),
});

export type SaveSettingsResult = { ok: true; settings: ShopSettings } | { ok: false; errors: Record<string, string> };

/**
 * Validates and saves the settings form. Mapping reads the settings for every new piece of work
 * (shopContext), so a save applies at once.
 */
export async function saveSettings(shop: string, form: FormData): Promise<SaveSettingsResult> {
  const input = Object.fromEntries([...form.entries()].filter(([k]) => k !== "intent"));
  const parsed = settingsFormSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error) };
  const before = await loadSettings(shop);
  // The erasure choice is made on the Privacy page (savePrivacyChoice), not on this form.
  const settings = shopSettingsSchema.parse({ ...parsed.data, eraseContactOnRedact: before.eraseContactOnRedact });
  await prisma().shop.upsert({ where: { domain: shop }, create: { domain: shop, settings }, update: { settings } });
  logger().info({ shop }, "settings saved");
  // Another tracker mode: the storefront gets its snippet now (never throws; retried if it fails).
  if (before.trackerMode !== settings.trackerMode) await syncTracker(shop);
  // Signups turned on: they are added within seconds, not at the next interval (a connected shop only).
  if (settings.signupsToShopify && !before.signupsToShopify && (await prisma().shop.count({ where: { domain: shop, serviceKeyEnc: { not: null } } }))) await sweepSignupsSoon(shop);
  return { ok: true, settings };
}

/** The Privacy page's choice: whether an erasure request also deletes the contact in the service. */
export async function savePrivacyChoice(shop: string, eraseContactOnRedact: boolean): Promise<ShopSettings> {
  const settings = { ...(await loadSettings(shop)), eraseContactOnRedact };
  await prisma().shop.upsert({ where: { domain: shop }, create: { domain: shop, settings }, update: { settings } });
  logger().info({ shop, eraseContactOnRedact }, "privacy choice saved");
  return settings;
}

/**
 * The consent mode chosen on the Connection page, saved before the connection so that the history
 * import it starts already follows it. Anything but the two modes is refused.
 */
export async function saveConsentChoice(shop: string, value: FormDataEntryValue | null): Promise<{ ok: true } | { ok: false; errors: Record<string, string> }> {
  const parsed = shopSettingsSchema.shape.optInMode.unwrap().safeParse(value);
  if (!parsed.success) return { ok: false, errors: { optInMode: "Choose how to treat the consent of customers who subscribed at Shopify." } };
  const settings = { ...(await loadSettings(shop)), optInMode: parsed.data };
  await prisma().shop.upsert({ where: { domain: shop }, create: { domain: shop, settings }, update: { settings } });
  logger().info({ shop, optInMode: parsed.data }, "consent choice saved");
  return { ok: true };
}

/** The signups choice made on the Connection page (app/signups): saved with the connection. */
export async function saveSignupsChoice(shop: string, signupsToShopify: boolean): Promise<void> {
  const settings = { ...(await loadSettings(shop)), signupsToShopify };
  await prisma().shop.upsert({ where: { domain: shop }, create: { domain: shop, settings }, update: { settings } });
  logger().info({ shop, signupsToShopify }, "signups choice saved");
}
