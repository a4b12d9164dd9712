import type { SqlQueryable } from "../db/migrate.server";

/**
 * app/uninstalled: the merchant removed the app. Its sessions go, and the shop is marked
 * uninstalled so that nothing more is sent to the service for it (queued calls wait; a reinstall
 * resumes them). A late uninstall delivery older than the latest install changes nothing.
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
