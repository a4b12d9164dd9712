/**
 * The client's choices where the interface spec says "not shown" (transport side): how one call is
 * repeated within itself. Whether failed sync work is tried again later is pipeline/policy.ts's
 * decision (nextTry); the pipeline calls with retries: 0.
 * The client's defensive readings of the other gaps live where they apply
 * (schemas.ts, errors.ts); README.md in this folder lists them all next to the
 * emulator's permissive ones. The emulator (dev/emulator) does not read this file.
 */

// ---------------------------------------------------------------------------
// Client transport
// ---------------------------------------------------------------------------

/** Per-attempt timeout (AbortSignal.timeout) when the caller gives none. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Extra attempts after the first; 0 disables retrying (the sync pipeline passes 0). */
export const DEFAULT_RETRIES = 3;
/** Full-jitter exponential backoff: delay = random(0, min(MAX, BASE * 2^attempt)). */
export const RETRY_BASE_DELAY_MS = 250;
export const RETRY_MAX_DELAY_MS = 8_000;
/**
 * A Retry-After longer than this is not waited for in-process: the client
 * throws `rate_limited` with `retryAfterMs` so the caller can reschedule.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Success codes are not shown: any 2xx is success. */
export const isSuccessStatus = (status: number): boolean => status >= 200 && status < 300;

/**
 * Retry classes. "read": GET. "event": POST /api/events* (at-least-once is
 * accepted there). "mutation": everything else (people upsert/delete,
 * campaign writes): retried only on 429, which means "not processed".
 */
export type RetryClass = "read" | "event" | "mutation";
export const RETRY_ON_TRANSIENT: Record<RetryClass, boolean> = {
  read: true,
  event: true,
  mutation: false,
};

/** Safety stop for iterators that follow `links.next`. */
export const MAX_ITERATE_PAGES = 10_000;
// `links.next` is followed by keeping only its path and query on the configured
// baseUrl (client.server.ts toRelative): the key never goes to a host named in a response.
