/**
 * customers/create|update|delete|enable|disable|merge|purchasing_summary, customer.tags_added|
 * tags_removed, customer.joined_segment|left_segment and customers_email_marketing_consent/update
 * (docs/customers-and-consent.md).
 *
 * A customer becomes (at most) one `person.upsert` — decided by the consent machine — followed by a
 * `customer/<action>` lifecycle event. Account enable/disable are `user` events. A field a payload
 * leaves out is unknown, never empty: since API 2025-01 customers/update carries no tags, consent
 * or sales totals, and nothing is removed or reset for their absence.
 */
import type { CustomerEvent, PersonUpsert, ServiceCall } from "../../services/marketing/schemas";
import { customerSubscriptions } from "./subscriptions";
import { decideConsent, emptyConsentMemory, isReturnedEcho, type ConsentDecision, type ConsentInput } from "../consent";
import type {
  ConsentUpdatePayload,
  CustomerMergePayload,
  CustomerPayload,
  CustomerTagsPayload,
  EmailMarketingConsent,
  PurchasingSummaryPayload,
  SegmentMembershipPayload,
} from "../payloads";
import { amount, cleanEmail, compact, currencyOf, customerLinks, mapAddress, personRef } from "./common";
import { customerEventBody, eventCall, userEventBody } from "../event-bodies";
import { priorOf, type CustomerSyncState, type SyncContext, type SyncPlan } from "../plan-contract";

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
  calls: ServiceCall[];
  next: CustomerSyncState;
  note?: string;
}

/**
 * What a payload says about tags: the whole list (GraphQL, pre-2025 webhooks), tags added or removed
 * (customer.tags_added|tags_removed), or nothing (null: the tags are unknown and left as they are).
 */
export type TagChange = { set: readonly string[] } | { add: readonly string[] } | { remove: readonly string[] } | null;

function tagsAfter(known: readonly string[], change: TagChange): string[] {
  if (!change) return [...known];
  if ("set" in change) return [...change.set];
  if ("add" in change) return [...new Set([...known, ...change.add])];
  const gone = new Set(change.remove);
  return known.filter((t) => !gone.has(t));
}

/**
 * The upsert's `tags`: a new contact gets every known tag; an existing one only the change —
 * named tags for add/remove (idempotent, whatever the service has), a diff for a whole list.
 */
function tagsField(known: readonly string[], after: readonly string[], change: TagChange, creating: boolean) {
  if (creating) return tagDiff([], after);
  if (!change) return undefined;
  if ("set" in change) return tagDiff(known, after);
  const entries = "add" in change ? change.add.map((t) => [t, true]) : change.remove.map((t) => [t, false]);
  return entries.length > 0 ? (Object.fromEntries(entries) as Record<string, boolean>) : undefined;
}

/**
 * Runs the consent machine and builds the person calls (if any) plus the next customer state.
 * `segments` changes the mirrored segments' tags (kept apart from the Shopify tags).
 */
function planPerson(
  prior: CustomerSyncState | null,
  email: string | null,
  customerId: string,
  consent: EmailMarketingConsent | null,
  profile: { firstName?: string | null; lastName?: string | null; phone?: string | null },
  tags: TagChange,
  ctx: SyncContext,
  segments: TagChange = null,
): PersonResult & { decision: ConsentDecision } {
  const base = prior ?? freshState(email);
  const known = tagsAfter(base.tags, tags);
  const knownSegments = tagsAfter(base.segmentTags ?? [], segments);
  // A blank or missing field is unknown, never a reason to forget (or blank out) what was known.
  const given = compact({ firstName: profile.firstName, lastName: profile.lastName, phone: profile.phone });
  const knownProfile = { ...base.profile, ...given };
  const remembered = {
    tags: known,
    ...(segments ? { segmentTags: knownSegments } : {}),
    ...(Object.keys(knownProfile).length > 0 ? { profile: knownProfile } : {}),
  };
  const decision = decideConsent(consentInput(consent), prior?.consent, ctx.settings);
  if (decision.upsert === false) {
    return {
      decision,
      calls: [],
      next: { ...base, email: base.consent.contact ? base.email : email ?? base.email, ...remembered, consent: decision.next },
      note: `no person upsert: ${decision.reason}`,
    };
  }
  if (!email) {
    // Nothing was applied, so nothing is remembered: the consent is applied once an email exists.
    return { decision, calls: [], next: { ...base, ...remembered }, note: "no person upsert: no usable email" };
  }
  const creating = !base.consent.contact || decision.recreate;
  // The contact is created with all that is known; an existing one gets only what this topic says.
  const sent = creating ? knownProfile : given;
  const shopifyTags = tagsField(base.tags, known, tags, creating);
  // Stryker disable next-line LogicalOperator,ArrayDeclaration: segments change by add or remove, never by a whole list ("set"), the one case that reads the known tags
  const segmentTags = tagsField(base.segmentTags ?? [], knownSegments, segments, creating);
  const body: PersonUpsert = {
    ...(decision.recreate ? { email } : upsertIdentity(prior, email)),
    source: ctx.settings.source,
    customFields: compact({
      firstName: sent.firstName,
      lastName: sent.lastName,
      phoneNumber: sent.phone,
      referenceId: customerId,
    }),
    tags: shopifyTags || segmentTags ? { ...shopifyTags, ...segmentTags } : undefined,
    ...decision.upsert,
  };
  if (body.tags === undefined) delete body.tags;
  const calls: ServiceCall[] = [];
  // The contact is deleted under the address the service knows it by, then created anew.
  if (decision.recreate) calls.push({ op: "person.delete", idOrEmail: base.email ?? email });
  calls.push({ op: "person.upsert", body });
  return { decision, calls, next: { ...base, email, ...remembered, consent: decision.next } };
}

function customerBodyFrom(c: CustomerPayload, email: string | null, ctx: SyncContext): CustomerEvent {
  const name = [c.first_name, c.last_name].filter((s) => s && s.trim() !== "").join(" ");
  const currency = currencyOf(c.currency);
  return customerEventBody(personRef(email, c.id), ctx.settings.source, {
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
    // Number.isInteger holds for whole numbers only (never for null), which TypeScript does not narrow by.
    purchase_count: Number.isInteger(c.orders_count) ? (c.orders_count as number) : undefined,
    purchase_value: amount(c.total_spent, currency),
    address: mapAddress(c.default_address),
    ...customerLinks(c, ctx),
    subscriptions: customerSubscriptions(ctx),
  });
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
    { firstName: c.first_name, lastName: c.last_name, phone: c.phone },
    c.tags === null ? null : { set: c.tags },
    ctx,
  );
  const calls: ServiceCall[] = [...person.calls];

  // An unchanged customer event is dropped by the pipeline's content hash.
  calls.push(eventCall("customer", action, customerBodyFrom(c, email, ctx)));
  return {
    objectKey,
    objectUpdatedAt: c.updated_at,
    calls,
    nextState: person.next,
    ...(person.note ? { skipped: person.note } : {}),
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
  const body = customerEventBody(personRef(email, c.id), ctx.settings.source, {
    id: c.id,
    // A deletion must never create a contact, whatever customerEventsCreateContacts says.
    is_contact: false,
    customer_email: email,
    modified_at: ctx.now.toISOString(),
  });
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
 * customers/enable|disable: the customer's store account (the service's "user"). A disabled account
 * is not a deleted one: the first enable is `user/created`, every later change `user/updated`
 * with the account's status. Not a version of the customer: objectUpdatedAt null.
 */
export function mapCustomerAccount(change: "enabled" | "disabled", c: CustomerPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(c.id);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  const email = cleanEmail(c.email) ?? prior?.email ?? null;
  const action = change === "enabled" && !prior?.account ? "created" : "updated";
  const displayName = [c.first_name, c.last_name].filter((s) => s && s.trim() !== "").join(" ");
  const body = userEventBody(personRef(email, c.id), ctx.settings.source, {
    id: c.id,
    is_contact: change === "enabled" ? ctx.settings.customerEventsCreateContacts : false,
    username: email,
    first_name: c.first_name,
    last_name: c.last_name,
    display_name: displayName,
    // The topic says what happened; the body's `state` is the customer's state, which can lag.
    status: change,
    created_at: c.created_at,
    modified_at: c.updated_at,
  });
  const base = prior ?? freshState(email);
  const profile = { ...base.profile, ...compact({ firstName: c.first_name, lastName: c.last_name, phone: c.phone }) };
  const nextState: CustomerSyncState = { ...base, account: change, ...(Object.keys(profile).length > 0 ? { profile } : {}) };
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("user", action, body)], nextState };
}

/** customers_email_marketing_consent/update: consent only, no profile fields, no lifecycle event. */
export function mapConsentUpdate(p: ConsentUpdatePayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(p.customer_id);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  const email = cleanEmail(p.email_address) ?? prior?.email ?? null;
  if (prior && email === prior.email && isReturnedEcho(consentInput(p.email_marketing_consent), prior.consent)) {
    // The unsubscribe the app wrote to Shopify from the service's own (app/consent-return): no upsert, no loop.
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "the app's own consent write coming back from Shopify: already applied at the service" };
  }
  const person = planPerson(prior, email, p.customer_id, p.email_marketing_consent, {}, null, ctx);
  return {
    objectKey,
    // Consent has its own clock (consent_updated_at, checked by the consent machine).
    objectUpdatedAt: null,
    calls: person.calls,
    nextState: person.next,
    ...(person.note ? { skipped: person.note } : {}),
  };
}

/**
 * customer.tags_added / customer.tags_removed: only the named tags change at the service (true
 * adds, false removes); tags set there by anyone else stay. The consent is untouched (unknown).
 */
export function mapCustomerTags(change: "add" | "remove", p: CustomerTagsPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(p.customerId);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  const tags: TagChange = change === "add" ? { add: p.tags } : { remove: p.tags };
  const person = planPerson(prior, prior?.email ?? null, p.customerId, null, {}, tags, ctx);
  return {
    objectKey,
    objectUpdatedAt: null,
    calls: person.calls,
    nextState: person.next,
    ...(person.note ? { skipped: `${person.note} (tags remembered for when the contact is created)` } : {}),
  };
}

/**
 * customer.joined_segment / customer.left_segment: for a segment the shop mirrors (Settings), the
 * segment's tag is added (`true`) or removed (`false`) on the contact, like customer.tags_added|
 * removed; other tags stay. Any other segment is ignored with the reason. No contact yet: the tag
 * is remembered and goes with the upsert that creates the contact.
 */
export function mapSegmentMembership(change: "joined" | "left", p: SegmentMembershipPayload, ctx: SyncContext): SyncPlan {
  const tag = ctx.segmentTags?.[p.segment_id];
  if (!tag) {
    return {
      objectKey: `segment:${p.segment_id}`,
      objectUpdatedAt: null,
      calls: [],
      nextState: null,
      skipped: `segment ${p.segment_id} is not mirrored as a tag (not picked in Settings)`,
    };
  }
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(p.customer_id);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  // An imported join (the members the segment had when picked) read before a live "left" that
  // has since been applied must not put the tag back.
  const leftAt = prior?.segmentsLeftAt?.[tag];
  if (change === "joined" && p.picked_at && leftAt && leftAt >= new Date(p.picked_at).toISOString()) {
    return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer left the segment after it was picked" };
  }
  const segments: TagChange = change === "joined" ? { add: [tag] } : { remove: [tag] };
  const person = planPerson(prior, prior?.email ?? null, p.customer_id, null, {}, null, ctx, segments);
  const { [tag]: _, ...otherLefts } = person.next.segmentsLeftAt ?? {};
  const segmentsLeftAt = change === "left" ? { ...otherLefts, [tag]: ctx.now.toISOString() } : p.picked_at ? person.next.segmentsLeftAt : otherLefts;
  return {
    objectKey,
    objectUpdatedAt: null,
    calls: person.calls,
    nextState: { ...person.next, ...(segmentsLeftAt && Object.keys(segmentsLeftAt).length ? { segmentsLeftAt } : { segmentsLeftAt: undefined }) },
    ...(person.note ? { skipped: `${person.note} (segment tag remembered for when the contact is created)` } : {}),
  };
}

/** customers/purchasing_summary: the sales totals on a `customer/updated` event, nothing else. */
export function mapPurchasingSummary(p: PurchasingSummaryPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "customer");
  const objectKey = customerObjectKey(p.customerId);
  if (prior?.deleted) return { objectKey, objectUpdatedAt: null, calls: [], nextState: prior, skipped: "customer was deleted" };
  const email = prior?.email ?? null;
  const currency = currencyOf(p.amountSpent?.currencyCode);
  const body = customerEventBody(personRef(email, p.customerId), ctx.settings.source, {
    id: p.customerId,
    // Sales totals alone must not create a contact.
    is_contact: false,
    customer_email: email,
    currency,
    modified_at: p.occurredAt,
    purchase_count: p.numberOfOrders ?? undefined,
    purchase_value: amount(p.amountSpent?.amount, currency),
  });
  return { objectKey, objectUpdatedAt: null, calls: [eventCall("customer", "updated", body)], nextState: ctx.prior };
}

/**
 * customers/merge: Shopify merged the deleted customer into the kept one. The deleted customer's
 * contact would be a ghost (an address no Shopify customer has), so it is deleted — unless it is the
 * kept customer's address too, or the kept customer is not known yet (its address may be that one),
 * or it is unsubscribed (it receives nothing and its opt-out stays on record).
 */
export function mapCustomerMerge(p: CustomerMergePayload, ctx: SyncContext): SyncPlan {
  const objectKey = customerObjectKey(p.admin_graphql_api_customer_deleted_id);
  const keptKey = customerObjectKey(p.admin_graphql_api_customer_kept_id);
  const base = { objectKey, objectUpdatedAt: null, relatedKeys: [keptKey] };
  const ghost = priorOf(ctx.prior, "customer");
  if (p.status !== "completed") {
    return { ...base, calls: [], nextState: ctx.prior, skipped: `merge ${p.status ?? "of unknown status"}: nothing changed` };
  }
  const nextState: CustomerSyncState = ghost
    ? { ...ghost, deleted: true, consent: { ...ghost.consent, contact: false } }
    : { ...freshState(null), deleted: true };
  const kept = priorOf(ctx.related?.[keptKey] ?? null, "customer");
  const skip = (why: string): SyncPlan => ({ ...base, calls: [], nextState, skipped: why });
  if (ghost?.deleted) return { ...base, calls: [], nextState: ghost, skipped: "the merged customer was already deleted" };
  if (!ghost?.email || !ghost.consent.contact) return skip("the merged customer had no contact in the service");
  if (ghost.consent.state === "unsubscribed") return skip("the merged customer's contact is unsubscribed: kept as an opt-out record");
  if (!kept?.email) return skip("the kept customer is not known yet: the merged customer's contact is left as it is");
  if (kept.email === ghost.email) return skip("the kept customer has the same address: one contact");
  return { ...base, calls: [{ op: "person.delete", idOrEmail: ghost.email }], nextState };
}
