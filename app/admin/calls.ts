import { z } from "zod";
import { eventLabel, money } from "../people/words";

// The parts of a stored service call (OutboundCall.call) the admin shows; anything else is ignored.
const storedCallSchema = z.looseObject({
  op: z.string().optional(),
  type: z.string().optional(),
  action: z.string().optional(),
  body: z
    .looseObject({
      email: z.string().nullish(),
      publicId: z.string().nullish(),
      referenceId: z.string().nullish(),
      name: z.string().nullish(),
      eventName: z.string().nullish(),
      total: z.union([z.number(), z.string()]).nullish(),
      currency: z.string().nullish(),
      customFields: z.looseObject({ firstName: z.unknown(), lastName: z.unknown() }).nullish(),
      properties: z.looseObject({ amount: z.union([z.number(), z.string()]).nullish(), currency: z.string().nullish() }).nullish(),
    })
    .optional(),
});

// Operations in the merchant's words; unknown ones show as they are.
const OPERATIONS: Record<string, string> = {
  "person.upsert": "Contact created or updated",
  "person.delete": "Contact deleted",
  "person.update": "Contact updated",
  "event.custom": "Custom event",
};

const asAmount = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : null);
const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");

export interface CallSummary {
  /** the event's one name with its amount ("Order completed · $42.50", "Order refunded · $12.00"), or the operation */
  what: string;
  /** the customer as the merchant knows them: "Ada Lovelace <ada@example.com>" or the e-mail */
  customer: string | null;
  /** order name (#1001) when the call is about an order */
  orderName: string | null;
}

/**
 * What was sent, for the merchant's own admin: the event under the same name the person page shows
 * (the service's event name in words) with its amount, the customer in full, and the order name.
 */
export function summariseCall(call: unknown): CallSummary {
  const parsed = storedCallSchema.safeParse(call);
  if (!parsed.success) return { what: "service call", customer: null, orderName: null };
  const c = parsed.data;
  const b = c.body;
  let what = OPERATIONS[c.op ?? ""] ?? c.op ?? "Service call";
  let amount: string | null = null;
  if (c.op === "event" && c.type && c.action) {
    what = eventLabel(`${c.type}_${c.action}`);
    const total = asAmount(b?.total);
    if (total !== null) amount = money(total, b?.currency);
  } else if (c.op === "event.custom" && b?.eventName) {
    what = eventLabel(b.eventName);
    const paid = asAmount(b.properties?.amount);
    if (paid !== null) amount = money(paid, b.properties?.currency);
  }
  const name = [text(b?.customFields?.firstName), text(b?.customFields?.lastName)].filter(Boolean).join(" ");
  const email = b?.email ?? null;
  return {
    what: amount ? `${what} · ${amount}` : what,
    customer: email ? (name ? `${name} <${email}>` : email) : name || null,
    orderName: c.type === "order" ? (b?.publicId ?? null) : null,
  };
}

/** "order:820982911946154508" → "Order 820982911946154508". */
export function describeObject(objectKey: string): string {
  const i = objectKey.indexOf(":");
  if (i < 0) return objectKey;
  const kind = objectKey.slice(0, i);
  return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} ${objectKey.slice(i + 1)}`;
}

/**
 * The order's name (#1001) for a call on the OutboundCall aliased `o` that does not carry it (a
 * refund, a contact update from an order): taken from another call of the same order that does.
 */
export const ORDER_NAME_SQL = `(CASE WHEN o."objectKey" LIKE 'order:%' THEN (SELECT n.call #>> '{body,publicId}' FROM "OutboundCall" n
    WHERE n.shop = o.shop AND n."objectKey" = o."objectKey" AND n.call #>> '{body,publicId}' IS NOT NULL ORDER BY n.id DESC LIMIT 1) END)`;

/**
 * SQL condition for the admin search (customer e-mail, order name or object id) on the
 * OutboundCall aliased `o`; the term is the parameter $n (already wrapped in %…%).
 */
export function callSearchSql(n: number): string {
  return `(o.call #>> '{body,email}' ILIKE $${n} OR o.call #>> '{body,publicId}' ILIKE $${n} OR o."objectKey" ILIKE $${n})`;
}

/** A search term as an ILIKE pattern (its own % and _ taken literally). */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** A queue row id as sent by a form or a link: digits only, within PostgreSQL's bigint. */
export function isRowId(value: string): boolean {
  return /^\d{1,19}$/.test(value) && BigInt(value) <= MAX_BIGINT;
}
