import { database } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import { shopContext } from "../shops/connection.server";
import { canReceiveDeliveriesSql } from "../shops/eligibility";
import { mapAbandonedCheckout } from "../sync/plan-webhook";
import type { AbandonmentInstruction } from "../sync/plan-contract";
import type { ShopSettings } from "../sync/settings";
import { claimRows } from "./claim.server";
import { callKind, contentHash } from "./decide";
import { bumpCounters } from "./counters.server";
import { nextTry, type PipelinePolicy } from "./policy";
import { TIMER_STATUS } from "./status";
import { messageOf } from "../errors";

/**
 * Abandoned checkouts: a checkout with an email starts (or, when its content changed, restarts) a
 * timer; an order for its checkout or cart token cancels it. Timers live in the database, so they
 * survive restarts, and each fires at most once.
 */
export async function applyAbandonment(
  tx: SqlQueryable,
  shop: string,
  instruction: AbandonmentInstruction,
  settings: ShopSettings,
  now: Date,
  /** The object that completed it (e.g. order:123), kept for support. */
  source: string
): Promise<void> {
  if (instruction.action === "cancel") {
    await tx.query(
      `INSERT INTO "CompletedCheckout" (shop, token, "orderId") SELECT $1, t, $3 FROM unnest($2::text[]) AS t
       ON CONFLICT (shop, token) DO NOTHING`,
      [shop, instruction.keys, source]
    );
    await tx.query(
      `UPDATE "AbandonmentTimer" SET status = '${TIMER_STATUS.cancelled}', "updatedAt" = now()
       WHERE shop = $1 AND status IN ('${TIMER_STATUS.pending}', '${TIMER_STATUS.running}') AND ("checkoutToken" = ANY($2::text[]) OR "cartToken" = ANY($2::text[]))`,
      [shop, instruction.keys]
    );
    return;
  }
  const { key, snapshot } = instruction;
  if (await isCompleted(tx, shop, [key, snapshot.cartToken])) return;
  if (await wasReminded(tx, shop, key)) return;
  const dueAt = new Date(now.getTime() + settings.abandonmentDelayMinutes * 60_000);
  // At most one cart/abandoned per checkout: a sent or cancelled timer stays so; an unchanged
  // cart keeps its timer; a changed one starts it again, also when a worker holds it (one that
  // died holding it would otherwise send the old cart once its lease ran out; a live one finds
  // the timer no longer its own and sends nothing).
  await tx.query(
    `INSERT INTO "AbandonmentTimer" AS t (shop, "checkoutToken", "cartToken", "dueAt", snapshot, status, "updatedAt")
     VALUES ($1, $2, $3, $4, $5::jsonb, '${TIMER_STATUS.pending}', now())
     ON CONFLICT (shop, "checkoutToken") DO UPDATE SET
       "cartToken" = EXCLUDED."cartToken", "dueAt" = EXCLUDED."dueAt", snapshot = EXCLUDED.snapshot, "updatedAt" = now(),
       status = '${TIMER_STATUS.pending}', "lockedBy" = NULL, "lockedUntil" = NULL, attempts = 0, "lastError" = NULL
     WHERE t.status IN ('${TIMER_STATUS.pending}', '${TIMER_STATUS.running}') AND t.snapshot IS DISTINCT FROM EXCLUDED.snapshot`,
    [shop, key, snapshot.cartToken, dueAt.toISOString(), JSON.stringify(snapshot)]
  );
}

/**
 * The checkout's object state records the reminder sent for it, as the content of its last
 * cart/abandoned call: retention deletes sent timers after 14 days, but not object state, so a
 * checkout touched again later is still never reminded twice.
 */
const REMINDER_CALL_KIND = "event:cart:abandoned";
const checkoutObjectKey = (token: string) => `checkout:${token}`;

async function wasReminded(tx: SqlQueryable, shop: string, checkoutToken: string): Promise<boolean> {
  const rows = await tx.query(`SELECT 1 FROM "ObjectState" WHERE shop = $1 AND "objectKey" = $2 AND "contentHashes" ? $3`, [
    shop,
    checkoutObjectKey(checkoutToken),
    REMINDER_CALL_KIND,
  ]);
  return rows.length > 0;
}

/** True when an order completed this checkout or cart. */
export async function isCompleted(
  tx: SqlQueryable,
  shop: string,
  tokens: (string | null | undefined)[]
): Promise<boolean> {
  const list = tokens.filter((t): t is string => Boolean(t));
  if (!list.length) return false;
  const rows = await tx.query(`SELECT 1 FROM "CompletedCheckout" WHERE shop = $1 AND token = ANY($2::text[]) LIMIT 1`, [
    shop,
    list,
  ]);
  return rows.length > 0;
}

/**
 * Fires due timers: each becomes one `cart/abandoned` call unless an order completed it meanwhile.
 * A timer whose snapshot cannot be mapped is recorded as failed with the reason at once; one that
 * fails for another reason (the database) is tried again a few times, then recorded as failed.
 * Either way it never holds the other due timers.
 */
export async function fireDueTimers(workerId: string, policy: PipelinePolicy): Promise<number> {
  const due = await claimRows<DueTimer>({
    table: "AbandonmentTimer",
    workerId,
    limit: policy.batchSize,
    leaseMs: policy.leaseMs,
    due: `q.status = '${TIMER_STATUS.pending}' AND q."dueAt" <= now()`,
    orderBy: `q."dueAt"`,
    key: `shop, "checkoutToken"`,
    returning: `shop, "checkoutToken", "cartToken", snapshot, attempts`,
  });
  for (const timer of due) {
    try {
      await fireTimer(workerId, timer);
    } catch (error) {
      const message = messageOf(error);
      const next = nextTry("reminderTimer", { attempts: timer.attempts, permanent: error instanceof UnmappableTimer }, policy);
      const giveUp = next.giveUp;
      logger().error({ shop: timer.shop, checkout: timer.checkoutToken, attempt: timer.attempts, err: message }, giveUp ? "abandonment timer failed" : "abandonment timer failed; will retry");
      await database()
        .sql.transaction(async (tx) => {
          const released = await tx.query(
            `UPDATE "AbandonmentTimer" SET status = $4, "lastError" = $5, "lockedBy" = NULL, "lockedUntil" = NULL, "updatedAt" = now(),
               "dueAt" = CASE WHEN $4 = '${TIMER_STATUS.pending}' THEN now() + ($6::int * interval '1 millisecond') ELSE "dueAt" END
             WHERE shop = $1 AND "checkoutToken" = $2 AND "lockedBy" = $3 AND status = '${TIMER_STATUS.running}'
             RETURNING 1`,
            [timer.shop, timer.checkoutToken, workerId, giveUp ? TIMER_STATUS.failed : TIMER_STATUS.pending, message, next.delayMs],
          );
          // A reminder given up on is counted with the checkouts that could not be used.
          if (giveUp && released.length) await bumpCounters([{ shop: timer.shop, kind: REMINDER_KIND, unusable: 1 }], tx);
        })
        .catch((e) => logger().error({ err: messageOf(e) }, "could not release an abandonment timer; its lease will expire"));
    }
  }
  return due.length;
}

interface DueTimer {
  shop: string;
  checkoutToken: string;
  cartToken: string | null;
  snapshot: unknown;
  attempts: number;
}

/** The counter bucket of a reminder: its call, and the reminder when it cannot be made. */
const REMINDER_KIND = "checkout";

const NOT_DELIVERABLE = "not sent: the shop was not connected to the marketing service (or was paused or uninstalled) when the reminder was due";

/** A stored snapshot that no longer maps to a call: retrying cannot help. */
class UnmappableTimer extends Error {
  override readonly name = "UnmappableTimer";
}

async function fireTimer(workerId: string, timer: DueTimer): Promise<void> {
  const ctx = await shopContext(timer.shop);
  const objectKey = checkoutObjectKey(timer.checkoutToken);
  const sent = await database().sql.transaction(async (tx) => {
    // The checkout's planning lock first (as planning takes it before the timer): the reminder is
    // recorded in its object state, which planning rewrites.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`${timer.shop}|${objectKey}`]);
    // Fencing: only the worker that still holds the timer fires it (and it stays locked meanwhile).
    const mine = await tx.query(
      `SELECT 1 FROM "AbandonmentTimer" WHERE shop = $1 AND "checkoutToken" = $2 AND "lockedBy" = $3 AND status = '${TIMER_STATUS.running}' FOR UPDATE`,
      [timer.shop, timer.checkoutToken, workerId],
    );
    if (!mine.length) return false;
    const release = `"lockedBy" = NULL, "lockedUntil" = NULL, "updatedAt" = now()`;
    // A shop that cannot receive deliveries now would get the reminder whenever it is reconnected,
    // days later, perhaps for a checkout bought meanwhile: it is not made at all.
    const deliverable = await tx.query(`SELECT 1 FROM "Shop" s WHERE s.domain = $1 AND ${canReceiveDeliveriesSql("s")}`, [timer.shop]);
    if (!deliverable.length) {
      await tx.query(
        `UPDATE "AbandonmentTimer" SET status = '${TIMER_STATUS.cancelled}', "lastError" = $3, ${release} WHERE shop = $1 AND "checkoutToken" = $2`,
        [timer.shop, timer.checkoutToken, NOT_DELIVERABLE],
      );
      return false;
    }
    if (await isCompleted(tx, timer.shop, [timer.checkoutToken, timer.cartToken])) {
      await tx.query(
        `UPDATE "AbandonmentTimer" SET status = '${TIMER_STATUS.cancelled}', ${release} WHERE shop = $1 AND "checkoutToken" = $2`,
        [timer.shop, timer.checkoutToken],
      );
      return false;
    }
    let call;
    try {
      call = mapAbandonedCheckout(timer.snapshot, { settings: ctx.settings, now: new Date() });
    } catch (error) {
      throw new UnmappableTimer(`snapshot cannot be mapped: ${messageOf(error)}`);
    }
    await tx.query(`INSERT INTO "OutboundCall" (shop, "objectKey", kind, call) VALUES ($1, $2, $3, $4::jsonb)`, [
      timer.shop,
      objectKey,
      REMINDER_KIND,
      JSON.stringify(call),
    ]);
    await tx.query(
      `INSERT INTO "ObjectState" AS o (shop, "objectKey", "contentHashes", "updatedAt") VALUES ($1, $2, jsonb_build_object($3::text, $4::text), now())
       ON CONFLICT (shop, "objectKey") DO UPDATE SET "contentHashes" = coalesce(o."contentHashes", '{}'::jsonb) || EXCLUDED."contentHashes", "updatedAt" = now()`,
      [timer.shop, objectKey, callKind(call), contentHash(call)],
    );
    await tx.query(
      `UPDATE "AbandonmentTimer" SET status = '${TIMER_STATUS.sent}', ${release} WHERE shop = $1 AND "checkoutToken" = $2`,
      [timer.shop, timer.checkoutToken],
    );
    return true;
  });
  if (sent) logger().info({ shop: timer.shop, checkout: timer.checkoutToken }, "checkout abandoned");
}
