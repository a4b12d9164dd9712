import { config } from "../config.server";
import { prisma } from "../db.server";
import { logger } from "../logger.server";
import { createMarketingClient, type MarketingClient } from "../services/marketing/client.server";
import { parseSettings, type ShopSettings } from "../sync/settings";
import { canReceiveDeliveries } from "./eligibility";
import { decryptSecret, encryptSecret } from "./secrets.server";

export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConnectionError";
  }
}

/**
 * Connects a shop to the marketing service: the key is checked against the service first, then
 * stored encrypted. Reconnecting resumes a paused shop.
 */
export async function connectShop(domain: string, input: { apiKey: string; baseUrl?: string }) {
  const baseUrl = input.baseUrl ?? config().marketingApiUrl;
  const client = createMarketingClient({ baseUrl, apiKey: input.apiKey, timeoutMs: config().marketingApiTimeoutMs });
  if (!(await client.authenticated())) throw new ConnectionError("The marketing service did not accept this API key.");
  const account = await client.account.get();
  const data = {
    serviceBaseUrl: baseUrl,
    serviceKeyEnc: encryptSecret(input.apiKey, domain),
    connectedAt: new Date(),
    pausedAt: null,
    pauseReason: null,
  };
  await prisma().shop.upsert({ where: { domain }, create: { domain, ...data }, update: data });
  clients.delete(domain);
  logger().info({ shop: domain, accountId: account.id }, "shop connected");
  return account;
}

export async function pauseShop(domain: string, reason: string): Promise<void> {
  await prisma().shop.updateMany({ where: { domain, pausedAt: null }, data: { pausedAt: new Date(), pauseReason: reason } });
  clients.delete(domain);
  logger().warn({ shop: domain, reason }, "shop paused: the service rejected its key");
}

export interface ShopContext {
  domain: string;
  settings: ShopSettings;
  storefrontUrl: string;
  currency?: string;
}

export async function shopContext(domain: string): Promise<ShopContext> {
  const shop = await prisma().shop.findUnique({ where: { domain } });
  return {
    domain,
    settings: parseSettings(shop?.settings ?? {}),
    storefrontUrl: shop?.storefrontUrl ?? `https://${domain}`,
    currency: shop?.currency ?? undefined,
  };
}

// One client per connected shop, dropped when its key changes or it is paused.
const clients = new Map<string, { sealed: string; client: MarketingClient }>();

/** The service client for a shop that can receive deliveries, else null. Retries belong to the queue. */
export async function serviceClientFor(domain: string): Promise<MarketingClient | null> {
  const shop = await prisma().shop.findUnique({
    where: { domain },
    select: { serviceKeyEnc: true, serviceBaseUrl: true, pausedAt: true, uninstalledAt: true },
  });
  if (!shop?.serviceKeyEnc || !canReceiveDeliveries(shop)) return null;
  const cached = clients.get(domain);
  if (cached?.sealed === shop.serviceKeyEnc) return cached.client;
  const client = createMarketingClient({
    baseUrl: shop.serviceBaseUrl ?? config().marketingApiUrl,
    apiKey: decryptSecret(shop.serviceKeyEnc, domain),
    timeoutMs: config().marketingApiTimeoutMs,
    retries: 0,
    onRequest: (info) => logger().debug({ shop: domain, ...info }, "service request"),
  });
  clients.set(domain, { sealed: shop.serviceKeyEnc, client });
  return client;
}
