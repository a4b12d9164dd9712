import { z } from "zod";
import type { SqlQueryable } from "../db/migrate.server";

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

const scopesUpdateSchema = z.object({ current: z.array(z.string().regex(/^[a-z_]{1,100}$/)).max(200) });

/**
 * app/scopes_update: the merchant granted or revoked access scopes. The shop's recorded scopes and
 * its sessions' follow, so that the admin asks for a fresh token exchange where scopes were lost.
 */
export async function recordScopesUpdate(tx: SqlQueryable, shop: string, body: unknown): Promise<string | null> {
  const parsed = scopesUpdateSchema.safeParse(body);
  if (!parsed.success) return null;
  const scopes = parsed.data.current.join(",");
  await tx.query(`UPDATE "Shop" SET scopes = $2, "updatedAt" = now() WHERE domain = $1`, [shop, scopes]);
  await tx.query(`UPDATE "Session" SET scope = $2 WHERE shop = $1`, [shop, scopes]);
  return scopes;
}

/** The lifecycle topics, as the planner hands them over. */
export async function handleLifecycle(
  tx: SqlQueryable,
  d: { shop: string; topic: string; triggeredAt: Date | null; body: unknown },
): Promise<{ outcome: "handled" | "ignored" | "invalid"; detail: string | null }> {
  if (d.topic === "app/uninstalled") {
    return (await recordUninstall(tx, d.shop, d.triggeredAt))
      ? { outcome: "handled", detail: "shop uninstalled: sessions removed, delivery stopped, data kept until shop/redact" }
      : { outcome: "ignored", detail: null };
  }
  if (d.topic === "app/scopes_update") {
    const scopes = await recordScopesUpdate(tx, d.shop, d.body);
    return scopes === null
      ? { outcome: "invalid", detail: "app/scopes_update: body has no list of current scopes" }
      : { outcome: "handled", detail: `scopes now ${scopes}` };
  }
  return { outcome: "ignored", detail: null };
}
