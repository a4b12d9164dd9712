import { Session } from "@shopify/shopify-api";
import type { SessionStorage } from "@shopify/shopify-app-session-storage";
import type { Session as SessionRow } from "../generated/prisma/client";
import { prisma } from "../db.server";
import { decryptSecret, encryptSecret, isSealed } from "../secrets.server";

/**
 * Shopify sessions in our Prisma database. Access and refresh tokens are sealed at rest like the
 * service keys (bound to the session's shop); a token stored before that is read as it is, and
 * `npm run cli -- reencrypt-keys` seals it. Shopify's own Prisma storage package pins Prisma 6
 * as a peer dependency and expects the classic @prisma/client, so this small equivalent stands in.
 */
export class PrismaSessionStorage implements SessionStorage {
  async storeSession(session: Session): Promise<boolean> {
    const row = toRow(session);
    await prisma().session.upsert({ where: { id: row.id }, create: row, update: row });
    return true;
  }

  async loadSession(id: string): Promise<Session | undefined> {
    const row = await prisma().session.findUnique({ where: { id } });
    return row ? fromRow(row) : undefined;
  }

  async deleteSession(id: string): Promise<boolean> {
    await prisma().session.deleteMany({ where: { id } });
    return true;
  }

  async deleteSessions(ids: string[]): Promise<boolean> {
    await prisma().session.deleteMany({ where: { id: { in: ids } } });
    return true;
  }

  async findSessionsByShop(shop: string): Promise<Session[]> {
    const rows = await prisma().session.findMany({ where: { shop }, take: 25, orderBy: { expires: "desc" } });
    return rows.map(fromRow);
  }
}

function toRow(session: Session): SessionRow {
  const user = session.onlineAccessInfo?.associated_user;
  return {
    id: session.id,
    shop: session.shop,
    state: session.state,
    isOnline: session.isOnline,
    scope: session.scope ?? null,
    expires: session.expires ?? null,
    accessToken: session.accessToken ? encryptSecret(session.accessToken, session.shop, "shopify-token") : "",
    refreshToken: session.refreshToken ? encryptSecret(session.refreshToken, session.shop, "shopify-token") : null,
    refreshTokenExpires: session.refreshTokenExpires ?? null,
    userId: user?.id !== undefined ? BigInt(user.id) : null,
    firstName: user?.first_name ?? null,
    lastName: user?.last_name ?? null,
    email: user?.email ?? null,
    accountOwner: user?.account_owner ?? false,
    locale: user?.locale ?? null,
    collaborator: user?.collaborator ?? false,
    emailVerified: user?.email_verified ?? false,
  };
}

function fromRow(row: SessionRow): Session {
  return new Session({
    id: row.id,
    shop: row.shop,
    state: row.state,
    isOnline: row.isOnline,
    scope: row.scope ?? undefined,
    expires: row.expires ?? undefined,
    accessToken: openToken(row.accessToken, row.shop) ?? "",
    refreshToken: openToken(row.refreshToken, row.shop),
    refreshTokenExpires: row.refreshTokenExpires ?? undefined,
    onlineAccessInfo:
      row.userId !== null
        ? {
            expires_in: 0,
            associated_user_scope: row.scope ?? "",
            associated_user: {
              id: Number(row.userId),
              first_name: row.firstName ?? "",
              last_name: row.lastName ?? "",
              email: row.email ?? "",
              account_owner: row.accountOwner,
              locale: row.locale ?? "",
              collaborator: row.collaborator ?? false,
              email_verified: row.emailVerified ?? false,
            },
          }
        : undefined,
  });
}

/** A stored token in the clear; a legacy unsealed one as it is. */
export function openToken(stored: string | null, shop: string): string | undefined {
  if (!stored) return undefined;
  return isSealed(stored) ? decryptSecret(stored, shop, "shopify-token") : stored;
}
