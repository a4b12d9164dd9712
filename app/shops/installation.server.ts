import { z } from "zod";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { installationFromStatus, type Installation } from "./installed";

/**
 * What Shopify itself says about the app on a shop, asked with the shop's offline token. A
 * webhook's HMAC covers its body only, and lifecycle bodies name no time Shopify signs: a captured
 * `app/uninstalled` replayed later is genuine to the HMAC. Shopify revokes the token at uninstall,
 * so the token's answer is the confirmation the webhook itself cannot give.
 *
 * - revoked: Shopify refuses the token (401) or no longer knows the shop (404): the app is gone;
 * - installed: the token works (or the shop is frozen, 402/423: still installed); `scopes` are
 *   the ones Shopify reports as granted now;
 * - no-token: the app holds no offline token for the shop, so nothing can be asked (and nothing
 *   can be done for the shop either until a merchant opens the app again).
 * Anything else (a timeout, a 5xx) throws: the delivery is tried again later.
 */
export type { Installation };

export const INSTALLATION_QUERY = `#graphql
  query AppInstallationCheck { currentAppInstallation { accessScopes { handle } } }`;

const answerSchema = z.object({
  data: z.object({ currentAppInstallation: z.object({ accessScopes: z.array(z.object({ handle: z.string().regex(/^[a-z_]{1,100}$/) })).max(200) }) }),
});

/** The Remix app's offline sessions and Admin API access (app/shopify.server.ts), as the caller loads it. */
export interface AppAdminAccess {
  sessionStorage: { findSessionsByShop(shop: string): Promise<{ isOnline: boolean; accessToken?: string }[]> };
  unauthenticated: { admin(shop: string): Promise<{ admin: { graphql(query: string, options?: { signal?: AbortSignal }): Promise<Response> } }> };
}

export async function checkInstallation(shop: string, app: () => Promise<AppAdminAccess>): Promise<Installation> {
  // Loaded on first use (the caller's loader): the worker's modules must not configure the Shopify app when imported.
  const { unauthenticated, sessionStorage } = await app();
  const offline = (await sessionStorage.findSessionsByShop(shop)).find((s) => !s.isOnline && s.accessToken);
  if (!offline) return { state: "no-token" };
  const { admin } = await unauthenticated.admin(shop);
  try {
    const response = await admin.graphql(INSTALLATION_QUERY, { signal: AbortSignal.timeout(config().marketingApiTimeoutMs) });
    const parsed = answerSchema.parse(await response.json());
    return { state: "installed", scopes: parsed.data.currentAppInstallation.accessScopes.map((s) => s.handle) };
  } catch (error) {
    const code = (error as { response?: { code?: unknown } }).response?.code;
    const proven = installationFromStatus(code);
    if (proven) return proven;
    logger().warn({ shop, status: typeof code === "number" ? code : undefined, err: error }, "could not ask Shopify whether the app is installed");
    throw new Error(`could not confirm the installation with Shopify${typeof code === "number" ? ` (HTTP ${code})` : ""}; retried later`, { cause: error });
  }
}
