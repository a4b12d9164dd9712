import type { SqlQueryable } from "../db/migrate.server";
import { topicsWithRole } from "../sync/topics.server";
import type { Installation } from "./installation.server";

/** Every lifecycle topic's effect Shopify must confirm first (see installation.server.ts). */
const CONFIRMED_TOPICS: ReadonlySet<string> = new Set(topicsWithRole("lifecycle"));

/**
 * Asks Shopify, before the planning transaction (no network call holds it), about every shop a
 * lifecycle delivery of the batch concerns. A shop that cannot be asked now is in `failed`: its
 * deliveries are tried again later, never acted on unconfirmed. `check` asks Shopify
 * (installation.server.ts checkInstallation).
 */
export async function confirmLifecycle(
  deliveries: { id: string; shop: string; topic: string }[],
  check: (shop: string) => Promise<Installation>,
): Promise<{ confirmed: Map<string, Installation>; failed: Map<string, unknown> }> {
  const confirmed = new Map<string, Installation>();
  const failed = new Map<string, unknown>();
  const byShop = new Map<string, Promise<Installation>>();
  for (const d of deliveries) {
    if (!CONFIRMED_TOPICS.has(d.topic)) continue;
    if (!byShop.has(d.shop)) byShop.set(d.shop, check(d.shop));
    try {
      confirmed.set(d.id, await byShop.get(d.shop)!);
    } catch (error) {
      failed.set(d.id, error);
    }
  }
  return { confirmed, failed };
}

/**
 * app/uninstalled: the merchant removed the app. Its sessions go, and the shop is marked
 * uninstalled so that nothing more is sent to the service for it (queued calls wait; a reinstall
 * resumes them). Its data stays until shop/redact (Shopify sends it 48 hours later). A late
 * uninstall delivery older than the latest install changes nothing.
 */
export async function recordUninstall(tx: SqlQueryable, shop: string, triggeredAt: Date | null): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE "Shop" SET "uninstalledAt" = now(), "updatedAt" = now()
     WHERE domain = $1 AND "uninstalledAt" IS NULL AND ($2::timestamptz IS NULL OR "installedAt" <= $2::timestamptz)
     RETURNING domain`,
    [shop, triggeredAt?.toISOString() ?? null],
  );
  if (rows.length) await tx.query(`DELETE FROM "Session" WHERE shop = $1`, [shop]);
  return rows.length > 0;
}

/**
 * app/scopes_update: the merchant granted or revoked access scopes. The shop's recorded scopes and
 * its sessions' follow — as Shopify reports them for the shop's token, not as the body says: the
 * body names no shop, so a captured one would replay under any shop's header.
 */
export async function recordScopesUpdate(tx: SqlQueryable, shop: string, current: string[]): Promise<string> {
  const scopes = current.join(",");
  await tx.query(`UPDATE "Shop" SET scopes = $2, "updatedAt" = now() WHERE domain = $1`, [shop, scopes]);
  await tx.query(`UPDATE "Session" SET scope = $2 WHERE shop = $1`, [shop, scopes]);
  return scopes;
}

/** The lifecycle topics, as the planner hands them over, with what Shopify said (confirmLifecycle). */
export async function handleLifecycle(
  tx: SqlQueryable,
  d: { shop: string; topic: string; triggeredAt: Date | null; body: unknown; installation?: Installation },
): Promise<{ outcome: "handled" | "ignored" | "invalid"; detail: string | null }> {
  if (d.topic === "app/uninstalled") {
    if (d.installation?.state === "installed") {
      return { outcome: "ignored", detail: "app/uninstalled: Shopify reports the app installed (a replayed or late delivery); nothing changed" };
    }
    return (await recordUninstall(tx, d.shop, d.triggeredAt))
      ? { outcome: "handled", detail: "shop uninstalled: sessions removed, delivery stopped, data kept until shop/redact" }
      : { outcome: "ignored", detail: null };
  }
  if (d.topic === "app/scopes_update") {
    if (d.installation?.state !== "installed" || !d.installation.scopes) {
      return { outcome: "ignored", detail: "app/scopes_update: Shopify could not report the shop's scopes (no working token); nothing changed" };
    }
    return { outcome: "handled", detail: `scopes now ${await recordScopesUpdate(tx, d.shop, d.installation.scopes)}` };
  }
  return { outcome: "ignored", detail: null };
}
