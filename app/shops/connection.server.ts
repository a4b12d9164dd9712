import { z } from "zod";
import { BackfillRefused, requestBackfill } from "../backfill/backfill.server";
import { config } from "../config.server";
import { Prisma } from "../generated/prisma/client";
import { prisma } from "../db.server";
import { logger } from "../logger.server";
import { createMarketingClient, type MarketingClient } from "../services/marketing/client.server";
import { isMarketingServiceError } from "../services/marketing/errors";
import type { Account } from "../services/marketing/schemas";
import { parseSettings, type ShopSettings } from "../sync/settings";
import { canReceiveDeliveries } from "./eligibility";
import { decryptSecret, encryptSecret } from "./secrets.server";

/** Why a key could not be connected; each has its own message for the merchant. */
export type ConnectionFailure = "wrong_key" | "account_inactive" | "plugin_key" | "unreachable" | "service_error";

export class ConnectionError extends Error {
  constructor(
    message: string,
    readonly reason: ConnectionFailure = "service_error",
  ) {
    super(message);
    this.name = "ConnectionError";
  }
}

const MESSAGES: Record<ConnectionFailure, string> = {
  wrong_key:
    "The marketing service did not accept this API key. Check that you copied the whole key from your marketing account (Settings → API keys) and try again.",
  account_inactive:
    "This marketing account is not active. Resolve its billing status in your marketing account, then connect again.",
  plugin_key:
    "This is a content-site plugin key, which cannot be used here. Create a dashboard (API) key in your marketing account and paste that instead.",
  unreachable:
    "We could not reach the marketing service. Nothing was saved; please try again in a few minutes.",
  service_error: "The marketing service answered with an error. Nothing was saved; please try again in a few minutes.",
};

function connectionError(reason: ConnectionFailure, detail?: string): ConnectionError {
  return new ConnectionError(detail ? `${MESSAGES[reason]} (${detail})` : MESSAGES[reason], reason);
}

/** Turns whatever the client threw while connecting into the merchant's message. */
function classifyConnectFailure(error: unknown): ConnectionError {
  if (error instanceof ConnectionError) return error;
  if (!isMarketingServiceError(error)) return connectionError("service_error");
  switch (error.kind) {
    case "unauthenticated":
      return connectionError("wrong_key");
    case "account_inactive":
      return connectionError("account_inactive");
    case "plugin_key_not_allowed":
      return connectionError("plugin_key");
    case "network":
    case "timeout":
      return connectionError("unreachable");
    default:
      return connectionError("service_error", error.status ? `HTTP ${error.status}` : undefined);
  }
}

/** What the admin shows about the connected account (never the key itself). */
export interface ConnectedAccount {
  id: string;
  company: string | null;
  email: string;
  plan: string | null;
  status: string;
  timezone: string | null;
  logoUrl: string | null;
  keyLast4: string;
}

export const connectedAccountSchema = z.object({
  id: z.string(),
  company: z.string().nullable(),
  email: z.string(),
  plan: z.string().nullable(),
  status: z.string(),
  timezone: z.string().nullable(),
  logoUrl: z.string().nullable(),
  keyLast4: z.string(),
});

function toConnectedAccount(account: Account, apiKey: string): ConnectedAccount {
  return {
    id: String(account.id),
    company: account.company ?? null,
    email: account.email,
    plan: account.plan?.marketing ?? null,
    status: account.status,
    timezone: account.timezone ?? null,
    logoUrl: account.logoUrl || null,
    keyLast4: apiKey.slice(-4),
  };
}

/**
 * Connects a shop to the marketing service: the key is checked against the service first
 * (GET /api/authenticated, then GET /api/account, which must be active), then stored encrypted.
 * Reconnecting resumes a paused shop. Throws ConnectionError with the merchant's message.
 */
export async function connectShop(
  domain: string,
  input: { apiKey: string; baseUrl?: string; /** false: skip the first connection's history import (tests) */ importHistory?: boolean },
): Promise<ConnectedAccount> {
  const baseUrl = input.baseUrl ?? config().marketingApiUrl;
  const apiKey = input.apiKey.trim();
  const client = createMarketingClient({ baseUrl, apiKey, timeoutMs: config().marketingApiTimeoutMs, retries: 0 });
  let account: Account;
  try {
    if (!(await client.authenticated())) throw connectionError("wrong_key");
    account = await client.account.get();
  } catch (error) {
    throw classifyConnectFailure(error);
  }
  if (account.status.toLowerCase() !== "active") {
    throw connectionError("account_inactive", `the service reports the account as ${account.status}`);
  }
  const connected = toConnectedAccount(account, apiKey);
  const before = await prisma().shop.findUnique({ where: { domain }, select: { connectedAt: true } });
  const data = {
    serviceBaseUrl: baseUrl,
    serviceKeyEnc: encryptSecret(apiKey, domain),
    serviceAccount: { ...connected },
    connectedAt: new Date(),
    pausedAt: null,
    pauseReason: null,
  };
  await prisma().shop.upsert({ where: { domain }, create: { domain, ...data }, update: data });
  clients.delete(domain);
  logger().info({ shop: domain, accountId: account.id }, "shop connected");
  if (!before?.connectedAt && input.importHistory !== false) await startHistoryBackfill(domain);
  return connected;
}

/** The first connection imports the store's history (customers, products, orders of the last year). */
export async function startHistoryBackfill(domain: string): Promise<void> {
  try {
    await requestBackfill(domain);
  } catch (error) {
    // One already under way is fine: the history is being imported.
    if (!(error instanceof BackfillRefused)) throw error;
  }
}

/**
 * Disconnects: forgets the key, so nothing more is delivered for the shop (see eligibility.ts);
 * queued work waits and resumes if the merchant connects again.
 */
export async function disconnectShop(domain: string): Promise<void> {
  await prisma().shop.updateMany({
    where: { domain },
    data: { serviceKeyEnc: null, serviceBaseUrl: null, serviceAccount: Prisma.DbNull, pausedAt: null, pauseReason: null },
  });
  clients.delete(domain);
  logger().info({ shop: domain }, "shop disconnected: key forgotten");
}

/** The stored account summary, or null (not connected, or stored by an older version). */
export function storedAccount(value: unknown): ConnectedAccount | null {
  const parsed = connectedAccountSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
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
  /** Has connected to the service (a paused shop has: its calls wait for the reconnection). */
  connected: boolean;
}

export async function shopContext(domain: string): Promise<ShopContext> {
  const shop = await prisma().shop.findUnique({ where: { domain } });
  return {
    domain,
    settings: parseSettings(shop?.settings ?? {}),
    storefrontUrl: shop?.storefrontUrl ?? `https://${domain}`,
    currency: shop?.currency ?? undefined,
    connected: Boolean(shop?.serviceKeyEnc),
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
