/**
 * Email-marketing consent as the marketing service receives it (docs/customers-and-consent.md):
 * the status fields of the person upsert for a Shopify consent, the stale-data guard on unknown
 * or equal consent times, the note a delivery records when nothing is pushed, and the consent
 * remembered between deliveries. Pure: planWebhook and decideConsent, no database or server.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CONSENT_PHASES,
  CONSENT_TABLE,
  consentTableMarkdown,
  decideConsent,
  emptyConsentMemory,
  isReturnedEcho,
  SHOPIFY_CONSENT_STATES,
  type ConsentMemory,
  type ConsentPhase,
  type IncomingState,
} from "../../app/sync/consent";
import { planWebhook } from "../../app/sync/plan-webhook";
import { objectSyncStateSchema, type ObjectSyncState, type SyncPlan } from "../../app/sync/plan-contract";
import { customerWith, fixture, makeCtx, ops, upsertOf } from "../sync/fixtures";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-02-01T00:00:00.000Z";
const T2 = "2026-03-01T00:00:00.000Z";
const TRUST = { optInMode: "trust_shopify" as const, syncNonSubscribers: false };
const DOI = { optInMode: "double_opt_in" as const, syncNonSubscribers: false };

const CONFIRMED = { skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" };
const UNSUBSCRIBED = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unsubscribed" };
const UNCONFIRMED = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unconfirmed" };

/** The id and address of Shopify's sample customer (test/fixtures/shopify-webhooks/customers.update.json). */
const CUSTOMER = fixture("customers/update");
const CUSTOMER_ID = String(CUSTOMER.id);

/** What we remember about Shopify's sample customer, with the given consent memory. */
function customerState(consent: ConsentMemory): ObjectSyncState {
  return { kind: "customer", email: "bob@biller.com", tags: [], consent, deleted: false };
}

/** customers_email_marketing_consent/update for the sample customer (Shopify's sample, consent replaced). */
function consentUpdate(state: string | null, at: string | null, optInLevel: string | null = "single_opt_in") {
  const body = fixture("customers_email_marketing_consent/update");
  body.customer_id = CUSTOMER_ID;
  body.email_marketing_consent = { state, opt_in_level: optInLevel, consent_updated_at: at };
  return body;
}

/** The status fields of the person upsert (absent keys: the service keeps what it has). */
function statusOf(plan: SyncPlan): Record<string, unknown> {
  const { skipDoubleOptIn, status, statusDetails } = upsertOf(plan);
  return Object.fromEntries(Object.entries({ skipDoubleOptIn, status, statusDetails }).filter(([, v]) => v !== undefined));
}

function consentAfter(plan: SyncPlan): ConsentMemory {
  const state = plan.nextState;
  if (state?.kind !== "customer") throw new Error(`no customer state in ${JSON.stringify(plan)}`);
  return state.consent;
}

describe("consent times the stale-data guard cannot compare", () => {
  it("an unsubscribe without a consent time still unsubscribes a contact subscribed at a known time", () => {
    const prior = customerState({ state: "subscribed", at: T1, optInLevel: "single_opt_in", contact: true, doiRequested: false });
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", null, null), makeCtx({ prior }));
    expect(statusOf(plan)).toEqual(UNSUBSCRIBED);
  });

  it("a subscribe without a consent time after a not_subscribed is applied: only a re-subscribe after an unsubscribe needs a newer time", () => {
    const prior = customerState({ state: "not_subscribed", at: T1, optInLevel: null, contact: true, doiRequested: false });
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", null), makeCtx({ prior }));
    expect(statusOf(plan)).toEqual(CONFIRMED);
  });

  it("unsubscribed, then Shopify's confirmation flow without consent times (pending, then subscribed): subscribed again", () => {
    const prior = customerState({ state: "unsubscribed", at: T1, optInLevel: null, contact: true, doiRequested: false });
    const pending = planWebhook("customers_email_marketing_consent/update", consentUpdate("pending", null, "confirmed_opt_in"), makeCtx({ prior }));
    expect(statusOf(pending)).toEqual({ skipDoubleOptIn: true });
    const subscribed = planWebhook(
      "customers_email_marketing_consent/update",
      consentUpdate("subscribed", null, "confirmed_opt_in"),
      makeCtx({ prior: pending.nextState }),
    );
    expect(statusOf(subscribed)).toEqual(CONFIRMED);
  });

  it("an unsubscribe without a time, then a subscribe without a time: the contact stays unsubscribed", () => {
    const ctx = makeCtx();
    const unsubscribe = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", null, null), ctx);
    expect(statusOf(unsubscribe)).toEqual(UNSUBSCRIBED);
    const subscribe = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", null), { ...ctx, prior: unsubscribe.nextState });
    expect(statusOf(subscribe)).toEqual({ skipDoubleOptIn: true });
    expect(consentAfter(subscribe).state).toBe("unsubscribed");
  });

  it("the same unsubscribe re-sent without a time keeps the unsubscribe's time, so an older subscribe stays out", () => {
    const prior = customerState({ state: "unsubscribed", at: T1, optInLevel: null, contact: true, doiRequested: false });
    const again = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", null, null), makeCtx({ prior }));
    const late = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", T0), makeCtx({ prior: again.nextState }));
    expect(statusOf(late)).toEqual({ skipDoubleOptIn: true });
  });

  it("after an unsubscribe without a time, a subscribe with a time is applied (the unsubscribe's time is unknown, not the older subscribe's)", () => {
    const prior = customerState({ state: "subscribed", at: T1, optInLevel: "single_opt_in", contact: true, doiRequested: false });
    const unsubscribe = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", null, null), makeCtx({ prior }));
    const subscribe = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", T0), makeCtx({ prior: unsubscribe.nextState }));
    expect(statusOf(subscribe)).toEqual(CONFIRMED);
  });
});

describe("a consent that is not newer than the one applied, for a customer with no contact", () => {
  // customers/create of a non-subscriber at T1 with syncNonSubscribers off: remembered, nothing pushed.
  const nonSubscriber = () => {
    const plan = planWebhook("customers/create", customerWith({ state: "not_subscribed", consent_updated_at: T1 }), makeCtx());
    expect(ops(plan)).toEqual(["customer/created"]);
    return plan.nextState;
  };

  it("a subscribe at the same time as the applied not_subscribed creates no contact, and the delivery says why", () => {
    const plan = planWebhook("customers/update", customerWith({ state: "subscribed", consent_updated_at: T1 }), makeCtx({ prior: nonSubscriber() }));
    expect(ops(plan)).toEqual(["customer/updated"]);
    expect(plan.skipped).toBe(`no person upsert: consent "subscribed" at ${T1} is not newer than applied "not_subscribed" at ${T1}`);
    expect(consentAfter(plan)).toMatchObject({ state: "not_subscribed", at: T1, contact: false });
  });

  it("an older subscribe creates no contact either; a newer one does", () => {
    const older = planWebhook("customers/update", customerWith({ state: "subscribed", consent_updated_at: T0 }), makeCtx({ prior: nonSubscriber() }));
    expect(ops(older)).toEqual(["customer/updated"]);
    expect(older.skipped).toContain(`consent "subscribed" at ${T0} is not newer`);
    const newer = planWebhook("customers/update", customerWith({ state: "subscribed", consent_updated_at: T2 }), makeCtx({ prior: nonSubscriber() }));
    expect(statusOf(newer)).toEqual(CONFIRMED);
  });

  it("once syncNonSubscribers is on, the unchanged non-subscriber's next update creates an unconfirmed contact", () => {
    const ctx = makeCtx({ prior: nonSubscriber(), settings: { syncNonSubscribers: true } });
    const plan = planWebhook("customers/update", customerWith({ state: "not_subscribed", consent_updated_at: T1 }), ctx);
    expect(statusOf(plan)).toEqual(UNCONFIRMED);
  });

  it("once syncNonSubscribers is on, an update with a consent state Shopify added later (no information) creates an unconfirmed contact", () => {
    const ctx = makeCtx({ prior: nonSubscriber(), settings: { syncNonSubscribers: true } });
    const plan = planWebhook("customers/update", customerWith({ state: "SOMETHING_NEW", consent_updated_at: T0 }), ctx);
    expect(statusOf(plan)).toEqual(UNCONFIRMED);
  });

  it("the decision names the action and explains unknown times", () => {
    const memory: ConsentMemory = { state: "unsubscribed", at: null, optInLevel: null, contact: false, doiRequested: false };
    const d = decideConsent({ state: "subscribed", optInLevel: "single_opt_in", consentUpdatedAt: null }, memory, TRUST);
    expect(d).toMatchObject({ action: "NONE", upsert: false, requestsDoubleOptIn: false, recreate: false });
    expect(d.next).toEqual(memory);
    expect(d.reason).toBe(`consent "subscribed" at unknown time is not newer than applied "unsubscribed" at unknown time`);
  });
});

describe("a stale subscribe for an existing contact in double opt-in", () => {
  const prior = customerState({ state: "unsubscribed", at: T1, optInLevel: null, contact: true, doiRequested: true });

  it("updates the profile only: no status, no deletion and re-creation, no confirmation email", () => {
    const plan = planWebhook("customers/update", customerWith({ state: "subscribed", consent_updated_at: T0 }), makeCtx({ prior, settings: { optInMode: "double_opt_in" } }));
    expect(ops(plan)).toEqual(["person.upsert", "customer/updated"]);
    expect(statusOf(plan)).toEqual({ skipDoubleOptIn: true });
    const d = decideConsent({ state: "subscribed", optInLevel: "single_opt_in", consentUpdatedAt: T0 }, prior.kind === "customer" ? prior.consent : null, DOI);
    expect(d).toMatchObject({ action: "PROFILE", requestsDoubleOptIn: false, recreate: false });
  });
});

describe("double opt-in", () => {
  it("a non-subscriber who subscribes later gets the service's confirmation email (the first time)", () => {
    const ctx = makeCtx({ settings: { optInMode: "double_opt_in" } });
    const create = planWebhook("customers/create", customerWith({ state: "not_subscribed", consent_updated_at: T0 }), ctx);
    const update = planWebhook("customers/update", customerWith({ state: "subscribed", consent_updated_at: T1 }), { ...ctx, prior: create.nextState });
    expect(statusOf(update)).toEqual({});
    expect(consentAfter(update)).toMatchObject({ contact: true, doiRequested: true });
  });

  it("a person already asked to confirm once is not asked again, even with no contact on record", () => {
    const memory: ConsentMemory = { state: "pending", at: T0, optInLevel: null, contact: false, doiRequested: true };
    const d = decideConsent({ state: "subscribed", optInLevel: "single_opt_in", consentUpdatedAt: T1 }, memory, DOI);
    expect(d.upsert).toBe(false);
    expect(d.requestsDoubleOptIn).toBe(false);
    expect(d.reason).toMatch(/double opt-in already requested/);
  });
});

describe("what a delivery records when no person is pushed", () => {
  it("an invalid address for a new customer: the state is named", () => {
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("invalid", T1, null), makeCtx());
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe('no person upsert: consent "invalid" is not synced');
  });

  it("a redacted customer: redaction is named", () => {
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("redacted", T1, null), makeCtx());
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("no person upsert: customer data redacted");
  });

  it("every decision, pushed or not, carries a reason", () => {
    const memories: Array<ConsentMemory | null> = [null];
    for (const state of SHOPIFY_CONSENT_STATES) {
      for (const doiRequested of [false, true]) {
        for (const contact of [false, true]) memories.push({ state, at: T1, optInLevel: null, contact, doiRequested });
      }
    }
    for (const state of [...SHOPIFY_CONSENT_STATES, null]) {
      for (const optInLevel of ["single_opt_in", "confirmed_opt_in"]) {
        for (const memory of memories) {
          for (const settings of [TRUST, DOI, { ...TRUST, syncNonSubscribers: true }]) {
            const d = decideConsent({ state, optInLevel, consentUpdatedAt: T2 }, memory, settings);
            expect(d.reason, `${state} after ${JSON.stringify(memory)}`).toMatch(/\w/);
          }
        }
      }
    }
  });
});

describe("the app's own unsubscribe coming back from Shopify (app/consent-return)", () => {
  /** What app/consent-return remembers after writing the service's unsubscribe to Shopify at `at` (to the second). */
  function returned(at: string): ConsentMemory {
    return { state: "unsubscribed", at, optInLevel: "single_opt_in", contact: true, doiRequested: false, returnedAt: at };
  }
  const unsubscribedAt = (at: string | null) => ({ state: "unsubscribed" as const, optInLevel: "single_opt_in", consentUpdatedAt: at });

  it("with the same consent time is its echo: nothing is sent to the service, what is remembered stays", () => {
    const prior = customerState(returned("2026-03-01T10:00:00Z"));
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", "2026-03-01T10:00:00Z"), makeCtx({ prior }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("the app's own consent write coming back from Shopify: already applied at the service");
    expect(plan.nextState).toEqual(prior);
  });

  it("is recognised to the second: Shopify's time with milliseconds or in another zone is the same second", () => {
    const memory = returned("2026-03-01T10:00:00Z");
    expect(isReturnedEcho(unsubscribedAt("2026-03-01T10:00:00.000Z"), memory)).toBe(true);
    expect(isReturnedEcho(unsubscribedAt("2026-03-01T10:00:00.999Z"), memory)).toBe(true);
    expect(isReturnedEcho(unsubscribedAt("2026-03-01T11:00:00+01:00"), memory)).toBe(true);
  });

  it("one second later or earlier is not the echo: the person unsubscribed in Shopify, and that unsubscribe is applied", () => {
    const memory = returned("2026-03-01T10:00:00Z");
    expect(isReturnedEcho(unsubscribedAt("2026-03-01T10:00:01Z"), memory)).toBe(false);
    expect(isReturnedEcho(unsubscribedAt("2026-03-01T09:59:59.999Z"), memory)).toBe(false);
    const prior = customerState(memory);
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", "2026-03-01T10:00:01Z"), makeCtx({ prior }));
    expect(ops(plan)).toEqual(["person.upsert"]);
  });

  it("a subscribe is never an echo, even at the returned consent time", () => {
    const memory = returned("2026-03-01T10:00:00Z");
    expect(isReturnedEcho({ state: "subscribed", optInLevel: "single_opt_in", consentUpdatedAt: "2026-03-01T10:00:00Z" }, memory)).toBe(false);
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", "2026-03-01T10:00:00Z"), makeCtx({ prior: customerState(memory) }));
    expect(plan.skipped ?? "").not.toContain("coming back from Shopify");
  });

  it("without a returned consent there is no echo: the same unsubscribe at the same time updates the profile", () => {
    const at = "2026-03-01T10:00:00Z";
    const { returnedAt: _, ...written } = returned(at);
    expect(isReturnedEcho(unsubscribedAt(at), written)).toBe(false);
    expect(isReturnedEcho(unsubscribedAt(at), null)).toBe(false);
    expect(isReturnedEcho(unsubscribedAt(at), undefined)).toBe(false);
    const plan = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", at), makeCtx({ prior: customerState(written) }));
    expect(ops(plan)).toEqual(["person.upsert"]);
    expect(statusOf(plan)).toEqual({ skipDoubleOptIn: true });
  });

  it("for another address than the one remembered is not the echo: the address change goes to the service", () => {
    const at = "2026-03-01T10:00:00Z";
    const body = consentUpdate("unsubscribed", at);
    body.email_address = "robert@biller.com";
    const plan = planWebhook("customers_email_marketing_consent/update", body, makeCtx({ prior: customerState(returned(at)) }));
    expect(plan.skipped ?? "").not.toContain("coming back from Shopify");
    expect(plan.calls.length).toBeGreaterThan(0);
    expect(JSON.stringify(plan.calls)).toContain("robert@biller.com");
  });

  it("an unsubscribe without a consent time is not an echo: a missing time is unknown, not 1970", () => {
    expect(isReturnedEcho(unsubscribedAt(null), returned("2026-03-01T10:00:00Z"))).toBe(false);
    expect(isReturnedEcho(unsubscribedAt(null), returned("1970-01-01T00:00:00Z"))).toBe(false);
  });

  it("is still recognised after Shopify's customers/update for the same change arrived first", () => {
    const at = "2026-03-01T10:00:00Z";
    const update = planWebhook("customers/update", customerWith({ state: "unsubscribed", consent_updated_at: at }), makeCtx({ prior: customerState(returned(at)) }));
    expect(consentAfter(update).returnedAt).toBe(at);
    const echo = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", at), makeCtx({ prior: update.nextState }));
    expect(echo.calls).toEqual([]);
  });
});

describe("a remembered consent time without a remembered state", () => {
  it("makes no consent stale: an unsubscribe older than that time is applied", () => {
    const memory: ConsentMemory = { state: null, at: T1, optInLevel: null, contact: true, doiRequested: false };
    const d = decideConsent({ state: "unsubscribed", optInLevel: null, consentUpdatedAt: T0 }, memory, TRUST);
    expect(d.action).toBe("UNSUBSCRIBE");
    expect(d.upsert).toEqual(UNSUBSCRIBED);
  });
});

describe("the consent remembered between deliveries", () => {
  it("survives storage: read back, an older subscribe after the unsubscribe is still ignored", () => {
    const unsubscribe = planWebhook("customers_email_marketing_consent/update", consentUpdate("unsubscribed", T1, null), makeCtx());
    const stored = objectSyncStateSchema.parse(JSON.parse(JSON.stringify(unsubscribe.nextState)));
    expect(stored).toEqual(unsubscribe.nextState);
    const late = planWebhook("customers_email_marketing_consent/update", consentUpdate("subscribed", T0), makeCtx({ prior: stored }));
    expect(statusOf(late)).toEqual({ skipDoubleOptIn: true });
    expect(emptyConsentMemory).toEqual({ state: null, at: null, optInLevel: null, contact: false, doiRequested: false });
  });
});

describe("the consent table in app/sync/README.md", () => {
  it("has a header naming each phase and one row per Shopify consent state and for no consent", () => {
    const lines = consentTableMarkdown().split("\n");
    expect(lines[0]).toBe("| incoming \\ phase | new | subscribed | unsubscribed | other |");
    expect(lines[1]).toBe("|---|---|---|---|---|");
    const rows = lines.slice(2).map((l) => l.split("|")[1].trim());
    expect(rows.sort()).toEqual(["invalid", "not_subscribed", "null", "pending", "redacted", "subscribed", "unsubscribed"]);
    const readme = readFileSync(path.resolve(import.meta.dirname, "../../app/sync/README.md"), "utf8");
    expect(readme).toContain(lines.join("\n"));
  });

  it("every action of the table is described in the README, with the status fields it sends", () => {
    const used = new Set(CONSENT_PHASES.flatMap((p: ConsentPhase) => Object.keys(CONSENT_TABLE).map((s) => CONSENT_TABLE[s as IncomingState][p])));
    expect([...used].sort()).toEqual(["NONE", "NON_SUBSCRIBER", "PROFILE", "RESUBSCRIBE", "SUBSCRIBE", "UNSUBSCRIBE"]);
    const readme = readFileSync(path.resolve(import.meta.dirname, "../../app/sync/README.md"), "utf8");
    const described = new Map(
      [...readme.matchAll(/^\| ([A-Z_]+) \| (.+) \|$/gm)].map((m) => [m[1], m[2]] as const),
    );
    expect([...described.keys()].sort()).toEqual([...used].sort());
    expect(described.get("SUBSCRIBE")).toContain('statusDetails: "confirmed"');
    expect(described.get("RESUBSCRIBE")).toContain("as SUBSCRIBE");
    expect(described.get("UNSUBSCRIBE")).toContain('statusDetails: "unsubscribed"');
    expect(described.get("NON_SUBSCRIBER")).toContain('statusDetails: "unconfirmed"');
    expect(described.get("PROFILE")).toContain("**no status**");
    expect(described.get("NONE")).toContain("No person upsert");
  });
});
