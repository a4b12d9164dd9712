import { isInteger, parse } from "lossless-json";
import { messageOf } from "../errors";

/** Raised for a webhook body that is not valid JSON. */
export class ShopifyJsonError extends Error {
  override readonly name = "ShopifyJsonError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Parses a raw Shopify webhook body without losing precision.
 *
 * Shopify ids exceed 2^53 (e.g. 820982911946154508); `JSON.parse` would round them silently.
 * Integers beyond Number.MAX_SAFE_INTEGER therefore come back as their exact decimal string;
 * every other number stays a JS number (money arrives as decimal strings anyway).
 * Duplicate keys behave like `JSON.parse` (last one wins) so a messy delivery is not rejected.
 */
export function parseShopifyJson(raw: string): unknown {
  if (typeof raw !== "string") {
    throw new ShopifyJsonError(`Webhook body must be a string, got ${typeof raw}`);
  }
  if (raw.trim() === "") throw new ShopifyJsonError("Webhook body is empty");
  try {
    return parse(raw, keepStorable, {
      parseNumber: parseNumberLossless,
      onDuplicateKey: ({ newValue }) => newValue,
    });
  } catch (error) {
    const detail = messageOf(error);
    throw new ShopifyJsonError(`Webhook body is not valid JSON: ${detail}`, { cause: error });
  }
}

function parseNumberLossless(value: string): number | string {
  if (isInteger(value)) {
    const asNumber = Number(value);
    // Keep the digits exactly when a double cannot hold them.
    return Number.isSafeInteger(asNumber) ? asNumber : normaliseIntegerString(value);
  }
  return Number(value);
}

function normaliseIntegerString(value: string): string {
  // "-0012" is not valid JSON, but keep the output canonical anyway.
  return BigInt(value).toString();
}

// PostgreSQL's jsonb refuses U+0000 and unpaired surrogates (both legal in JSON text). One such
// character anywhere would fail the transaction that stores the delivery's plan, so strings and
// keys are made storable here: the character becomes U+FFFD, the rest of the text is kept.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be found
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function storable(text: string): string {
  return text.replace(UNSTORABLE, "\uFFFD");
}

function keepStorable(_key: string, value: unknown): unknown {
  if (typeof value === "string") return storable(value);
  // Stryker disable next-line ConditionalExpression: a truthy number or boolean has no entries, so it comes back unchanged either way
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const entries = Object.entries(value);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the check only spares copying an object whose keys are clean; the copy would be equal
    if (entries.some(([k]) => storable(k) !== k)) return Object.fromEntries(entries.map(([k, v]) => [storable(k), v]));
  }
  return value;
}
