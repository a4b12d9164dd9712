/**
 * One error family for everything the marketing client can throw.
 * Callers switch on `kind`; `retryable` says whether the same request may
 * succeed later without a change (the sync pipeline uses it to decide
 * between retrying and dead-lettering).
 */
import type { ZodError } from "zod";
import { errorBodySchema, type ErrorBody, type ErrorLinks, type UpgradeInfo } from "./schemas";

export const MARKETING_ERROR_KINDS = [
  "unauthenticated",
  "account_inactive",
  "plugin_key_not_allowed",
  "person_not_found",
  "campaign_not_found",
  "validation",
  "review_required",
  "sending_limit",
  "upgrade_required",
  "scheduled_at_invalid",
  "test_send_recipient_rejected",
  "rate_limited",
  /** §7: the service asks to retry (eligibility check failed, send/schedule failed for an unspecified reason), whatever the status */
  "retry_later",
  /** a 2xx event answer with `success: false` (§4.5): not stored; the service's words are the message */
  "not_accepted",
  "server_error",
  "timeout",
  "network",
  /** any other 4xx the spec does not describe (e.g. 400, 404 without a known message, 405) */
  "client_error",
] as const;
export type MarketingErrorKind = (typeof MARKETING_ERROR_KINDS)[number];

const RETRYABLE: Record<MarketingErrorKind, boolean> = {
  unauthenticated: false,
  account_inactive: false,
  plugin_key_not_allowed: false,
  person_not_found: false,
  campaign_not_found: false,
  validation: false,
  review_required: false,
  sending_limit: false,
  upgrade_required: false,
  scheduled_at_invalid: false,
  test_send_recipient_rejected: false,
  rate_limited: true,
  retry_later: true,
  not_accepted: true,
  server_error: true,
  timeout: true,
  network: true,
  client_error: false,
};

export interface MarketingServiceErrorInit {
  kind: MarketingErrorKind;
  message: string;
  /** HTTP status; 0 when no response was received or the request was refused locally. */
  status: number;
  body?: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
  errors?: Record<string, string[]>;
  links?: ErrorLinks;
  upgrade?: UpgradeInfo;
  rejectedRecipients?: string[];
  /** true when the request never left the process (local validation). */
  local?: boolean;
  method?: string;
  path?: string;
  /** the client operation that made the request (e.g. "people.upsert"); absent for local errors */
  operation?: string;
  cause?: unknown;
}

export class MarketingServiceError extends Error {
  override readonly name = "MarketingServiceError";
  readonly kind: MarketingErrorKind;
  readonly status: number;
  readonly body: unknown;
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  /** field name → messages (422 bodies and local validation) */
  readonly errors?: Record<string, string[]>;
  readonly links?: ErrorLinks;
  readonly upgrade?: UpgradeInfo;
  readonly rejectedRecipients?: string[];
  readonly local: boolean;
  readonly method?: string;
  readonly path?: string;
  /** the client operation that made the request ("people.upsert", "events.order", …) */
  readonly operation?: string;

  constructor(init: MarketingServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.body = init.body;
    this.retryable = init.retryable ?? RETRYABLE[init.kind];
    this.retryAfterMs = init.retryAfterMs;
    this.errors = init.errors;
    this.links = init.links;
    this.upgrade = init.upgrade;
    this.rejectedRecipients = init.rejectedRecipients;
    this.local = init.local ?? false;
    this.method = init.method;
    this.path = init.path;
    this.operation = init.operation;
  }
}

export function isMarketingServiceError(e: unknown): e is MarketingServiceError {
  return e instanceof MarketingServiceError;
}

/** Local validation failure: kind `validation`, status 0, `local: true`, field names in `errors` and the message. */
export function localValidationError(operation: string, zodError: ZodError): MarketingServiceError {
  const errors: Record<string, string[]> = {};
  for (const issue of zodError.issues) {
    const key = issue.path.length ? issue.path.map(String).join(".") : "_body";
    (errors[key] ??= []).push(issue.message);
  }
  const summary = Object.entries(errors)
    .map(([k, v]) => `${k}: ${v.join("; ")}`)
    .join(", ");
  return new MarketingServiceError({
    kind: "validation",
    status: 0,
    local: true,
    message: `Invalid ${operation} request — ${summary}`,
    errors,
    cause: zodError,
  });
}

/** Parses `Retry-After` (delta-seconds or HTTP-date) to milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * Spec gap (§7 gives these statuses no meaning): 408 Request Timeout and 425 Too Early say the request
 * was not processed and may be repeated; 409 Conflict is read the same way (a concurrent change that
 * a later try resolves). Classified `retry_later` (retryable) instead of a permanent `client_error`.
 */
export const RETRYABLE_CLIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 425]);

const ASKS_TO_RETRY = /\b(re-?try|try again)\b/i;
const EMAIL_IN_TEXT = /[^\s"'<>(),;:]+@[^\s"'<>(),;:]+\.[^\s"'<>(),;:]+/g;

export interface HttpFailure {
  status: number;
  /** parsed JSON body, or undefined when empty / not JSON */
  body: unknown;
  retryAfter?: string | null;
  method?: string;
  path?: string;
  operation?: string;
}

/** The service's message (or its errors.campaign) asks the caller to try again. */
export function asksToRetry(message: string, errors?: Record<string, string[]>): boolean {
  return [message, ...(errors?.campaign ?? [])].some((m) => ASKS_TO_RETRY.test(m));
}

/**
 * §4.5: every event endpoint answers `{success, timestamp}`. A 2xx with `success: false` says the
 * event was not taken: it is a failure (retryable: the spec gives no reason that would make a
 * repeat pointless), carrying the service's own words when the body has a message.
 */
export function notAcceptedError(status: number, body: unknown, method: string, path: string, operation?: string): MarketingServiceError {
  const said = errorBodySchema.parse(body).message?.trim();
  return new MarketingServiceError({
    kind: "not_accepted",
    status,
    body,
    method,
    path,
    operation,
    message: said ? `The service did not accept the event: ${said}` : "The service did not accept the event (success: false)",
  });
}

/** Maps an HTTP error response to a MarketingServiceError (spec §7). Message wins over status. */
export function classifyHttpError({ status, body, retryAfter, method, path, operation }: HttpFailure): MarketingServiceError {
  const b: ErrorBody = errorBodySchema.parse(body);
  const rawMessage = (b.message ?? "").trim();
  const message = rawMessage || `HTTP ${status}`;
  const base = { status, body, method, path, operation, errors: b.errors, links: b.links, upgrade: b.upgrade };
  const make = (kind: MarketingErrorKind, extra: Partial<MarketingServiceErrorInit> = {}) =>
    new MarketingServiceError({ ...base, kind, message, ...extra });

  if (/^unauthenticated\.?$/i.test(rawMessage)) return make("unauthenticated");
  if (/^person not found\.?$/i.test(rawMessage)) return make("person_not_found");
  if (/^campaign not found\.?$/i.test(rawMessage)) return make("campaign_not_found");
  if (status === 429) return make("rate_limited", { retryAfterMs: parseRetryAfter(retryAfter) });
  if (status === 401) return make("unauthenticated");
  if (status === 403) {
    if (/billing/i.test(rawMessage)) return make("account_inactive");
    if (/dashboard|\bCLI\b|plugin/i.test(rawMessage)) return make("plugin_key_not_allowed");
    // any other 403 goes on to the one "asks to retry" check below (§7: the eligibility failure
    // asks to retry and has no status shown, so a 403 is one of its possible answers)
  }
  const errors = b.errors;
  if (errors) {
    if (errors.review) return make("review_required");
    if (errors.send) return make(b.upgrade ? "upgrade_required" : "sending_limit");
    if (errors.scheduledAt) return make("scheduled_at_invalid");
    const recipientMessages = Object.entries(errors)
      .filter(([k]) => k === "recipients" || k.startsWith("recipients."))
      .flatMap(([, v]) => v);
    const named = recipientMessages.flatMap((m) => m.match(EMAIL_IN_TEXT) ?? []);
    if (named.length) return make("test_send_recipient_rejected", { rejectedRecipients: [...new Set(named)] });
  }
  // §7 states no status for the eligibility failure and a 422 for "send/schedule failed": both are
  // recognised by their message asking to retry (on its own or in errors.campaign), whatever the
  // 4xx status. The one place a 4xx becomes retryable by its words.
  if (status < 500 && asksToRetry(rawMessage, errors)) return make("retry_later");
  if (status === 403) return make("client_error");
  if (errors && status < 500) return make("validation");
  if (status === 422) return make("validation");
  if (status >= 500) return make("server_error");
  if (RETRYABLE_CLIENT_STATUSES.has(status)) return make("retry_later");
  return make("client_error");
}

/**
 * §3.2: `active` cannot be set on a blocked or hard-bounced person; retrying or replaying cannot
 * change that. The spec shows neither the status nor the text of this refusal, so it is recognised
 * by shape, not wording: the service (not local validation) refusing a person upsert on `status`
 * or `statusDetails`. The client checks both fields' values before sending, so a service refusal
 * on them is about the person. The upsert is known by the operation the client made, not by the
 * URL path, which carries whatever path prefix the configured base URL has.
 */
export function isPermanentRefusalForPerson(error: MarketingServiceError): boolean {
  if (error.kind !== "validation" || error.local) return false;
  if (error.operation !== PERSON_UPSERT_OPERATION) return false;
  return Object.keys(error.errors ?? {}).some((field) => field === "status" || field === "statusDetails");
}

/** The operation name of POST /api/people (create or update a person). */
export const PERSON_UPSERT_OPERATION = "people.upsert";
