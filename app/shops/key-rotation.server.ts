import { database } from "../db.server";
import { logger } from "../logger.server";
import { decryptSecret, encryptSecret, isSealed, needsReseal, SecretError } from "../secrets.server";

/** The pause reason the start-up check writes; a later start with the right key lifts it. */
export const UNREADABLE_KEY_REASON = "stored service key cannot be decrypted with ENCRYPTION_KEY";

/**
 * Start-up check: every stored service key must open with ENCRYPTION_KEY (or the previous key).
 * A shop whose key does not is paused with a clear reason (its calls wait instead of failing one
 * by one into dead letters), and one error line says how many and why. A shop paused by an earlier
 * run for this reason resumes once its key opens again.
 */
export async function checkStoredSecrets(): Promise<{ checked: number; unreadable: string[] }> {
  const sql = database().sql;
  const shops = await sql.query<{ domain: string; serviceKeyEnc: string; pauseReason: string | null }>(
    `SELECT domain, "serviceKeyEnc", "pauseReason" FROM "Shop" WHERE "serviceKeyEnc" IS NOT NULL`,
  );
  const unreadable: string[] = [];
  for (const shop of shops) {
    try {
      decryptSecret(shop.serviceKeyEnc, shop.domain);
      if (shop.pauseReason === UNREADABLE_KEY_REASON) {
        await sql.query(`UPDATE "Shop" SET "pausedAt" = NULL, "pauseReason" = NULL, "updatedAt" = now() WHERE domain = $1 AND "pauseReason" = $2`, [shop.domain, UNREADABLE_KEY_REASON]);
      }
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      unreadable.push(shop.domain);
      await sql.query(
        `UPDATE "Shop" SET "pausedAt" = COALESCE("pausedAt", now()), "pauseReason" = $2, "updatedAt" = now() WHERE domain = $1`,
        [shop.domain, UNREADABLE_KEY_REASON],
      );
    }
  }
  if (unreadable.length) {
    logger().error(
      { shops: unreadable.length, sample: unreadable.slice(0, 5) },
      "ENCRYPTION_KEY does not open the stored service keys of these shops: they are paused. Set the key they were sealed with (or it as ENCRYPTION_KEY_PREVIOUS), or have the merchants reconnect",
    );
  }
  return { checked: shops.length, unreadable };
}

export interface ResealReport {
  shopKeys: number;
  sessionTokens: number;
  unreadable: string[];
}

/**
 * Re-seals every stored secret with the current ENCRYPTION_KEY (after a rotation, or to move "v1"
 * and unsealed session tokens to the current scheme). Each row is updated only if it still holds
 * what was read, so a concurrent reconnect is never overwritten.
 */
export async function resealStoredSecrets(): Promise<ResealReport> {
  const sql = database().sql;
  const report: ResealReport = { shopKeys: 0, sessionTokens: 0, unreadable: [] };
  const shops = await sql.query<{ domain: string; serviceKeyEnc: string }>(`SELECT domain, "serviceKeyEnc" FROM "Shop" WHERE "serviceKeyEnc" IS NOT NULL`);
  for (const s of shops) {
    if (!needsReseal(s.serviceKeyEnc)) continue;
    try {
      const sealed = encryptSecret(decryptSecret(s.serviceKeyEnc, s.domain), s.domain);
      const done = await sql.query(`UPDATE "Shop" SET "serviceKeyEnc" = $3 WHERE domain = $1 AND "serviceKeyEnc" = $2 RETURNING 1`, [s.domain, s.serviceKeyEnc, sealed]);
      report.shopKeys += done.length;
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      report.unreadable.push(`shop ${s.domain}`);
    }
  }
  const sessions = await sql.query<{ id: string; shop: string; accessToken: string; refreshToken: string | null }>(
    `SELECT id, shop, "accessToken", "refreshToken" FROM "Session"`,
  );
  for (const row of sessions) {
    try {
      const reseal = (v: string | null) => (v && (!isSealed(v) || needsReseal(v)) ? encryptSecret(isSealed(v) ? decryptSecret(v, row.shop, "shopify-token") : v, row.shop, "shopify-token") : v);
      const access = reseal(row.accessToken || null) ?? "";
      const refresh = reseal(row.refreshToken);
      if (access === row.accessToken && refresh === row.refreshToken) continue;
      const done = await sql.query(
        `UPDATE "Session" SET "accessToken" = $3, "refreshToken" = $5 WHERE id = $1 AND "accessToken" = $2 AND "refreshToken" IS NOT DISTINCT FROM $4 RETURNING 1`,
        [row.id, row.accessToken, access, row.refreshToken, refresh],
      );
      report.sessionTokens += done.length;
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      report.unreadable.push(`session ${row.id}`);
    }
  }
  return report;
}
