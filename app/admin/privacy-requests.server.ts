import { database } from "../db.server";
import { knownEmail } from "../compliance/compliance.server";
import { listDataRequests } from "../compliance/requests.server";
import { dataRequestStatus } from "./plain-words";

export interface DataRequestRow {
  id: string;
  receivedAt: string;
  customerId: string | null;
  /** when the app knows the customer's address (whole: this is the merchant's own admin) */
  customerEmail: string | null;
  /** the outcome in words ("Ready to download (4 records)") */
  status: string;
  /** the stored outcome, for support */
  detail: string | null;
}

/** The Privacy page's table: the shop's data requests with their customer and outcome in words. */
export async function dataRequestRows(shop: string): Promise<DataRequestRow[]> {
  const requests = await listDataRequests(shop);
  const db = database().sql;
  return Promise.all(
    requests.map(async (r) => ({
      id: r.id,
      receivedAt: r.receivedAt,
      customerId: r.customerId,
      customerEmail: r.customerId ? await knownEmail(db, shop, r.customerId) : null,
      status: dataRequestStatus(r.detail, r.status),
      detail: r.detail,
    })),
  );
}
