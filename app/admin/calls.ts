import { z } from "zod";
import { eventLabel, money } from "./event-words";

// The parts of a stored service call (OutboundCall.call) the admin shows; anything else is ignored.
// Every part is optional and read on its own (`catch`): one odd field (a contact update that sends
// no names, a number where text was expected) must not turn the whole row into "service call".
const optionalText = z.string().nullish().catch(null);
const optionalAmount = z.union([z.number(), z.string()]).nullish().catch(null);
const storedCallSchema = z.looseObject({
  op: z.string().optional().catch(undefined),
  type: z.string().optional().catch(undefined),
  action: z.string().optional().catch(undefined),
  idOrEmail: optionalText,
  body: z
    .looseObject({
      email: optionalText,
      publicId: optionalText,
      eventName: optionalText,
      total: optionalAmount,
      currency: optionalText,
      customFields: z.looseObject({ firstName: z.unknown().optional(), lastName: z.unknown().optional() }).nullish().catch(null),
      properties: z.looseObject({ amount: optionalAmount, currency: optionalText }).nullish().catch(null),
    })
    .optional()
    .catch(undefined),
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
 * What the app knows of the row's object besides the call (read with CALL_CONTEXT_JOIN): the order's
 * name, and the person as the customer's state last recorded them (a contact update sends only what
 * changed, a refund or a person deletion names nobody).
 */
export interface CallContext {
  orderName?: string | null;
  profile?: unknown;
  personEmail?: string | null;
}

const profileSchema = z.looseObject({ firstName: z.string().optional().catch(undefined), lastName: z.string().optional().catch(undefined) }).nullish().catch(null);

const fullName = (first: unknown, last: unknown) => [text(first), text(last)].filter(Boolean).join(" ");

/**
 * What was sent, for the merchant's own admin: the event under the same name the person page shows
 * (the service's event name in words) with its amount, the customer in full, and the order name.
 */
export function summariseCall(call: unknown, context: CallContext = {}): CallSummary {
  const parsed = storedCallSchema.safeParse(call);
  const c = parsed.success ? parsed.data : {};
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
  const known = profileSchema.parse(context.profile);
  const name = fullName(b?.customFields?.firstName, b?.customFields?.lastName) || fullName(known?.firstName, known?.lastName);
  const deleted = c.op === "person.delete" && c.idOrEmail?.includes("@") ? c.idOrEmail : null;
  const email = b?.email || deleted || context.personEmail || null;
  return {
    what: amount ? `${what} · ${amount}` : what,
    customer: email ? (name ? `${name} <${email}>` : email) : name || null,
    orderName: (c.type === "order" ? b?.publicId : null) || context.orderName || null,
  };
}

/** One row's object and what it was: "Order #1001" where the order has a name, the object id only where nothing else names it. */
export function describeRow(objectKey: string, call: unknown, context: CallContext = {}): CallSummary & { object: string } {
  const s = summariseCall(call, context);
  const object = s.orderName && objectKey.startsWith("order:") ? `Order ${s.orderName}` : describeObject(objectKey);
  return { ...s, object };
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
 * The state the app keeps of a call's object (`os`) and of its person (`ps`: the customer itself,
 * or an order's customer), joined to the OutboundCall aliased `o`: two primary-key lookups a row.
 */
export const CALL_CONTEXT_JOIN = `LEFT JOIN "ObjectState" os ON os.shop = o.shop AND os."objectKey" = o."objectKey"
  LEFT JOIN "ObjectState" ps ON ps.shop = o.shop
    AND ps."objectKey" = CASE WHEN o."objectKey" LIKE 'customer:%' THEN o."objectKey" ELSE 'customer:' || (os.state ->> 'customerId') END`;

/** The CallContext columns (needs CALL_CONTEXT_JOIN): the order's name as its state or its other calls have it, the person's profile and e-mail. */
export const CALL_CONTEXT_COLUMNS = `COALESCE(CASE WHEN o."objectKey" LIKE 'order:%' THEN os.state ->> 'name' END, ${ORDER_NAME_SQL}) AS "orderName",
  ps.state -> 'profile' AS "profile", ps.state ->> 'email' AS "personEmail"`;

/**
 * SQL condition for the admin search on the OutboundCall aliased `o` (needs CALL_CONTEXT_JOIN):
 * customer e-mail or name, order name (also on a refund, by the order's state) or object id; the
 * term is the parameter $n (already wrapped in %…%).
 */
export function callSearchSql(n: number): string {
  return `(o.call #>> '{body,email}' ILIKE $${n} OR o.call #>> '{body,publicId}' ILIKE $${n} OR o."objectKey" ILIKE $${n}
    OR (o."objectKey" LIKE 'order:%' AND os.state ->> 'name' ILIKE $${n})
    OR ps.state ->> 'email' ILIKE $${n}
    OR concat_ws(' ', ps.state #>> '{profile,firstName}', ps.state #>> '{profile,lastName}') ILIKE $${n})`;
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
