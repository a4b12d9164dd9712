import { z } from "zod";
import type { ShopSettings } from "./settings";

/**
 * Email-marketing consent: Shopify state → fields of a `person.upsert`.
 *
 * One explicit table (CONSENT_TABLE) decides, per incoming Shopify state and per what we last
 * applied for this customer (the "phase"), which action happens. A stale-data guard runs first.
 * Status fields are only sent on a transition, never re-asserted on every customer update: that
 * would undo an unsubscribe/confirmation the person made in the service itself.
 */

export const SHOPIFY_CONSENT_STATES = [
  "subscribed",
  "not_subscribed",
  "unsubscribed",
  "pending",
  "redacted",
  "invalid",
] as const;
export type ShopifyConsentState = (typeof SHOPIFY_CONSENT_STATES)[number];

/** Incoming consent as read from a webhook (timestamps already normalised to ISO). */
export interface ConsentInput {
  state: ShopifyConsentState | null;
  optInLevel: string | null;
  consentUpdatedAt: string | null;
}

/** What this module remembers per customer, stored inside ObjectSyncState. */
export const consentMemorySchema = z.object({
  /** Last Shopify state we applied (null: never known). */
  state: z.enum(SHOPIFY_CONSENT_STATES).nullable(),
  /** consent_updated_at of that state. */
  at: z.string().nullable(),
  optInLevel: z.string().nullable(),
  /** A person upsert was sent for this customer, so the contact exists as far as we know. */
  contact: z.boolean(),
  /** A double-opt-in-triggering upsert was sent (so the confirmation email went out once). */
  doiRequested: z.boolean(),
  /**
   * consentUpdatedAt of the unsubscribe the app itself wrote to Shopify, returning the service's
   * unsubscribe or block (app/consent-return): Shopify's consent webhook carrying it is the app's
   * own write coming back, already applied at the service.
   */
  returnedAt: z.string().optional(),
});
export type ConsentMemory = z.infer<typeof consentMemorySchema>;

/** Phase = what the last applied consent left; columns of the table. */
export type ConsentPhase = "new" | "subscribed" | "unsubscribed" | "other";
export const CONSENT_PHASES: readonly ConsentPhase[] = ["new", "subscribed", "unsubscribed", "other"];

export type ConsentAction =
  | "SUBSCRIBE"
  | "RESUBSCRIBE"
  | "UNSUBSCRIBE"
  | "NON_SUBSCRIBER"
  | "PROFILE"
  | "NONE";

export type IncomingState = ShopifyConsentState | "null";
export const INCOMING_STATES: readonly IncomingState[] = [...SHOPIFY_CONSENT_STATES, "null"];

/**
 * The transition table. Rows: incoming Shopify state ("null" = no consent object / no state).
 * Columns: phase — "new" (no contact pushed yet), else the last applied state
 * ("other" = not_subscribed, pending, invalid, redacted or unknown).
 */
export const CONSENT_TABLE: Readonly<Record<IncomingState, Readonly<Record<ConsentPhase, ConsentAction>>>> = {
  subscribed: { new: "SUBSCRIBE", subscribed: "PROFILE", unsubscribed: "RESUBSCRIBE", other: "SUBSCRIBE" },
  unsubscribed: { new: "UNSUBSCRIBE", subscribed: "UNSUBSCRIBE", unsubscribed: "PROFILE", other: "UNSUBSCRIBE" },
  not_subscribed: { new: "NON_SUBSCRIBER", subscribed: "PROFILE", unsubscribed: "PROFILE", other: "PROFILE" },
  // Shopify's own confirmation email is in flight: not consent yet, and we must not send a second one.
  pending: { new: "NON_SUBSCRIBER", subscribed: "PROFILE", unsubscribed: "PROFILE", other: "PROFILE" },
  // A bouncing/invalid address is never worth creating.
  invalid: { new: "NONE", subscribed: "PROFILE", unsubscribed: "PROFILE", other: "PROFILE" },
  // GDPR redaction: never push anything about this person again.
  redacted: { new: "NONE", subscribed: "NONE", unsubscribed: "NONE", other: "NONE" },
  // No consent information: profile data only, status untouched.
  null: { new: "NON_SUBSCRIBER", subscribed: "PROFILE", unsubscribed: "PROFILE", other: "PROFILE" },
};

export type ConsentUpsertFields = {
  skipDoubleOptIn?: true;
  status?: "active" | "inactive";
  statusDetails?: "confirmed" | "unconfirmed" | "unsubscribed";
};

export interface ConsentDecision {
  /** "<incoming>/<phase>" or "stale/<phase>": the arrow of the table that fired. */
  arrow: string;
  action: ConsentAction;
  /** false: send no person upsert. Otherwise the status fields to merge into the upsert body. */
  upsert: false | ConsentUpsertFields;
  /** The upsert triggers the service's double opt-in email. */
  requestsDoubleOptIn: boolean;
  /**
   * Delete the existing contact before the upsert: the service sends its confirmation email only
   * when a person is created (§3.2), so this is the only way to ask an existing contact to confirm.
   */
  recreate: boolean;
  next: ConsentMemory;
  reason: string;
}

export const emptyConsentMemory: ConsentMemory = {
  state: null,
  at: null,
  optInLevel: null,
  contact: false,
  doiRequested: false,
};

export function phaseOf(memory: ConsentMemory | null | undefined): ConsentPhase {
  if (!memory || !memory.contact) return "new";
  if (memory.state === "subscribed") return "subscribed";
  if (memory.state === "unsubscribed") return "unsubscribed";
  return "other";
}

const CONFIRMED: ConsentUpsertFields = { skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" };
const UNSUBSCRIBED: ConsentUpsertFields = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unsubscribed" };
const UNCONFIRMED: ConsentUpsertFields = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unconfirmed" };
const PROFILE_ONLY: ConsentUpsertFields = { skipDoubleOptIn: true };
const DOUBLE_OPT_IN: ConsentUpsertFields = {};

function time(iso: string | null): number | null {
  // Stryker disable next-line StringLiteral: any text that is not a date parses as NaN, as "" does
  const t = Date.parse(iso ?? "");
  return Number.isNaN(t) ? null : t;
}

/**
 * Data older than what we applied must not change the status. Re-subscribing after an unsubscribe
 * needs a strictly newer consent time (an unknown time cannot prove it is newer); an unsubscribe
 * is only ignored when strictly older (privacy wins a tie); other changes need a newer time.
 */
export function isStale(input: ConsentInput, memory: ConsentMemory | null | undefined): boolean {
  if (!memory || memory.state === null || input.state === null || input.state === memory.state) return false;
  const incoming = time(input.consentUpdatedAt);
  // An unknown applied time is older than any consent time.
  const applied = time(memory.at) ?? -Infinity;
  if (input.state === "subscribed" && memory.state === "unsubscribed") return incoming === null || incoming <= applied;
  if (incoming === null) return false;
  if (input.state === "unsubscribed") return incoming < applied;
  return incoming <= applied;
}

/**
 * Whether an incoming consent is the app's own unsubscribe coming back from Shopify (the same
 * state and consent time the app wrote): it changes nothing at the service, where it came from.
 */
export function isReturnedEcho(input: ConsentInput, memory: ConsentMemory | null | undefined): boolean {
  if (!memory?.returnedAt || input.state !== "unsubscribed") return false;
  const incoming = time(input.consentUpdatedAt);
  // Shopify keeps the time to the second.
  return incoming !== null && Math.floor(incoming / 1000) === Math.floor((time(memory.returnedAt) ?? NaN) / 1000);
}

/** Runs the consent machine for one incoming consent object. Pure. */
export function decideConsent(
  input: ConsentInput,
  memory: ConsentMemory | null | undefined,
  settings: Pick<ShopSettings, "optInMode" | "syncNonSubscribers">,
): ConsentDecision {
  const prior = memory ?? emptyConsentMemory;
  const phase = phaseOf(memory);

  if (isStale(input, memory)) {
    const upsert = prior.contact ? PROFILE_ONLY : false;
    return {
      arrow: `stale/${phase}`,
      action: prior.contact ? "PROFILE" : "NONE",
      upsert,
      requestsDoubleOptIn: false,
      recreate: false,
      // A profile update reaches an existing contact only, so what is remembered stays as it was.
      next: { ...prior },
      reason: `consent "${input.state}" at ${input.consentUpdatedAt ?? "unknown time"} is not newer than applied "${prior.state}" at ${prior.at ?? "unknown time"}`,
    };
  }

  const incoming: IncomingState = input.state ?? "null";
  const action = CONSENT_TABLE[incoming][phase];
  const arrow = `${incoming}/${phase}`;
  let upsert: false | ConsentUpsertFields = false;
  let requestsDoubleOptIn = false;
  let recreate = false;
  let reason: string;

  switch (action) {
    case "SUBSCRIBE":
    case "RESUBSCRIBE":
      if (settings.optInMode === "trust_shopify") {
        upsert = CONFIRMED;
        reason = "subscribed in Shopify, trusted as confirmed";
      } else if (input.optInLevel === "confirmed_opt_in") {
        // The person already confirmed through Shopify's own double opt-in: no second confirmation.
        upsert = CONFIRMED;
        reason = "subscribed in Shopify through Shopify's double opt-in (confirmed_opt_in)";
      } else if (!prior.contact) {
        // §3.2: creating the person is what sends the service's confirmation email.
        if (!prior.doiRequested) {
          upsert = DOUBLE_OPT_IN;
          requestsDoubleOptIn = true;
          reason = "subscribed in Shopify, the service's double opt-in confirms it";
        } else {
          reason = "double opt-in already requested once for this person";
        }
      } else if (action === "RESUBSCRIBE" || !prior.doiRequested) {
        // §3.2 sends a confirmation only when a person is created: the contact is deleted and
        // created again, so the person who subscribed again actually gets the email.
        upsert = DOUBLE_OPT_IN;
        requestsDoubleOptIn = true;
        recreate = true;
        reason = "subscribed again in Shopify: contact created anew so the service sends its confirmation email";
      } else {
        upsert = PROFILE_ONLY;
        reason = "double opt-in already requested once for this person";
      }
      break;
    case "UNSUBSCRIBE":
      upsert = UNSUBSCRIBED;
      reason = "unsubscribed in Shopify";
      break;
    case "NON_SUBSCRIBER":
      upsert = settings.syncNonSubscribers ? UNCONFIRMED : false;
      reason = settings.syncNonSubscribers
        ? "non-subscriber synced as unconfirmed contact (syncNonSubscribers)"
        : "non-subscribers are not pushed as contacts";
      break;
    case "PROFILE":
      // Stryker disable next-line BooleanLiteral: PROFILE is in no column of phase "new", so a contact always exists here
      upsert = prior.contact ? PROFILE_ONLY : false;
      reason = prior.contact
        ? "status left as is"
        : // Stryker disable next-line StringLiteral: PROFILE is in no column of phase "new", so a contact always exists here
          "no contact to update";
      break;
    case "NONE":
      reason = input.state === "redacted" ? "customer data redacted" : `consent "${incoming}" is not synced`;
      break;
  }

  const applied = input.state !== null;
  const next: ConsentMemory = {
    state: applied ? input.state : prior.state,
    at: applied ? (input.consentUpdatedAt ?? (input.state === prior.state ? prior.at : null)) : prior.at,
    optInLevel: applied ? input.optInLevel : prior.optInLevel,
    contact: prior.contact || upsert !== false,
    doiRequested: prior.doiRequested || requestsDoubleOptIn,
    ...(prior.returnedAt ? { returnedAt: prior.returnedAt } : {}),
  };
  return { arrow, action, upsert, requestsDoubleOptIn, recreate, next, reason };
}

/** The table as Markdown, for app/sync/README.md (a test keeps the README in sync). */
export function consentTableMarkdown(): string {
  const header = `| incoming \\ phase | ${CONSENT_PHASES.join(" | ")} |`;
  const rule = `|---|${CONSENT_PHASES.map(() => "---").join("|")}|`;
  const rows = INCOMING_STATES.map(
    (s) => `| ${s} | ${CONSENT_PHASES.map((p) => CONSENT_TABLE[s][p]).join(" | ")} |`,
  );
  return [header, rule, ...rows].join("\n");
}
