import { z } from "zod";
import { prisma } from "../db.server";
import { logger } from "../logger.server";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import { storedAccount, type ConnectedAccount } from "./connection.server";
import { canReceiveDeliveries } from "./eligibility";
import { messageOf } from "../errors";

/** not_connected: no key; paused: the service rejected the stored key (never "connected"). */
export type ConnectionState = "not_installed" | "not_connected" | "paused" | "connected";

export interface ShopSummary {
  domain: string;
  installed: boolean;
  /** true only when the shop can receive deliveries (the rule in eligibility.ts) */
  connected: boolean;
  state: ConnectionState;
  pausedAt: Date | null;
  pauseReason: string | null;
  connectedAt: Date | null;
  account: ConnectedAccount | null;
}

const SHOP_PROFILE_QUERY = `#graphql
  query ShopProfile { shop { currencyCode primaryDomain { url } } }`;

const shopProfileSchema = z.object({
  shop: z.object({ currencyCode: z.string().length(3), primaryDomain: z.object({ url: z.url() }) }),
});

/**
 * Records an install (or re-install) of the app on a shop, with what the mappers need from the
 * shop itself when `askShopify`: its storefront origin (product URLs) and currency, read with the
 * offline session the install just stored. Without them the app still works
 * (https://<shop>.myshopify.com, payload currencies), so a failed lookup only logs.
 */
export async function recordInstall(domain: string, scopes: string | undefined, options: { askShopify?: boolean } = {}): Promise<void> {
  let profile: { storefrontUrl: string; currency: string } | undefined;
  if (options.askShopify) {
    try {
      const { shop } = await adminData(domain, shopProfileSchema, SHOP_PROFILE_QUERY, {}, MERCHANT_WAITING);
      profile = { storefrontUrl: new URL(shop.primaryDomain.url).origin, currency: shop.currencyCode };
    } catch (error) {
      logger().warn({ shop: domain, err: messageOf(error) }, "shop profile lookup failed");
    }
  }
  await prisma().shop.upsert({
    where: { domain },
    create: { domain, scopes: scopes ?? null, ...profile },
    update: { scopes: scopes ?? null, installedAt: new Date(), uninstalledAt: null, ...profile },
  });
}

export async function describeShop(domain: string): Promise<ShopSummary> {
  const shop = await prisma().shop.findUnique({ where: { domain } });
  const installed = Boolean(shop && !shop.uninstalledAt);
  const connected = canReceiveDeliveries(shop);
  const state: ConnectionState = !installed
    ? "not_installed"
    : connected
      ? "connected"
      : shop?.serviceKeyEnc && shop.pausedAt
        ? "paused"
        : "not_connected";
  return {
    domain,
    installed,
    connected,
    state,
    pausedAt: shop?.pausedAt ?? null,
    pauseReason: shop?.pauseReason ?? null,
    connectedAt: shop?.connectedAt ?? null,
    account: shop?.serviceKeyEnc ? storedAccount(shop.serviceAccount) : null,
  };
}
