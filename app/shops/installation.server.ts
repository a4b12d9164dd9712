import { z } from "zod";
import { logger } from "../logger.server";
import { adminData, NoOfflineSession } from "../shopify/admin-api.server";
import { installationFromStatus, type Installation } from "./installed";

/**
 * What Shopify itself says about the app on a shop, asked with the shop's offline token. A
 * webhook's HMAC covers its body only, and lifecycle bodies name no time Shopify signs: a captured
 * `app/uninstalled` replayed later is genuine to the HMAC. Shopify revokes the token at uninstall,
 * so the token's answer is the confirmation the webhook itself cannot give.
 *
 * - revoked: Shopify refuses the token (401, and its refresh too), refuses to refresh an
 *   expired one, or no longer knows the shop (404): the app is gone;
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
  currentAppInstallation: z.object({ accessScopes: z.array(z.object({ handle: z.string().regex(/^[a-z_]{1,100}$/) })).max(200) }),
});

/** Planning waits on the answer: a shop whose budget does not come back within this is asked again later. */
const MAX_WAIT_MS = 5_000;

export async function checkInstallation(shop: string): Promise<Installation> {
  try {
    const data = await adminData(shop, answerSchema, INSTALLATION_QUERY, {}, { maxWaitMs: MAX_WAIT_MS });
    return { state: "installed", scopes: data.currentAppInstallation.accessScopes.map((s) => s.handle) };
  } catch (error) {
    if (error instanceof NoOfflineSession && error.reason === "none") return { state: "no-token" };
    // Its token had expired and Shopify refused to refresh it: revoked, as an uninstall does.
    if (error instanceof NoOfflineSession && error.reason === "revoked") return { state: "revoked" };
    const code = (error as { response?: { code?: unknown } }).response?.code;
    const proven = installationFromStatus(code);
    if (proven) return proven;
    logger().warn({ shop, status: typeof code === "number" ? code : undefined, err: error }, "could not ask Shopify whether the app is installed");
    throw new Error(`could not confirm the installation with Shopify${typeof code === "number" ? ` (HTTP ${code})` : ""}; retried later`, { cause: error });
  }
}
