import { z } from "zod";
import { maskEmail } from "./privacy";

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

export interface CallSummary {
  /** "person.upsert", "event order/completed", … */
  what: string;
  /** masked customer e-mail */
  customer: string | null;
  /** order name (#1001) when the call is about an order */
  orderName: string | null;
}

/** What was sent, for the admin: operation, masked customer and order name. */
export function summariseCall(call: unknown): CallSummary {
  const parsed = storedCallSchema.safeParse(call);
  if (!parsed.success) return { what: "service call", customer: null, orderName: null };
  const c = parsed.data;
  const what = c.op === "event" && c.type ? `Event: ${c.type} ${(c.action ?? "").replaceAll("_", " ")}`.trim() : (OPERATIONS[c.op ?? ""] ?? c.op ?? "Service call");
  return {
    what,
    customer: maskEmail(c.body?.email ?? null),
    orderName: c.type === "order" ? (c.body?.publicId ?? null) : null,
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
