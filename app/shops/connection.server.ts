import { z } from "zod";
import { config } from "../config.server";
import { database, prisma } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import { createMarketingClient, type MarketingClient } from "../services/marketing/client.server";
import { isMarketingServiceError } from "../services/marketing/marketing-error";
import type { Account } from "../services/marketing/schemas";
import { gidNumber } from "../sync/payloads";
import { parseSettings, type ShopSettings } from "../sync/settings";
import type { ConnectionChange } from "./connection-text";
import { canReceiveDeliveries } from "./eligibility";
import { decryptSecret, encryptSecret } from "../secrets.server";

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

export type { ConnectionChange };

/** A connected shop stores the whole summary; a disconnected one only `{ id }` (see disconnectShop). */
const accountIdOnly = z.object({ id: z.string() });

export interface ConnectionResult {
  account: ConnectedAccount;
  change: ConnectionChange;
  /** The account connected before a switch, when the shop was still connected to it. */
  previous: ConnectedAccount | null;
}

/**
 * What a connection changes. "switched": the key is another account's (or the shop was
 * disconnected by a version that did not keep the account id), which knows none of what was sent
 * for this shop. "reconnected": same account after a disconnection, which missed what changed
 * meanwhile (planning ignores a disconnected shop's webhooks). "same": a new key of the connected
 * (or paused) account: its webhooks were kept, nothing to catch up.
 */
function connectionChange(before: { connectedAt: Date | null; serviceKeyEnc: string | null; serviceAccount: unknown } | undefined, accountId: string): ConnectionChange {
  if (!before?.connectedAt) return "first";
  if (accountIdOnly.safeParse(before.serviceAccount).data?.id !== accountId) return "switched";
  return before.serviceKeyEnc ? "same" : "reconnected";
}

/**
 * Stores a shop's connection to the marketing service: the key is checked against the service
 * first (GET /api/authenticated, then GET /api/account, which must be active), then stored
 * encrypted. Reconnecting resumes a paused shop; a switch to another account first forgets what
 * was sent. The history import that follows is started by connectShop (app/backfill/connect.server.ts).
 * Throws ConnectionError with the merchant's message.
 */
export async function storeConnection(domain: string, input: { apiKey: string; baseUrl?: string }): Promise<ConnectionResult> {
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
  // One transaction: the new key is never stored with the previous account's memory.
  const { change, previous } = await database().sql.transaction(async (tx) => {
    const [before] = await tx.query<{ connectedAt: Date | null; serviceKeyEnc: string | null; serviceAccount: unknown }>(
      `SELECT "connectedAt", "serviceKeyEnc", "serviceAccount" FROM "Shop" WHERE domain = $1 FOR UPDATE`,
      [domain],
    );
    const change = connectionChange(before, connected.id);
    const previous = change === "switched" && before?.serviceKeyEnc ? storedAccount(before.serviceAccount) : null;
    if (change === "switched") await forgetWhatWasSent(tx, domain);
    await tx.query(
      `INSERT INTO "Shop" (domain, "serviceBaseUrl", "serviceKeyEnc", "serviceAccount", "connectedAt", "updatedAt")
       VALUES ($1, $2, $3, $4::jsonb, now(), now())
       ON CONFLICT (domain) DO UPDATE SET "serviceBaseUrl" = EXCLUDED."serviceBaseUrl", "serviceKeyEnc" = EXCLUDED."serviceKeyEnc",
         "serviceAccount" = EXCLUDED."serviceAccount", "connectedAt" = now(), "pausedAt" = NULL, "pauseReason" = NULL, "updatedAt" = now()`,
      [domain, baseUrl, encryptSecret(apiKey, domain), JSON.stringify(connected)],
    );
    return { change, previous };
  });
  clients.delete(domain);
  logger().info({ shop: domain, accountId: account.id, change }, "shop connected");
  return { account: connected, change, previous };
}

/**
 * Another account knows nothing of what was sent for this shop: the content hashes (decide.ts
 * skips a call equal to the last one sent) and the mappers' state (email the contact is known
 * under, tags and consent sent, order/created sent, product advertised) describe the previous
 * account, so both go. lastUpdatedAt stays: it is Shopify's version, which still guards against
 * stale deliveries. Storefront cart rows only mark "cart/created was sent": they go too.
 */
async function forgetWhatWasSent(tx: SqlQueryable, domain: string): Promise<void> {
  const forgotten = await tx.query(
    `UPDATE "ObjectState" SET "contentHashes" = NULL, state = NULL, "updatedAt" = now()
      WHERE shop = $1 AND "objectKey" NOT LIKE 'storefront-cart:%' RETURNING 1`,
    [domain],
  );
  await tx.query(`DELETE FROM "ObjectState" WHERE shop = $1 AND "objectKey" LIKE 'storefront-cart:%'`, [domain]);
  logger().info({ shop: domain, objects: forgotten.length }, "another marketing account: what was sent to the previous one is forgotten");
}

/**
 * Disconnects: forgets the key, so nothing more is delivered for the shop (see eligibility.ts);
 * queued work waits and resumes if the merchant connects again, whose history import covers what
 * changed meanwhile (webhooks of a disconnected shop are ignored).
 */
export async function disconnectShop(domain: string): Promise<void> {
  // Only the account id is kept: the next connection tells a reconnection from a switch of
  // accounts. One statement, so a connection racing it cannot have its account id mixed in.
  await database().sql.query(
    `UPDATE "Shop" SET "serviceKeyEnc" = NULL, "serviceBaseUrl" = NULL, "pausedAt" = NULL, "pauseReason" = NULL, "updatedAt" = now(),
       "serviceAccount" = CASE WHEN jsonb_typeof("serviceAccount" -> 'id') = 'string' THEN jsonb_build_object('id', "serviceAccount" -> 'id') END
     WHERE domain = $1`,
    [domain],
  );
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
  /** The Shopify segments mirrored as contact tags: numeric segment id → tag (app/segments). */
  segmentTags: Record<string, string>;
}

export async function shopContext(domain: string): Promise<ShopContext> {
  return (await shopContexts([domain])).get(domain)!;
}

/** The contexts of many shops in one query (a planning batch shared by many shops). */
export async function shopContexts(domains: string[]): Promise<Map<string, ShopContext>> {
  const [rows, segmentTags] = await Promise.all([prisma().shop.findMany({ where: { domain: { in: domains } } }), segmentTagsOf(domains)]);
  const shops = new Map(rows.map((s) => [s.domain, s]));
  return new Map(domains.map((domain) => [domain, contextOf(domain, shops.get(domain) ?? null, segmentTags.get(domain) ?? {})]));
}

/**
 * Per shop, the mirrored segments' tags by numeric segment id (the form the webhook's
 * `segment_id` takes after parsing): the planning context. Mirrored by app/segments.
 */
async function segmentTagsOf(shops: string[]): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  if (!shops.length) return out;
  const rows = await prisma().mirroredSegment.findMany({ where: { shop: { in: shops } }, select: { shop: true, segmentId: true, tag: true } });
  for (const r of rows) {
    const tags = out.get(r.shop) ?? {};
    tags[gidNumber(r.segmentId) ?? r.segmentId] = r.tag;
    out.set(r.shop, tags);
  }
  return out;
}

function contextOf(
  domain: string,
  shop: { settings: unknown; storefrontUrl: string | null; currency: string | null; serviceKeyEnc: string | null } | null,
  segmentTags: Record<string, string>,
): ShopContext {
  return {
    domain,
    settings: parseSettings(shop?.settings ?? {}),
    storefrontUrl: shop?.storefrontUrl ?? `https://${domain}`,
    currency: shop?.currency ?? undefined,
    connected: Boolean(shop?.serviceKeyEnc),
    segmentTags,
  };
}

// One client per connected shop, dropped when its key changes or it is paused.
const clients = new Map<string, { sealed: string; client: MarketingClient }>();

/** The service client for a shop that can receive deliveries, else null. Retries belong to the queue. */
export async function serviceClientFor(domain: string): Promise<MarketingClient | null> {
  return (await serviceClientsFor([domain])).get(domain) ?? null;
}

/** The service clients of many shops in one query (a claim shared by many shops); null: none. */
export async function serviceClientsFor(domains: string[]): Promise<Map<string, MarketingClient | null>> {
  const shops = await prisma().shop.findMany({
    where: { domain: { in: domains } },
    select: { domain: true, serviceKeyEnc: true, serviceBaseUrl: true, pausedAt: true, uninstalledAt: true },
  });
  const found = new Map(shops.map((s) => [s.domain, clientOf(s.domain, s)]));
  return new Map(domains.map((d) => [d, found.get(d) ?? null]));
}

function clientOf(
  domain: string,
  shop: { serviceKeyEnc: string | null; serviceBaseUrl: string | null; pausedAt: Date | null; uninstalledAt: Date | null },
): MarketingClient | null {
  if (!shop.serviceKeyEnc || !canReceiveDeliveries(shop)) return null;
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
