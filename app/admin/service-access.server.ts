import { config } from "../config.server";
import { prisma } from "../db.server";
import type { MarketingClient } from "../services/marketing/client.server";
import { serviceClientFor } from "../shops/connection.server";
import { describeShop } from "../shops/shops.server";

/** Why a page cannot talk to the service for this shop (the page shows an empty state). */
export interface NoService {
  state: "not_connected" | "paused";
  pauseReason: string | null;
}

export interface ServiceAccess {
  state: "connected";
  client: MarketingClient;
  /** where relative hand-off links of the service resolve */
  baseUrl: string;
  accountTimezone: string | null;
}

/** The signed-in shop's own service client (its own key, its own account), or why there is none. */
export async function serviceAccess(shop: string): Promise<ServiceAccess | NoService> {
  const summary = await describeShop(shop);
  if (summary.state === "paused") return { state: "paused", pauseReason: summary.pauseReason };
  const client = summary.connected ? await serviceClientFor(shop) : null;
  if (!client) return { state: "not_connected", pauseReason: null };
  const row = await prisma().shop.findUnique({ where: { domain: shop }, select: { serviceBaseUrl: true } });
  return { state: "connected", client, baseUrl: row?.serviceBaseUrl ?? config().marketingApiUrl, accountTimezone: summary.account?.timezone ?? null };
}

export const noService = (access: ServiceAccess | NoService): access is NoService => access.state !== "connected";

/** The empty-state data a page sends to the browser instead of its content. */
export const noServiceView = (access: NoService) => ({ state: access.state, pauseReason: access.pauseReason });
