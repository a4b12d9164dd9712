/** What Shopify's answer to the installation check says about the app on a shop. */
export type Installation = { state: "revoked" } | { state: "installed"; scopes: string[] | null } | { state: "no-token" };

/**
 * The installation an Admin API error status proves, or null when it proves nothing (a timeout, a
 * 5xx: ask again later). 401 and 404: the token no longer works, the app is gone. 402 (a frozen
 * shop, unpaid) and 423 (a locked shop) refuse the call but keep the app installed: a replayed
 * app/uninstalled must not remove a shop that only stopped paying.
 */
export function installationFromStatus(code: unknown): Installation | null {
  if (code === 401 || code === 404) return { state: "revoked" };
  if (code === 402 || code === 423) return { state: "installed", scopes: null };
  return null;
}
