/**
 * What logs may not carry. Keys, tokens and whole customer records must never reach them: the rule is to
 * log ids and counts only, and this is the safety net (after pino's fast path redaction of the
 * known top-level places, logger.server.ts): a walk over every logged object (nested fields,
 * arrays, error messages and stacks) that censors sensitive keys at any depth and email addresses
 * inside any string.
 */
export const CENSOR = "[redacted]";
// Compared lower-cased, without "_" and "-": keys whose values are secrets or personal data.
const SENSITIVE_KEYS = new Set([
  "apikey", "servicekey", "servicekeyenc", "accesstoken", "refreshtoken", "token", "idtoken", "sessiontoken",
  "authorization", "cookie", "setcookie", "secret", "apisecret", "password", "hmac", "xshopifyhmacsha256",
  "encryptionkey", "body", "rawbody", "payload", "call", "calls", "snapshot", "state", "request", "response", "lastresponse",
  "email", "idoremail", "phone", "firstname", "lastname", "name", "address", "address1", "address2", "defaultaddress",
  "addresses", "customer", "person", "ip", "browserip",
  // A database error carries the statement (PGlite writes the bound values into it), its values and
  // PostgreSQL's detail/where lines, which quote the row or the JSON that failed: a webhook's body.
  "query", "params", "parameters", "values", "detail", "where", "internalquery",
]);
// "@" also percent-encoded (%40, %2540 once more): a URL path or query names a person so.
const EMAIL = /[A-Za-z0-9._%+-]+(?:@|%(?:25)*40)[A-Za-z0-9.-]+\.[A-Za-z]{2,}/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
// A JWT (session and id tokens: "eyJ" is the base64 of '{"'), whole or in a JSON/URL-encoded string.
const JWT = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.?[A-Za-z0-9_-]*/g;
// Shopify access and refresh tokens (shpat_, shpua_, shprt_, shpca_, shpss_ …).
const SHOPIFY_TOKEN = /\bshp[a-z]{2}_[A-Za-z0-9]+/g;
// "token: value" / "token=value" as libraries print their context (Shopify's: "key: value").
const NAMED_SECRET = /\b((?:access|refresh|session|id)?_?token|secret|password|signature|hmac)(["']?\s*[:=]\s*["']?)[^\s"',}&]+/gi;
const MAX_DEPTH = 8;

export function scrubString(s: string): string {
  return s
    .replace(EMAIL, "[email]")
    .replace(BEARER, "$1 [redacted]")
    .replace(JWT, "[token]")
    .replace(SHOPIFY_TOKEN, "[token]")
    .replace(NAMED_SECRET, "$1$2[redacted]");
}

/** A copy of a log object with sensitive keys censored at any depth and emails masked in strings. */
export function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubString(value);
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[nested]";
  if (value instanceof Error) {
    // Kept as an error for the serializer, with its stack (unexpected errors need it), but scrubbed.
    const copy = new Error(scrubString(value.message));
    copy.name = value.name;
    copy.stack = value.stack ? scrubString(value.stack) : undefined;
    for (const [k, v] of Object.entries(value)) (copy as unknown as Record<string, unknown>)[k] = censorKey(k) ? CENSOR : scrub(v, depth + 1);
    return copy;
  }
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrub(v, depth + 1));
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = censorKey(k) ? CENSOR : scrub(v, depth + 1);
  return out;
}

function censorKey(key: string): boolean {
  return SENSITIVE_KEYS.has(key.toLowerCase().replace(/[_-]/g, ""));
}

