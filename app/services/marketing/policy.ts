/**
 * Every behaviour the interface spec leaves "not shown", decided once.
 * The client (client.server.ts) and the emulator (test/emulator) both read
 * these values, so a change here moves both sides together.
 * README.md in this folder explains each choice.
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

/** Any 2xx is success; these are the ones the service (and emulator) use. */
export const SUCCESS_STATUSES = [200, 201, 202, 204] as const;
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
/**
 * `links.next` is resolved by keeping only its path and query and appending
 * them to the configured baseUrl: the bearer key is never sent to a host
 * named inside a response.
 */
export const FOLLOW_LINK_HOSTS = false;

// ---------------------------------------------------------------------------
// Status codes the spec does not state (emulator answers with these; the
// client classifies by message first, so it does not depend on them)
// ---------------------------------------------------------------------------

/** "Unauthenticated": the client classifies by message whatever the status. */
export const UNAUTHENTICATED_STATUS = 401;
/** "Person not found" / "Campaign not found(.)": client classifies by message. */
export const NOT_FOUND_STATUS = 404;
/** Send/schedule eligibility check failure ("please retry"): a transient 503. */
export const ELIGIBILITY_FAILURE_STATUS = 503;
export const RATE_LIMITED_STATUS = 429;

/** Status per successful operation in the emulator. */
export const SUCCESS_STATUS = {
  read: 200,
  personCreated: 201,
  personUpdated: 200,
  campaignCreated: 201,
  campaignUpdated: 200,
  campaignSent: 200,
  testSent: 200,
  deleted: 204,
  event: 200,
} as const;

// ---------------------------------------------------------------------------
// Resource behaviour the spec leaves open (emulator)
// ---------------------------------------------------------------------------

/** Typed events are stored under `<type>_<action>` (matches the spec's `order_completed`). */
export const typedEventName = (type: string, action: string): string => `${type}_${action}`;

/** A campaign in `preparing` cannot be deleted (same as `sending`). */
export const DELETE_PREPARING_CAMPAIGN: "refuse" | "allow" = "refuse";
/** Statuses whose campaigns cannot be deleted. */
export const UNDELETABLE_CAMPAIGN_STATUSES = ["sending", "preparing"] as const;

/** Test-sends per account per rolling minute before 429. */
export const TEST_SEND_PER_MINUTE = 5;
/** Remaining campaign sends per account per period in a fresh emulator account. */
export const DEFAULT_SENDING_LIMIT = 100;
/** Each send or schedule consumes one send from the limit. */
export const SENDS_PER_CAMPAIGN = 1;

/** Test-send recipients must be on one of the account's verified domains; by default the account email's domain. */
export const verifiedDomainsFor = (accountEmail: string): string[] => [accountEmail.split("@")[1]!.toLowerCase()];

/**
 * Empty page: `from` and `to` are null (Laravel style); the client maps a 0
 * to null too. `lastPage` is at least 1.
 */
export const EMPTY_PAGE_FROM_TO: null = null;

/** Person events list: newest first. */
export const PERSON_EVENTS_ORDER: "desc" | "asc" = "desc";
/** Campaign list without `sort`: newest first (createdAt desc). */
export const CAMPAIGN_DEFAULT_SORT = { field: "createdAt", order: "desc" } as const;

/** filter[tags] / filter[segments]: included names match ANY; excluded names remove on ANY. */
export const LIST_FILTER_INCLUDE_MODE: "any" | "all" = "any";

/**
 * Events whose person (email, referenceId, uuid) is unknown are NOT turned
 * into people: they go to an unattached list (except customer/user events
 * with `is_contact: true` and an email, which create the contact first).
 */
export const CREATE_PERSON_FROM_EVENT = false;

/** A new person with `status: "inactive"` and no statusDetails (skipDoubleOptIn) becomes `unsubscribed`. */
export const INACTIVE_DEFAULT_DETAILS = "unsubscribed" as const;

/**
 * skipDoubleOptIn true with neither status nor statusDetails on a new person:
 * `unconfirmed` and no confirmation email (nobody becomes emailable without an explicit status).
 */
export const SKIP_DOI_WITHOUT_STATUS = "unconfirmed" as const;

/**
 * Blocked people: any statusDetails/status change is refused (422 `status`).
 * Hard-bounced people: `active`/`confirmed` refused, other values allowed.
 */
export const REFUSE_STATUS_CHANGE_ON_BLOCKED = true;

/** `customFields.source` in a request is refused (client and emulator, 422 `customFields.source`). */
export const REFUSE_CUSTOM_FIELD_SOURCE = true;

/** Website tracker with no event yet: `lastEventTrackedAt` is null. */
export const TRACKER_LAST_EVENT_NONE: null = null;

// ---------------------------------------------------------------------------
// Messages (exact texts the client matches; emulator sends them)
// ---------------------------------------------------------------------------

export const MESSAGES = {
  unauthenticated: "Unauthenticated",
  personNotFound: "Person not found",
  campaignNotFound: "Campaign not found",
  /** send, schedule, test-send add a trailing period */
  campaignNotFoundAction: "Campaign not found.",
  accountInactive: "Your account is not active. Please resolve your billing status to continue.",
  pluginKey: "This API key was issued for a content-site plugin. A dashboard or CLI API key is required to send, schedule or test-send campaigns.",
  invalid: "The given data was invalid.",
  eventEmailRequired: "The email field is required when reference id is not present.",
  testSendThrottled: "Too many test emails. Please retry in a minute.",
  eligibility: "We could not check whether this campaign can be sent. Please try again.",
  sendFailed: "The campaign could not be sent. Please try again.",
} as const;
