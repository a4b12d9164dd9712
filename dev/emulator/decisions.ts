/**
 * The emulator's own constants: messages written from the spec's wording, and its choices where
 * docs/marketing-service-interface.md says "not shown". Where the spec is silent the emulator takes
 * the most permissive reading (accept what a real service plausibly accepts), so the client's
 * defensive choices are tested against a service that does not share them. Nothing here comes from
 * app/: the emulator answers to the spec alone. README.md in this folder lists each decision.
 * The §4.5 event-body rules, and which body field dates a person event (§2.3), are in ./events.ts.
 */

/** Texts: §5/§7 give `Unauthenticated`, `Person not found`, `Campaign not found(.)`, `The given data was invalid.`; the others paraphrase §7's "message about/asks to…". */
export const MESSAGES = {
  unauthenticated: "Unauthenticated",
  personNotFound: "Person not found",
  campaignNotFound: "Campaign not found",
  /** §7: send, schedule and test-send add a trailing period */
  campaignNotFoundAction: "Campaign not found.",
  accountInactive: "This account is not active. Resolve the billing status of the account to continue.",
  pluginKey: "API keys issued for a content-site plugin cannot send campaigns. Use a dashboard or CLI API key.",
  invalid: "The given data was invalid.",
  eventEmailRequired: "The email field is required when reference id is not present.",
  testSendThrottled: "Too many test sends. Please retry shortly.",
  eligibility: "The campaign's eligibility for sending could not be checked. Please retry in a few minutes.",
  sendFailed: "The campaign could not be sent. Please retry.",
} as const;

/** Not shown: status of `Unauthenticated`. */
export const UNAUTHENTICATED_STATUS = 401;
/** Not shown: status of not-found answers (body: `message` only, §7). */
export const NOT_FOUND_STATUS = 404;
/**
 * Not shown: status of the eligibility failure. 422, like the other send/schedule failures of §7;
 * the fault knob can pick another (`eligibilityCheckFails: { status }`) to prove the client reads the message.
 */
export const ELIGIBILITY_FAILURE_STATUS = 422;
/** §7/§8: test-send throttling. */
export const RATE_LIMITED_STATUS = 429;

/** Not shown: success codes. */
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

/** Not shown: names of typed events; `<type>_<action>` matches §6's example `order_completed`. */
export const typedEventName = (type: string, action: string): string => `${type}_${action}`;

/** Not shown: deleting a `preparing` campaign. §3.1 refuses only `sending`; permissive: allowed. */
export const UNDELETABLE_CAMPAIGN_STATUSES = ["sending"] as const;

/** Not shown: test-send rate per minute (§8). */
export const TEST_SEND_PER_MINUTE = 5;
/** Not shown: size of the sending limit (§8). Each send or schedule uses one. */
export const DEFAULT_SENDING_LIMIT = 100;

/** Not shown: which domains are verified. Default: the account email's domain (the account's own address is always allowed, §4.2). */
export const verifiedDomainsFor = (accountEmail: string): string[] => [accountEmail.split("@")[1]!.toLowerCase()];

/** §2.2: `inactive` covers unconfirmed/unsubscribed/blocked; `status: inactive` alone on a new person → `unsubscribed`. */
export const INACTIVE_DEFAULT_DETAILS = "unsubscribed" as const;
/** Not shown: skipDoubleOptIn with no status on a new person → `unconfirmed`, no confirmation email. */
export const SKIP_DOI_WITHOUT_STATUS = "unconfirmed" as const;

/**
 * §2.2 says only "email address". Permissive: something@something, no spaces, one @.
 * (The client is stricter about what is clearly not an address.)
 */
export const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;
