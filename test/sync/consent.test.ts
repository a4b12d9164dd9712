/**
 * The consent machine, arrow by arrow: every cell of CONSENT_TABLE in both opt-in modes, the
 * stale-data guard, double opt-in once, and the machine wired through customer webhooks.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  CONSENT_PHASES,
  CONSENT_TABLE,
  consentTableMarkdown,
  decideConsent,
  INCOMING_STATES,
  type ConsentMemory,
  type ConsentPhase,
  type IncomingState,
} from "../../app/sync/consent";
import { defaultSettings } from "../../app/sync/settings";
import { customerWith, eventOf, makeCtx, ops, run, runSequence, upsertOf } from "./fixtures";

const DOI = { optInMode: "double_opt_in" as const, syncNonSubscribers: false };
const TRUST = { optInMode: "trust_shopify" as const, syncNonSubscribers: false };
const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-02-01T00:00:00.000Z";

/** A memory in the given phase (contact pushed, last state as named). */
function memoryFor(phase: ConsentPhase, over: Partial<ConsentMemory> = {}): ConsentMemory | null {
  if (phase === "new") return null;
  const state = phase === "other" ? "not_subscribed" : phase;
  return { state, at: T0, optInLevel: "single_opt_in", contact: true, doiRequested: phase === "subscribed", ...over };
}

function input(state: IncomingState, at: string | null = T1) {
  return { state: state === "null" ? null : state, optInLevel: "single_opt_in", consentUpdatedAt: at };
}

const CONFIRMED = { skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" };
const UNSUBSCRIBED = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unsubscribed" };
const UNCONFIRMED = { skipDoubleOptIn: true, status: "inactive", statusDetails: "unconfirmed" };
const PROFILE = { skipDoubleOptIn: true };
/** §3.2: only a created person gets the confirmation email, so an existing contact is deleted and created anew (no status fields). */
const RECREATE = {};

/** Expected upsert per arrow: [double_opt_in, trust_shopify]; false = no person upsert. */
const EXPECTED: Record<IncomingState, Record<ConsentPhase, [object | false, object | false]>> = {
  subscribed: {
    new: [{}, CONFIRMED],
    subscribed: [PROFILE, PROFILE],
    unsubscribed: [RECREATE, CONFIRMED],
    other: [RECREATE, CONFIRMED],
  },
  unsubscribed: {
    new: [UNSUBSCRIBED, UNSUBSCRIBED],
    subscribed: [UNSUBSCRIBED, UNSUBSCRIBED],
    unsubscribed: [PROFILE, PROFILE],
    other: [UNSUBSCRIBED, UNSUBSCRIBED],
  },
  not_subscribed: { new: [false, false], subscribed: [PROFILE, PROFILE], unsubscribed: [PROFILE, PROFILE], other: [PROFILE, PROFILE] },
  pending: { new: [false, false], subscribed: [PROFILE, PROFILE], unsubscribed: [PROFILE, PROFILE], other: [PROFILE, PROFILE] },
  invalid: { new: [false, false], subscribed: [PROFILE, PROFILE], unsubscribed: [PROFILE, PROFILE], other: [PROFILE, PROFILE] },
  redacted: { new: [false, false], subscribed: [false, false], unsubscribed: [false, false], other: [false, false] },
  null: { new: [false, false], subscribed: [PROFILE, PROFILE], unsubscribed: [PROFILE, PROFILE], other: [PROFILE, PROFILE] },
};

describe("consent table, arrow by arrow", () => {
  for (const incoming of INCOMING_STATES) {
    for (const phase of CONSENT_PHASES) {
      it(`${incoming} / ${phase} (${CONSENT_TABLE[incoming][phase]})`, () => {
        const [doi, trust] = EXPECTED[incoming][phase];
        const d1 = decideConsent(input(incoming), memoryFor(phase), DOI);
        expect(d1.arrow).toBe(`${incoming}/${phase}`);
        expect(d1.upsert).toEqual(doi);
        expect(d1.requestsDoubleOptIn).toBe(doi !== false && Object.keys(doi).length === 0);
        // An existing contact asked to confirm is deleted and created again.
        expect(d1.recreate).toBe(d1.requestsDoubleOptIn && phase !== "new");
        const d2 = decideConsent(input(incoming), memoryFor(phase), TRUST);
        expect(d2.upsert).toEqual(trust);
        expect(d2.requestsDoubleOptIn).toBe(false);
        // The service never gets `blocked`, and active ⇔ confirmed.
        for (const d of [d1, d2]) {
          if (d.upsert === false) continue;
          expect(d.upsert.statusDetails).not.toBe("blocked");
          if (d.upsert.status) expect(d.upsert.status === "active").toBe(d.upsert.statusDetails === "confirmed");
        }
      });
    }
  }

  it("not_subscribed / new with syncNonSubscribers: unconfirmed, inactive, no confirmation email", () => {
    const d = decideConsent(input("not_subscribed"), null, { ...DOI, syncNonSubscribers: true });
    expect(d.upsert).toEqual(UNCONFIRMED);
    expect(d.requestsDoubleOptIn).toBe(false);
    expect(d.next.contact).toBe(true);
  });

  it("null / new with syncNonSubscribers: unconfirmed too; memory keeps state null", () => {
    const d = decideConsent(input("null"), null, { ...TRUST, syncNonSubscribers: true });
    expect(d.upsert).toEqual(UNCONFIRMED);
    expect(d.next.state).toBeNull();
  });

  it("not_subscribed never downgrades an existing subscribed contact (left as is)", () => {
    const d = decideConsent(input("not_subscribed"), memoryFor("subscribed"), { ...DOI, syncNonSubscribers: true });
    expect(d.upsert).toEqual(PROFILE);
  });

  it("invalid / new stays out even with syncNonSubscribers", () => {
    expect(decideConsent(input("invalid"), null, { ...DOI, syncNonSubscribers: true }).upsert).toBe(false);
  });

  it("markdown table in README is the exported table", () => {
    const readme = readFileSync(path.resolve(import.meta.dirname, "../../app/sync/README.md"), "utf8");
    expect(readme).toContain(consentTableMarkdown());
  });
});

describe("double opt-in is requested once", () => {
  it("first subscribe requests it; a repeat subscribed update does not", () => {
    const first = decideConsent(input("subscribed", T0), null, DOI);
    expect(first.requestsDoubleOptIn).toBe(true);
    expect(first.next).toMatchObject({ state: "subscribed", at: T0, contact: true, doiRequested: true });
    const again = decideConsent(input("subscribed", T1), first.next, DOI);
    expect(again.requestsDoubleOptIn).toBe(false);
    expect(again.upsert).toEqual(PROFILE);
  });

  it("subscribed → pending → subscribed does not ask again", () => {
    const a = decideConsent(input("subscribed", T0), null, DOI);
    const b = decideConsent(input("pending", T1), a.next, DOI);
    const c = decideConsent(input("subscribed", "2026-03-01T00:00:00.000Z"), b.next, DOI);
    expect(c.arrow).toBe("subscribed/other");
    expect(c.requestsDoubleOptIn).toBe(false);
    expect(c.upsert).toEqual(PROFILE);
  });

  it("a genuine re-subscribe after an unsubscribe (newer time) re-creates the contact, so a confirmation email goes out", () => {
    const a = decideConsent(input("subscribed", T0), null, DOI);
    const b = decideConsent(input("unsubscribed", T1), a.next, DOI);
    const c = decideConsent(input("subscribed", "2026-03-01T00:00:00.000Z"), b.next, DOI);
    expect(c.action).toBe("RESUBSCRIBE");
    expect(c.upsert).toEqual(RECREATE);
    expect(c.recreate).toBe(true);
    expect(c.requestsDoubleOptIn).toBe(true);
  });

  it("Shopify's confirmed_opt_in needs no second confirmation, for a new contact too", () => {
    const d = decideConsent({ ...input("subscribed"), optInLevel: "confirmed_opt_in" }, null, DOI);
    expect(d.upsert).toEqual(CONFIRMED);
    expect(d.requestsDoubleOptIn).toBe(false);
  });

  it("a re-subscribe Shopify confirmed (confirmed_opt_in) is confirmed, even after a first request", () => {
    const a = decideConsent(input("subscribed", T0), null, DOI);
    const b = decideConsent(input("pending", T1), a.next, DOI);
    const c = decideConsent({ ...input("subscribed", "2026-03-01T00:00:00.000Z"), optInLevel: "confirmed_opt_in" }, b.next, DOI);
    expect(c.upsert).toEqual(CONFIRMED);
    expect(c.requestsDoubleOptIn).toBe(false);
  });
});

describe("stale consent never re-subscribes", () => {
  const unsubscribedAtT1: ConsentMemory = { state: "unsubscribed", at: T1, optInLevel: null, contact: true, doiRequested: true };

  it("subscribed older than the unsubscribe → ignored", () => {
    const d = decideConsent(input("subscribed", T0), unsubscribedAtT1, TRUST);
    expect(d.arrow).toBe("stale/unsubscribed");
    expect(d.upsert).toEqual(PROFILE);
    expect(d.next).toEqual(unsubscribedAtT1);
  });

  it("subscribed at the same time as the unsubscribe → ignored", () => {
    expect(decideConsent(input("subscribed", T1), unsubscribedAtT1, TRUST).arrow).toBe("stale/unsubscribed");
  });

  it("subscribed without a consent time after an unsubscribe → ignored", () => {
    expect(decideConsent(input("subscribed", null), unsubscribedAtT1, TRUST).arrow).toBe("stale/unsubscribed");
  });

  it("subscribed strictly newer → applied", () => {
    const d = decideConsent(input("subscribed", "2026-03-01T00:00:00.000Z"), unsubscribedAtT1, TRUST);
    expect(d.upsert).toEqual(CONFIRMED);
    expect(d.next.state).toBe("subscribed");
  });

  it("an unsubscribe at the same time as a subscribe wins (privacy wins a tie); strictly older loses", () => {
    const subscribedAtT1: ConsentMemory = { state: "subscribed", at: T1, optInLevel: null, contact: true, doiRequested: false };
    expect(decideConsent(input("unsubscribed", T1), subscribedAtT1, TRUST).upsert).toEqual(UNSUBSCRIBED);
    expect(decideConsent(input("unsubscribed", T0), subscribedAtT1, TRUST).arrow).toBe("stale/subscribed");
  });
});

describe("consent through the webhooks", () => {
  const ctxDoi = makeCtx({ settings: { optInMode: "double_opt_in" } });
  const ctxTrust = makeCtx({ settings: { optInMode: "trust_shopify" } });

  it("customers/create subscribed (trust_shopify): person upsert confirmed, then the customer event", () => {
    const plan = run("customers/create", customerWith({ state: "subscribed", consent_updated_at: T0 }), ctxTrust);
    expect(ops(plan)).toEqual(["person.upsert", "customer/created"]);
    expect(upsertOf(plan)).toEqual({
      email: "bob@biller.com",
      source: "shopify",
      customFields: { firstName: "Bob", lastName: "Biller", referenceId: "706405506930370084" },
      skipDoubleOptIn: true,
      status: "active",
      statusDetails: "confirmed",
    });
    expect(eventOf(plan, "customer", "created").is_contact).toBe(false);
  });

  it("customers/create subscribed (double_opt_in): no skip/status; later updates never re-trigger", () => {
    const [create, update, consent] = runSequence(
      [
        { topic: "customers/create", body: customerWith({ state: "subscribed", consent_updated_at: T0 }) },
        { topic: "customers/update", body: customerWith({ state: "subscribed", consent_updated_at: T0 }, { first_name: "Robert" }) },
        {
          topic: "customers_email_marketing_consent/update",
          body: { customer_id: "706405506930370084", email_address: "bob@biller.com", email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: T0 } },
        },
      ],
      ctxDoi,
    );
    const first = upsertOf(create);
    expect(first.skipDoubleOptIn).toBeUndefined();
    expect(first.status).toBeUndefined();
    expect(first.statusDetails).toBeUndefined();
    expect(upsertOf(update)).toMatchObject({ skipDoubleOptIn: true, customFields: { firstName: "Robert" } });
    expect(upsertOf(update).status).toBeUndefined();
    expect(upsertOf(consent)).toEqual({ email: "bob@biller.com", source: "shopify", customFields: { referenceId: "706405506930370084" }, skipDoubleOptIn: true });
  });

  it("consent topic unsubscribed → inactive/unsubscribed with skipDoubleOptIn", () => {
    const plan = run("customers_email_marketing_consent/update", {
      customer_id: 5,
      email_address: "Ann@Example.com ",
      email_marketing_consent: { state: "unsubscribed", opt_in_level: null, consent_updated_at: "2026-01-02T03:04:05-05:00" },
    });
    expect(plan.objectKey).toBe("customer:5");
    expect(upsertOf(plan)).toEqual({ email: "ann@example.com", source: "shopify", customFields: { referenceId: "5" }, ...UNSUBSCRIBED });
    expect(plan.nextState).toMatchObject({ consent: { state: "unsubscribed", at: "2026-01-02T08:04:05.000Z", contact: true } });
  });

  it("a late, older 'subscribed' customers/update after an unsubscribe does not re-subscribe", () => {
    const [, late] = runSequence(
      [
        { topic: "customers/create", body: customerWith({ state: "unsubscribed", consent_updated_at: T1 }) },
        { topic: "customers/update", body: customerWith({ state: "subscribed", consent_updated_at: T0 }) },
      ],
      ctxTrust,
    );
    expect(upsertOf(late).status).toBeUndefined();
    expect(late.nextState).toMatchObject({ consent: { state: "unsubscribed", at: T1 } });
  });

  it("not_subscribed customer: no upsert by default; unconfirmed contact with syncNonSubscribers", () => {
    const body = customerWith({ state: "not_subscribed" });
    expect(ops(run("customers/create", body))).toEqual(["customer/created"]);
    const synced = run("customers/create", body, makeCtx({ settings: { syncNonSubscribers: true } }));
    expect(upsertOf(synced)).toMatchObject(UNCONFIRMED);
  });

  it("redacted consent: nothing at all is pushed", () => {
    const plan = run("customers/update", customerWith({ state: "redacted" }), ctxTrust);
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toMatch(/redacted/);
  });

  it("unknown Shopify state reads as 'no information' (profile only, never a status)", () => {
    const prior = run("customers/create", customerWith({ state: "subscribed", consent_updated_at: T0 }), ctxTrust).nextState;
    const plan = run("customers/update", customerWith({ state: "SOMETHING_NEW" }), { ...ctxTrust, prior });
    expect(upsertOf(plan)).toEqual(expect.objectContaining(PROFILE));
    expect(upsertOf(plan).status).toBeUndefined();
  });

  it("default settings keep Shopify's recorded consent and push no non-subscriber", () => {
    expect(defaultSettings.optInMode).toBe("trust_shopify");
    expect(defaultSettings.syncNonSubscribers).toBe(false);
  });
});
