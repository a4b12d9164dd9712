import { z } from "zod";
import { logger } from "../logger.server";
import { messageOf } from "../errors";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import { isValidZone } from "./time-zone";

const SHOP_TIMEZONE_QUERY = `#graphql
  query ShopTimezone { shop { ianaTimezone } }`;
const answerSchema = z.object({ shop: z.object({ ianaTimezone: z.string() }) });

// Page loads refresh every few seconds (the health page polls): the zone is asked for once in a while.
const CACHE_MS = 10 * 60_000;
const cache = new Map<string, { zone: string; until: number }>();

/**
 * The store's time zone (Shopify `shop.ianaTimezone`, what the merchant sees everywhere else in the
 * admin), for showing dates on the admin pages; `fallback` (else UTC) when Shopify cannot be asked.
 */
export async function storeTimeZone(shop: string, fallback: string | null = null): Promise<string> {
  const cached = cache.get(shop);
  if (cached && cached.until > Date.now()) return cached.zone;
  try {
    const zone = (await adminData(shop, answerSchema, SHOP_TIMEZONE_QUERY, {}, MERCHANT_WAITING)).shop.ianaTimezone;
    if (isValidZone(zone)) {
      cache.set(shop, { zone, until: Date.now() + CACHE_MS });
      return zone;
    }
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "store time zone lookup failed");
  }
  return isValidZone(fallback) ? fallback : "UTC";
}
