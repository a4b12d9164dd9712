import { database } from "../db.server";
import { CALL_CONTEXT_COLUMNS, CALL_CONTEXT_JOIN, callSearchSql, describeRow, isRowId, likePattern } from "./calls";

export interface ActivityEntry {
  id: string;
  object: string;
  what: string;
  customer: string | null;
  orderName: string | null;
  status: string;
  attempts: number;
  at: string;
  message: string | null;
}

interface Row {
  id: string;
  objectKey: string;
  call: unknown;
  status: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date | string;
  deliveredAt: Date | string | null;
  orderName: string | null;
  profile: unknown;
  personEmail: string | null;
}

export const ACTIVITY_PAGE_SIZE = 50;

/**
 * Recent service calls of a shop, newest first (delivered ones are kept for the retention period),
 * searchable by customer e-mail or name, order name or object id. Rows name the person and the order
 * from the state the app keeps when the call itself does not (a refund, a contact update). The merchant's own admin shows e-mails whole
 * (masking is for the logs).
 */
export async function recentActivity(
  shop: string,
  options: { search?: string; before?: string } = {},
): Promise<{ entries: ActivityEntry[]; nextBefore: string | null }> {
  const params: unknown[] = [shop];
  let where = "o.shop = $1";
  if (options.search?.trim()) {
    params.push(likePattern(options.search.trim()));
    where += ` AND ${callSearchSql(params.length)}`;
  }
  if (options.before && isRowId(options.before)) {
    params.push(options.before);
    where += ` AND o.id < $${params.length}::bigint`;
  }
  const rows = await database().sql.query<Row>(
    `SELECT o.id::text AS id, o."objectKey", o.call, o.status, o.attempts, o."lastError", o."createdAt", o."deliveredAt", ${CALL_CONTEXT_COLUMNS}
       FROM "OutboundCall" o ${CALL_CONTEXT_JOIN} WHERE ${where} ORDER BY o.id DESC LIMIT ${ACTIVITY_PAGE_SIZE + 1}`,
    params,
  );
  const page = rows.slice(0, ACTIVITY_PAGE_SIZE);
  return {
    entries: page.map((r) => {
      const s = describeRow(r.objectKey, r.call, r);
      return {
        id: r.id,
        object: s.object,
        what: s.what,
        customer: s.customer,
        orderName: s.orderName,
        status: r.status,
        attempts: r.attempts,
        at: new Date(r.deliveredAt ?? r.createdAt).toISOString(),
        message: r.lastError,
      };
    }),
    nextBefore: rows.length > ACTIVITY_PAGE_SIZE ? page[page.length - 1].id : null,
  };
}
