/**
 * §4.5 event bodies, field by field: the action lists per event type, every field's type and format
 * (mixed, string, number, integer, boolean, ISO 8601 timestamp, ISO 4217 currency, line items,
 * address objects, the customer's `user` and `subscriptions`), and when an event occurred (§2.3).
 * Written from docs/marketing-service-interface.md alone. Fields the spec does not list are not
 * refused (no refusal is stated); a listed field of the wrong type or format is (422, §7).
 */
import { EMAIL_RE, MESSAGES } from "./decisions";

export type Errors = Record<string, string[]>;
const addErr = (e: Errors, key: string, msg: string) => (e[key] ??= []).push(msg);

/** §4.5: the actions of each typed event endpoint. */
export const EVENT_ACTIONS: Record<string, readonly string[]> = {
  cart: ["created", "updated", "abandoned"],
  product: ["viewed", "created", "updated", "deleted"],
  order: ["created", "updated", "deleted", "completed"],
  customer: ["created", "updated", "deleted"],
  user: ["created", "updated", "deleted"],
  subscription: ["created", "updated", "deleted", "renewed", "cancelled", "expired", "renewal_failed"],
};

type Kind = "mixed" | "string" | "number" | "integer" | "boolean" | "timestamp" | "currency" | "strings" | "address" | "lineItems" | "variants" | "user" | "subscriptions" | "object";
type Shape = Record<string, Kind>;

const strings = (...names: string[]): Shape => Object.fromEntries(names.map((n) => [n, "string" as const]));
const of = (kind: Kind, ...names: string[]): Shape => Object.fromEntries(names.map((n) => [n, kind]));

const ADDRESS: Shape = strings("label", "first_name", "last_name", "phone", "company", "address1", "address2", "city", "state", "postal_code", "country");
const LINE_ITEM: Shape = {
  ...strings("url", "image_url", "sku", "brand"),
  variant_id: "mixed",
  ...of("number", "price", "total", "discounts", "taxes", "fees", "shipping"),
  quantity: "integer",
};
const VARIANT: Shape = { sku: "string", price: "number", barcode: "string", options: "strings" };
const USER: Shape = {
  id: "mixed",
  ...strings("username", "email", "first_name", "last_name", "display_name", "role", "url", "avatar_url", "status"),
  ...of("timestamp", "created_at", "modified_at", "last_login"),
};
const SUBSCRIPTION: Shape = {
  ...strings("plan", "plan_name", "plan_interval", "status", "currency"),
  plan_id: "mixed",
  plan_amount: "number",
  plan_interval_count: "integer",
  ...of("timestamp", "start_date", "end_date", "trial_end_date", "canceled_at"),
};

/** §4.5 per endpoint, besides the common fields; `id` (mixed) is required on every typed event. */
const FIELDS: Record<string, Shape> = {
  cart: { occurredAt: "timestamp", products: "lineItems", total: "number", total_products: "integer", url: "string", currency: "currency", modified_at: "timestamp" },
  product: {
    ...of("timestamp", "modified_at", "created_at"),
    ...strings("name", "description", "url", "image_url", "sku", "barcode", "vendor", "type", "brand", "public_id", "variant_id"),
    currency: "currency",
    price: "number",
    categories: "strings",
    tags: "strings",
    variants: "variants",
  },
  order: {
    occurred_at: "timestamp",
    products: "lineItems",
    currency: "currency",
    publicId: "mixed",
    ...of("number", "total", "shipping", "discounts", "taxes", "fees"),
    ...strings("status", "url", "phone", "payment_gateway", "_ls"),
    billing_address: "address",
    shipping_address: "address",
  },
  customer: {
    is_contact: "boolean",
    // §4.5 lists the customer's `currency` among its plain strings (no ISO 4217 rule there)
    ...strings("first_name", "last_name", "name", "customer_email", "status", "phone", "url", "avatar_url", "currency", "payment_gateway", "crm"),
    ...of("timestamp", "created_at", "modified_at"),
    ...of("mixed", "user_id", "public_id"),
    purchase_count: "integer",
    purchase_value: "number",
    ...of("address", "address", "billing_address", "shipping_address"),
    user: "user",
    ...strings("plan", "plan_name", "plan_interval"),
    plan_id: "mixed",
    plan_amount: "number",
    plan_interval_count: "integer",
    subscriptions: "subscriptions",
  },
  user: {
    is_contact: "boolean",
    ...strings("username", "first_name", "last_name", "display_name", "role", "url", "avatar_url", "status"),
    ...of("timestamp", "created_at", "modified_at", "deleted_at", "last_login"),
  },
  // §4.5 "currency (three-letter ISO code)"
  subscription: { url: "string", currency: "currency", products: "lineItems" },
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * ISO 8601 (extended format): a date, optionally `T` and a time to the minute, second or fraction,
 * optionally `Z` or an offset. A space for `T`, or a value that is not a calendar date, is not ISO 8601.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
/** ISO 4217 alphabetic code: three upper-case letters (the code list itself changes; not checked). */
const ISO_4217 = /^[A-Z]{3}$/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const isMixed = (v: unknown) => (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)) || typeof v === "bigint";
const isInteger = (v: unknown) => Number.isInteger(v) || typeof v === "bigint";

/**
 * Unix milliseconds of an ISO 8601 timestamp, or null when it is not one. A time without an offset
 * is read as UTC, a date alone as its midnight UTC (§4.5 names no time zone).
 */
export function parseIsoTimestamp(value: string): number | null {
  const m = ISO_8601.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", off] = m;
  const [Y, M, D, H, I, S] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (H > 23 || I > 59 || S > 59) return null;
  const ms = Date.UTC(Y, M - 1, D, H, I, S, Number(frac.padEnd(3, "0").slice(0, 3)));
  const back = new Date(ms);
  if (back.getUTCFullYear() !== Y || back.getUTCMonth() !== M - 1 || back.getUTCDate() !== D) return null;
  let offsetMin = 0;
  if (off && off !== "Z") {
    const digits = off.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || 0);
    if (oh > 23 || om > 59) return null;
    offsetMin = (off[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  return ms - offsetMin * 60_000;
}

function checkValue(e: Errors, key: string, kind: Kind, v: unknown): void {
  switch (kind) {
    case "mixed":
      if (!isMixed(v)) addErr(e, key, `The ${key} must be a string or a number.`);
      return;
    case "string":
      if (typeof v !== "string") addErr(e, key, `The ${key} must be a string.`);
      return;
    case "number":
      if (!((typeof v === "number" && Number.isFinite(v)) || typeof v === "bigint")) addErr(e, key, `The ${key} must be a number.`);
      return;
    case "integer":
      if (!isInteger(v)) addErr(e, key, `The ${key} must be an integer.`);
      return;
    case "boolean":
      if (typeof v !== "boolean") addErr(e, key, `The ${key} field must be true or false.`);
      return;
    case "timestamp":
      if (typeof v !== "string" || parseIsoTimestamp(v) === null) addErr(e, key, `The ${key} must be an ISO 8601 timestamp.`);
      return;
    case "currency":
      if (typeof v !== "string" || !ISO_4217.test(v)) addErr(e, key, `The ${key} must be an ISO 4217 currency code (three upper-case letters).`);
      return;
    case "strings":
      if (!Array.isArray(v)) addErr(e, key, `The ${key} must be an array.`);
      else v.forEach((x, i) => typeof x !== "string" && addErr(e, `${key}.${i}`, `The ${key}.${i} must be a string.`));
      return;
    case "object":
      if (!isObj(v)) addErr(e, key, `The ${key} must be an object.`);
      return;
    case "address":
      return checkObject(e, key, ADDRESS, v, []);
    case "user":
      return checkObject(e, key, USER, v, []);
    case "lineItems":
      return checkList(e, key, LINE_ITEM, v, ["id", "name"]);
    case "variants":
      return checkList(e, key, VARIANT, v, ["id"]);
    case "subscriptions":
      return checkList(e, key, SUBSCRIPTION, v, []);
  }
}

/** An object of known fields; `required` are mixed (`id`) or non-empty strings (`name`). */
function checkObject(e: Errors, key: string, shape: Shape, v: unknown, required: string[]): void {
  if (!isObj(v)) {
    addErr(e, key, `The ${key} must be an object.`);
    return;
  }
  for (const r of required) {
    const ok = r === "id" ? isMixed(v[r]) : typeof v[r] === "string" && v[r] !== "";
    if (!ok) addErr(e, `${key}.${r}`, `The ${key}.${r} field is required.`);
  }
  for (const [f, kind] of Object.entries(shape)) if (v[f] !== undefined && !required.includes(f)) checkValue(e, `${key}.${f}`, kind, v[f]);
}

function checkList(e: Errors, key: string, shape: Shape, v: unknown, required: string[]): void {
  if (!Array.isArray(v)) {
    addErr(e, key, `The ${key} must be an array.`);
    return;
  }
  v.forEach((item, i) => checkObject(e, `${key}.${i}`, shape, item, required));
}

/** §4.5 validation of an event body; `type` null is the custom event. 422 `errors` keyed by field (§7). */
export function validateEventBody(type: string | null, b: Record<string, unknown>): Errors {
  const e: Errors = {};
  if (typeof b.source !== "string" || b.source === "") addErr(e, "source", "The source field is required.");
  const hasRef = b.referenceId !== undefined && b.referenceId !== null && b.referenceId !== "";
  const hasUuid = typeof b.uuid === "string" && b.uuid !== "";
  if (b.email === undefined || b.email === null || b.email === "") {
    if (!hasRef && !hasUuid) addErr(e, "email", MESSAGES.eventEmailRequired);
  } else if (typeof b.email !== "string" || !EMAIL_RE.test(b.email)) addErr(e, "email", "The email must be a valid email address.");
  if (hasRef && !isMixed(b.referenceId)) addErr(e, "referenceId", "The reference id must be a string or a number.");
  if (b.uuid !== undefined && !(typeof b.uuid === "string" && UUID_RE.test(b.uuid))) addErr(e, "uuid", "The uuid must be a valid UUID.");
  for (const f of ["silent", "test"]) if (b[f] !== undefined) checkValue(e, f, "boolean", b[f]);
  if (type === null) {
    if (typeof b.eventName !== "string" || b.eventName === "") addErr(e, "eventName", "The event name field is required.");
    // a PHP-style empty list stands for an empty object
    if (b.properties !== undefined && !isObj(b.properties) && !(Array.isArray(b.properties) && b.properties.length === 0)) addErr(e, "properties", "The properties must be an object.");
    return e;
  }
  if (!isMixed(b.id)) addErr(e, "id", "The id field is required.");
  for (const [f, kind] of Object.entries(FIELDS[type] ?? {})) if (b[f] !== undefined) checkValue(e, f, kind, b[f]);
  return e;
}

/** A 422 for an action §4.5 does not list for the type (errors keyed `action`). */
export function actionErrors(type: string, action: string): Errors | null {
  const actions = EVENT_ACTIONS[type];
  if (!actions || actions.includes(action)) return null;
  return { action: [`The selected action is invalid: ${type} events take ${actions.join(", ")}.`] };
}

/**
 * §2.3: a person event record's `timestamp` is the Unix time the event occurred. Which body field
 * says so is not shown; the emulator reads the type's own time field (order `occurred_at`, cart
 * `occurredAt` then `modified_at`, product/customer/user `modified_at` then `created_at` — a deleted
 * user's `deleted_at` first, a product view none), and for custom events and events sent with a person (no time field in
 * §4.5) an `occurredAt` or `occurred_at` among the properties. Falls back to the receipt time.
 */
export function occurredAtSeconds(type: string | null, action: string | null, body: Record<string, unknown>, receivedSec: number): number {
  const candidates: string[] =
    type === "order"
      ? ["occurred_at"]
      : type === "cart"
        ? ["occurredAt", "modified_at"]
        : type === "product" && action === "viewed"
          ? [] // a view happens when it is sent: the product's own dates are not its time
          : type === "product" || type === "customer"
            ? ["modified_at", "created_at"]
            : type === "user"
              ? [...(action === "deleted" ? ["deleted_at"] : []), "modified_at", "created_at"]
              : ["occurredAt", "occurred_at"];
  for (const f of candidates) {
    const v = body[f];
    const ms = typeof v === "string" ? parseIsoTimestamp(v) : null;
    if (ms !== null) return Math.floor(ms / 1000);
  }
  return receivedSec;
}
