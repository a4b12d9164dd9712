import { z } from "zod";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import type { ShopifyConsentCounts } from "./ConsentChoice";

/**
 * How many of the store's customers Shopify shows in each email-marketing state, for the consent
 * choice (Connection and Settings). Asked of Shopify, not of what the app has synced: at connection
 * nothing is synced yet. Customer segments' `email_subscription_status` filter gives an exact
 * `totalCount` per state in one call (customersCount documents no consent filter in 2026-04).
 */
const CONSENT_COUNTS_QUERY = `#graphql
  query ConsentCounts {
    subscribed: customerSegmentMembers(first: 1, query: "email_subscription_status = 'SUBSCRIBED'") { totalCount }
    pending: customerSegmentMembers(first: 1, query: "email_subscription_status = 'PENDING'") { totalCount }
    notSubscribed: customerSegmentMembers(first: 1, query: "email_subscription_status = 'NOT_SUBSCRIBED'") { totalCount }
    unsubscribed: customerSegmentMembers(first: 1, query: "email_subscription_status = 'UNSUBSCRIBED'") { totalCount }
  }`;

const count = z.object({ totalCount: z.number().int().nonnegative() });
const answerSchema = z.object({ subscribed: count, pending: count, notSubscribed: count, unsubscribed: count });

/** The counts, or null when Shopify cannot be asked (the page then says so instead of guessing). */
export async function shopifyConsentCounts(shop: string): Promise<ShopifyConsentCounts | null> {
  try {
    const data = await adminData(shop, answerSchema, CONSENT_COUNTS_QUERY, {}, MERCHANT_WAITING);
    return {
      subscribed: data.subscribed.totalCount,
      pending: data.pending.totalCount,
      notSubscribed: data.notSubscribed.totalCount,
      unsubscribed: data.unsubscribed.totalCount,
    };
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "consent counts from Shopify not readable");
    return null;
  }
}
