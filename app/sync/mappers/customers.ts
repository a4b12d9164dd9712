/**
 * customers/create|update|delete|enable|disable and customers_email_marketing_consent/update.
 *
 * A customer becomes (at most) one `person.upsert` — decided by the consent machine — followed by a
 * `customer/<action>` lifecycle event. Account enable/disable are `user` events.
 */
import type { CustomerEvent, PersonUpsert, ServiceCall, UserEvent } from "../../services/marketing/schemas";
import { customerSubscriptions } from "./subscriptions";
import { decideConsent, emptyConsentMemory, type ConsentDecision, type ConsentInput } from "../consent";
import type { ConsentUpdatePayload, CustomerPayload, EmailMarketingConsent } from "../payloads";
import {
  amount,
  cleanEmail,
  compact,
  currencyOf,
  customerLinks,
  eventCall,
  mapAddress,
  personRef,
  priorOf,
  type CustomerSyncState,
  type SyncContext,
  type SyncPlan,
} from "./common";

export function customerObjectKey(customerId: string): string {
  return `customer:${customerId}`;
}

function freshState(email: string | null): CustomerSyncState {
  return { kind: "customer", email, tags: [], consent: emptyConsentMemory, deleted: false };
}

function consentInput(c: EmailMarketingConsent | null): ConsentInput {
  return {
    state: c?.state ?? null,
    optInLevel: c?.opt_in_level ?? null,
    consentUpdatedAt: c?.consent_updated_at ?? null,
  };
}

/** added → true, removed → false, against the tags last sent. */
export function tagDiff(previous: readonly string[], current: readonly string[]): Record<string, boolean> | undefined {
  const diff: Record<string, boolean> = {};
  const before = new Set(previous);
  const now = new Set(current);
  for (const t of current) if (!before.has(t)) diff[t] = true;
  for (const t of previous) if (!now.has(t)) diff[t] = false;
  return Object.keys(diff).length > 0 ? diff : undefined;
}

/**
 * Identity of the upsert: a contact already pushed under another email is addressed by the OLD
 * email with `emailChange`, so it keeps its history instead of a second contact being created.
 */
function upsertIdentity(prior: CustomerSyncState | null, email: string): Pick<PersonUpsert, "email" | "emailChange"> {
  if (prior?.consent.contact && prior.email && prior.email !== email) return { email: prior.email, emailChange: email };
  return { email };
}

interface PersonResult {
  call: ServiceCall | null;
  next: CustomerSyncState;
  note?: string;
}

/** Runs the consent machine and builds the person upsert (if any) plus the next customer state. */
function planPerson(
  prior: CustomerSyncState | null,
  email: string | null,
  customerId: string,
  consent: EmailMarketingConsent | null,
  profile: { firstName?: string | null; lastName?: string | null; phone?: string | null; tags?: string[] | null },
  ctx: SyncContext,
): PersonResult & { decision: ConsentDecision } {
  const base = prior ?? freshState(email);
  const decision = decideConsent(consentInput(consent), prior?.consent, ctx.settings);
  if (decision.upsert === false) {
    return {
      decision,
      call: null,
      next: { ...base, email: base.consent.contact ? base.email : email ?? base.email, consent: decision.next },
      note: `no person upsert: ${decision.reason}`,
    };
  }
  if (!email) {
    // Nothing was applied, so nothing is remembered: the consent is applied once an email exists.
    return { decision, call: null, next: base, note: "no person upsert: no usable email" };
  }
  const currentTags = profile.tags ?? base.tags;
  const body: PersonUpsert = {
    ...upsertIdentity(prior, email),
    source: ctx.settings.source,
    customFields: compact({
      firstName: profile.firstName,
      lastName: profile.lastName,
      phoneNumber: profile.phone,
      referenceId: customerId,
    }),
    ...(profile.tags ? { tags: tagDiff(base.consent.contact ? base.tags : [], currentTags) } : {}),
    ...decision.upsert,
  };
  if (body.tags === undefined) delete body.tags;
  return {
    decision,
    call: { op: "person.upsert", body },
    next: { ...base, email, tags: currentTags, consent: decision.next },
  };
}

function customerEventBody(c: CustomerPayload, email: string | null, ctx: SyncContext): CustomerEvent | null {
  const ref = personRef(email, c.id);
  if (!ref) return null;
  const name = [c.first_name, c.last_name].filter((s) => s && s.trim() !== "").join(" ");
  const currency = currencyOf(c.currency);
  return compact({
    ...ref,
    source: ctx.settings.source,
    id: c.id,
    is_contact: ctx.settings.customerEventsCreateContacts,
    first_name: c.first_name,
    last_name: c.last_name,
    name,
    customer_email: email,
    status: c.state,
    phone: c.phone,
    currency,
    created_at: c.created_at,
    modified_at: c.updated_at,
    purchase_count: typeof c.orders_count === "number" && Number.isInteger(c.orders_count) ? c.orders_count : undefined,
    purchase_value: amount(c.total_spent, currency),
    address: mapAddress(c.default_address),
    ...customerLinks(c, ctx),
    subscriptions: customerSubscriptions(ctx),
  }) as CustomerEvent;
}

/** customers/create, customers/update. */
export function mapCustomerUpsert(action: "created" | "updated", c: CustomerPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(c.id);
  if (prior?.deleted) {
    return { objectKey, objectUpdatedAt: c.updated_at, calls: [], nextState: prior, skipped: "customer was deleted" };
  }
  const email = cleanEmail(c.email);
  if (c.email_marketing_consent?.state === "redacted") {
    const decision = decideConsent(consentInput(c.email_marketing_consent), prior?.consent, ctx.settings);
    return {
      objectKey,
      objectUpdatedAt: c.updated_at,
      calls: [],
      nextState: { ...(prior ?? freshState(null)), consent: decision.next },
      skipped: "customer data redacted: nothing is pushed",
    };
  }

  const person = planPerson(
    prior,
    email,
    c.id,
    c.email_marketing_consent,
    { firstName: c.first_name, lastName: c.last_name, phone: c.phone, tags: c.tags ?? [] },
    ctx,
  );
  const calls: ServiceCall[] = person.call ? [person.call] : [];
  const notes: string[] = person.note ? [person.note] : [];

  // An unchanged customer event is dropped by the pipeline's content hash.
  const body = customerEventBody(c, email, ctx);
  if (body) calls.push(eventCall("customer", action, body));
  return {
    objectKey,
    objectUpdatedAt: c.updated_at,
    calls,
    nextState: person.next,
    ...(notes.length > 0 ? { skipped: notes.join("; ") } : {}),
  };
}

/** customers/delete: the payload has only the id, so the email comes from the prior state. */
export function mapCustomerDelete(c: CustomerPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(c.id);
  const email = prior?.email ?? cleanEmail(c.email);
  const base = prior ?? freshState(email);
  const nextState: CustomerSyncState = { ...base, deleted: true, consent: { ...base.consent, contact: false } };
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState, skipped: "already deleted" };

  if (ctx.settings.deleteContactOnCustomerDelete && email) {
    return { objectKey, objectUpdatedAt: null, calls: [{ op: "person.delete", idOrEmail: email }], nextState };
  }
  const ref = personRef(email, c.id);
  const body = compact({
    ...ref,
    source: ctx.settings.source,
    id: c.id,
    // A deletion must never create a contact, whatever customerEventsCreateContacts says.
    is_contact: false,
    customer_email: email,
    modified_at: ctx.now.toISOString(),
  }) as CustomerEvent;
  return {
    objectKey,
    objectUpdatedAt: null,
    calls: [eventCall("customer", "deleted", body)],
    nextState,
    ...(ctx.settings.deleteContactOnCustomerDelete
      ? { skipped: "no known email to delete the contact by; recorded customer/deleted instead" }
      : {}),
  };
}

/**
 * customers/enable|disable: the customer's store account (the service's "user").
 * An event, not a version of the customer: objectUpdatedAt null, state unchanged.
 */
export function mapCustomerAccount(action: "created" | "deleted", c: CustomerPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(c.id);
  const email = cleanEmail(c.email) ?? prior?.email ?? null;
  const ref = personRef(email, c.id);
  const displayName = [c.first_name, c.last_name].filter((s) => s && s.trim() !== "").join(" ");
  const body = compact({
    ...ref,
    source: ctx.settings.source,
    id: c.id,
    is_contact: action === "created" ? ctx.settings.customerEventsCreateContacts : false,
    username: email,
    first_name: c.first_name,
    last_name: c.last_name,
    display_name: displayName,
    status: c.state,
    created_at: c.created_at,
    modified_at: c.updated_at,
    deleted_at: action === "deleted" ? (c.updated_at ?? ctx.now.toISOString()) : undefined,
  }) as UserEvent;
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("user", action, body)], nextState: ctx.prior };
}

/** customers_email_marketing_consent/update: consent only, no profile fields, no lifecycle event. */
export function mapConsentUpdate(p: ConsentUpdatePayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(p.customer_id);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  const email = cleanEmail(p.email_address) ?? prior?.email ?? null;
  const person = planPerson(prior, email, p.customer_id, p.email_marketing_consent, { tags: null }, ctx);
  return {
    objectKey,
    // Consent has its own clock (consent_updated_at, checked by the consent machine).
    objectUpdatedAt: null,
    calls: person.call ? [person.call] : [],
    nextState: person.next,
    ...(person.note ? { skipped: person.note } : {}),
  };
}
