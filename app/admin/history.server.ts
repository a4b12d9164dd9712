import { z } from "zod";
import { BackfillRefused, backfillProgress, requestBackfill } from "../backfill/backfill.server";
import { database, prisma } from "../db.server";
import { orderWindowDays } from "../shopify/access";
import { DELIVERY_STATUS } from "../pipeline/status";
import type { BackfillStatus } from "../pipeline/status";
import { shopContext } from "../shops/connection.server";
import { sourceSql } from "../sync/sources";

/** What the Connection page shows of the shop's history import (the latest one). */
export interface HistoryView {
  id: string;
  status: BackfillStatus;
  /** The kind being imported, its position and the number of kinds. */
  kind: string | null;
  kindNumber: number;
  kinds: number;
  /** Shopify is still preparing the export of the current kind. */
  exporting: boolean;
  /** Progress of the current kind: lines of its export recorded, of the total Shopify announced. */
  done: number;
  total: number | null;
  objects: number;
  /** Objects read from Shopify that the app has not yet turned into calls to the service. */
  sending: number;
  lastError: string | null;
  /** Orders created since then were asked of Shopify (null: all). */
  ordersSince: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export async function historyView(shop: string): Promise<HistoryView | null> {
  const p = await backfillProgress(shop);
  if (!p) return null;
  return {
    id: p.id,
    status: p.status,
    kind: p.kind,
    kindNumber: Math.min(p.kindsDone + 1, p.kinds),
    kinds: p.kinds,
    exporting: p.phase !== "import",
    done: p.linesDone,
    total: p.expected,
    objects: p.objects,
    sending: await stillSending(shop),
    lastError: p.lastError,
    ordersSince: p.ordersSince?.toISOString() ?? null,
    createdAt: p.createdAt.toISOString(),
    finishedAt: p.finishedAt?.toISOString() ?? null,
  };
}

/**
 * The run is done once Shopify's files are read; what it read waits in the queue a while longer
 * (up to two chunks, by the import's backpressure), so the page says so rather than "imported".
 */
async function stillSending(shop: string): Promise<number> {
  const [row] = await database().sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "WebhookDelivery"
      WHERE shop = $1 AND source = ${sourceSql("backfill")} AND status IN ('${DELIVERY_STATUS.queued}', '${DELIVERY_STATUS.running}')`,
    [shop],
  );
  return row?.n ?? 0;
}

/** Days of orders Shopify lets the app read for this shop (60 without read_all_orders), or null for all. */
export async function orderWindow(shop: string): Promise<number | null> {
  const row = await prisma().shop.findUnique({ where: { domain: shop }, select: { scopes: true } });
  return orderWindowDays(row?.scopes);
}

const resyncFormSchema = z.object({
  orders: z.enum(["60", "90", "365", "all"], { error: "Choose how far back to import orders." }),
});

export type HistoryActionResult = { ok: true; toast: string; at: number } | { ok: false; toast: string; error: true; errors: Record<string, string>; at: number };

/** "Import history again": customers, products and orders of the chosen period, events silent. */
export async function historyAction(shop: string, form: FormData): Promise<HistoryActionResult> {
  const at = Date.now();
  const parsed = resyncFormSchema.safeParse({ orders: form.get("orders") ?? undefined });
  if (!parsed.success) return { ok: false, toast: "Choose how far back to import orders.", error: true, errors: { orders: "Choose how far back to import orders." }, at };
  const orderDays = parsed.data.orders === "all" ? null : (Number(parsed.data.orders) as 60 | 90 | 365);
  // Not connected (a page opened before the merchant disconnected): nothing imported could be sent.
  if (!(await shopContext(shop)).connected) {
    return { ok: false, toast: "Connect your marketing account first: connecting imports your history.", error: true, errors: {}, at };
  }
  try {
    await requestBackfill(shop, { orderDays });
  } catch (error) {
    if (error instanceof BackfillRefused) return { ok: false, toast: "A history import is already under way: wait for it to finish.", error: true, errors: {}, at };
    throw error;
  }
  return { ok: true, toast: "History import started", at };
}
