import { z } from "zod";
import { database } from "../db.server";
import { parseShopifyJson } from "../sync/json";
import { exportCustomer, knownEmail, shopifyId, type CustomerExport } from "./compliance.server";

export interface DataRequestSummary {
  id: string;
  receivedAt: string;
  customerId: string | null;
  status: string;
  detail: string | null;
}

const requestBody = z.object({
  customer: z.object({ id: shopifyId, email: z.string().nullish() }),
  orders_requested: z.array(shopifyId).nullish(),
});

/** The shop's customers/data_request deliveries, newest first (the Privacy page). */
export async function listDataRequests(shop: string, limit = 50): Promise<DataRequestSummary[]> {
  const rows = await database().sql.query<{ id: string; receivedAt: Date; rawBody: string; status: string; outcomeDetail: string | null }>(
    `SELECT id, "receivedAt", "rawBody", status, "outcomeDetail" FROM "WebhookDelivery"
      WHERE shop = $1 AND topic = 'customers/data_request' ORDER BY "receivedAt" DESC LIMIT $2`,
    [shop, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    receivedAt: new Date(r.receivedAt).toISOString(),
    customerId: parseRequest(r.rawBody)?.customer.id ?? null,
    status: r.status,
    detail: r.outcomeDetail,
  }));
}

/** The export answering one of the shop's data requests, assembled now from the live rows; null if none. */
export async function exportForRequest(shop: string, requestId: string): Promise<CustomerExport | null> {
  const [row] = await database().sql.query<{ rawBody: string }>(
    `SELECT "rawBody" FROM "WebhookDelivery" WHERE shop = $1 AND id = $2 AND topic = 'customers/data_request'`,
    [shop, requestId],
  );
  const body = row && parseRequest(row.rawBody);
  if (!body) return null;
  const db = database().sql;
  const email = body.customer.email ?? (await knownEmail(db, shop, body.customer.id));
  return exportCustomer(db, shop, { id: body.customer.id, email, orderIds: body.orders_requested ?? [] }, { excludeDelivery: requestId });
}

function parseRequest(raw: string) {
  try {
    // Lossless: a customer id beyond 2^53 must not become its neighbour's.
    const parsed = requestBody.safeParse(parseShopifyJson(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
