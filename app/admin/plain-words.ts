/**
 * Codes and reasons the pipeline stores (for support and the logs), in the merchant's words. The
 * stored text stays as it is; pages show these words and fold the original under "Details for support".
 */

// The marketing client's error kinds (app/services/marketing/marketing-error.ts), and the pipeline's own.
const FAILURE_WORDS: Record<string, string> = {
  unauthenticated: "your marketing account no longer accepts this API key",
  account_inactive: "your marketing account is inactive (check its billing)",
  plugin_key_not_allowed: "the API key is a content-site plugin key, not a dashboard (API) key",
  person_not_found: "the contact does not exist in your marketing account",
  validation: "the marketing service refused the data as invalid",
  rate_limited: "the marketing service was receiving too many updates at once",
  retry_later: "the marketing service asked to try again later",
  not_accepted: "the marketing service answered that it did not take the event",
  server_error: "the marketing service had a server error",
  timeout: "the marketing service did not answer in time",
  network: "the marketing service could not be reached",
  client_error: "the marketing service refused the update",
  sending_limit: "your marketing account reached its sending limit",
  upgrade_required: "your marketing account's plan does not allow this",
  unexpected: "something unexpected went wrong in the app",
};

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * A failure's stored text (`<kind>: <message> (<fields>)`, behind "Gave up retrying: " when the
 * retries ran out) in words. `attempts`: how many tries, when known.
 */
export function failureText(stored: string, attempts?: number): string {
  const gaveUp = /^Gave up retrying: /.exec(stored) ?? /^gave up after \d+ attempts; last: /.exec(stored);
  const rest = gaveUp ? stored.slice(gaveUp[0].length) : stored;
  const kind = /^([a-z_]+):/.exec(rest)?.[1];
  const words = (kind && FAILURE_WORDS[kind]) ?? "the marketing service did not accept the update";
  if (!gaveUp) return sentence(words);
  return `Could not be delivered after ${attempts ? `${attempts} ${attempts === 1 ? "try" : "tries"}` : "repeated tries"}: ${words}`;
}

// What a failure means for the merchant and what to do, by the error's kind.
const TRANSIENT = new Set(["server_error", "timeout", "network", "rate_limited", "retry_later", "not_accepted"]);
const CONNECTION = new Set(["unauthenticated", "account_inactive", "plugin_key_not_allowed", "sending_limit", "upgrade_required"]);

/**
 * One failure's stored text (`<kind>: <message>`) as what it means for the merchant: the service's
 * own words ("Server Error") say nothing about what to do, so the page shows this and keeps them as detail.
 */
export function failureMeaning(stored: string | null): string {
  const rest = (stored ?? "").replace(/^Gave up retrying: /, "").replace(/^gave up after \d+ attempts; last: /, "");
  const kind = /^([a-z_]+):/.exec(rest)?.[1] ?? "";
  const words = sentence(FAILURE_WORDS[kind] ?? "the marketing service did not accept the update");
  if (TRANSIENT.has(kind)) return `${words}; this change itself is fine. Replay it once the service works again.`;
  if (CONNECTION.has(kind)) return `${words}. Fix it on the Connection page or in your marketing account, then replay.`;
  if (kind === "person_not_found") return `${words}. Replay sends it again; it fails the same way until the contact exists.`;
  return `${words}. A replay fails the same way unless the data changed; send the details to support if it keeps failing.`;
}

/** Why a paused shop is paused (its stored `<kind>: <message>`), in words. */
export function pauseText(reason: string | null): string {
  if (reason?.startsWith("account_inactive")) return "Your marketing account is inactive; check its billing in your marketing account.";
  if (reason?.startsWith("plugin_key_not_allowed")) return "The stored key is a content-site plugin key; the app needs a dashboard (API) key.";
  return "Your marketing account no longer accepts this API key.";
}

/** "updated_at" / "line_items.0.price" → "updated at" / "line items price". */
function fieldWords(path: string): string {
  return path
    .split(".")
    .filter((p) => !/^\d+$/.test(p))
    .join(" ")
    .replaceAll("_", " ");
}

/**
 * Why something Shopify sent could not be used (an invalid delivery's stored reason), in words:
 * "Invalid customers/create payload (1 issue; updated_at: timestamp … outside the years 1–9999)"
 * → "Shopify sent a date we could not read (updated at)".
 */
export function unusableText(reason: string): string {
  const invalid = /^Invalid \S+ payload \(\d+ issues?; ([^:]+): (.*)\)$/s.exec(reason);
  if (invalid) {
    const [, path, detail] = invalid;
    const what = /timestamp|date|datetime|year/i.test(detail) ? "a date" : "a value";
    return path === "(body)" ? "Shopify sent something we could not read" : `Shopify sent ${what} we could not read (${fieldWords(path)})`;
  }
  if (/json|parse|unexpected token/i.test(reason)) return "Shopify sent something we could not read";
  return "It could not be turned into anything to send";
}

/** A data request's stored outcome ("data request: 4 rows stored about customer …") in words. */
export function dataRequestStatus(detail: string | null, status: string): string {
  const rows = detail ? /(\d+) rows? stored/.exec(detail) : null;
  if (rows) return `Ready to download (${rows[1]} ${rows[1] === "1" ? "record" : "records"})`;
  if (detail?.startsWith("customers/data_request:")) return "Shopify's request could not be read; contact support";
  if (status === "done") return "Ready to download";
  return "Being prepared";
}
