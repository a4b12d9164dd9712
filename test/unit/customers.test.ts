import { describe, expect, it } from "vitest";
import type { CustomerSyncState } from "~/sync/plan-contract";
import { customerWith, eventOf, fixture, makeCtx, NOW, ops, run, upsertOf, type Json } from "../sync/fixtures";

// Shopify's sample customer (test/fixtures/shopify-webhooks/customers.update.json: Bob Biller,
// bob@biller.com, gid://shopify/Customer/706405506930370084) and what the marketing service receives for it
// (docs/customers-and-consent.md).
const ID = "706405506930370084";
const contact = (over: Partial<CustomerSyncState> = {}): CustomerSyncState => ({
  kind: "customer",
  email: "bob@biller.com",
  tags: ["vip"],
  consent: { state: "subscribed", at: "2026-01-01T00:00:00.000Z", optInLevel: "single_opt_in", contact: true, doiRequested: false },
  deleted: false,
  ...over,
});
const noContact = (over: Partial<CustomerSyncState> = {}): CustomerSyncState =>
  contact({ consent: { state: null, at: null, optInLevel: null, contact: false, doiRequested: false }, ...over });

const VIP = { "3": "shopify-segment:VIP" };
const member = (over: Record<string, Json> = {}) => ({ ...fixture("customer.joined_segment"), ...over });

describe("a deleted customer", () => {
  const deleted = contact({ deleted: true, consent: { ...contact().consent, contact: false } });
  const deliveries: Array<[string, Json, string]> = [
    ["customers/update", fixture("customers/update"), "customer was deleted"],
    ["customers/create", fixture("customers/create"), "customer was deleted"],
    ["customers/delete", fixture("customers/delete"), "already deleted"],
    ["customers/enable", fixture("customers/enable"), "customer was deleted"],
    ["customers/disable", fixture("customers/enable"), "customer was deleted"],
    ["customers_email_marketing_consent/update", fixture("customers_email_marketing_consent/update"), "customer was deleted"],
    ["customer.tags_added", fixture("customer.tags_added"), "customer was deleted"],
    ["customer.left_segment", member(), "customer was deleted"],
    ["customers/purchasing_summary", fixture("customers/purchasing_summary"), "customer was deleted"],
  ];
  it.each(deliveries)("gets nothing from %s, and the merchant is told why", (topic, body, why) => {
    const plan = run(topic, body, makeCtx({ prior: deleted, segmentTags: VIP }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe(why);
    expect(plan.nextState).toEqual(deleted);
  });

  it("is remembered as having no contact, whatever it had", () => {
    const plan = run("customers/delete", fixture("customers/delete"), makeCtx({ prior: contact() }));
    expect(ops(plan)).toEqual(["customer/deleted"]);
    expect(plan.nextState).toEqual(contact({ deleted: true, consent: { ...contact().consent, contact: false } }));
  });

  it("without a known email cannot have its contact deleted: customer/deleted is recorded instead, with the reason", () => {
    const plan = run("customers/delete", fixture("customers/delete"), makeCtx({ settings: { deleteContactOnCustomerDelete: true } }));
    expect(ops(plan)).toEqual(["customer/deleted"]);
    expect(eventOf(plan, "customer", "deleted")).toMatchObject({ referenceId: ID, is_contact: false });
    expect(plan.skipped).toBe("no known email to delete the contact by; recorded customer/deleted instead");
    const kept = run("customers/delete", fixture("customers/delete"));
    expect(kept).not.toHaveProperty("skipped");
  });
});

describe("a customer's name", () => {
  it("leaves blank parts out of the customer event's name and the account's display name", () => {
    const blanks = { first_name: "  ", last_name: "Biller" };
    expect(eventOf(run("customers/update", { ...fixture("customers/update"), ...blanks }), "customer", "updated").name).toBe("Biller");
    expect(eventOf(run("customers/update", { ...fixture("customers/update"), first_name: null }), "customer", "updated").name).toBe("Biller");
    expect(eventOf(run("customers/enable", { ...fixture("customers/enable"), ...blanks }), "user", "created").display_name).toBe("Biller");
    expect(eventOf(run("customers/disable", { ...fixture("customers/enable"), last_name: null }), "user", "updated").display_name).toBe("Bob");
  });

  it("is both parts when both are there", () => {
    expect(eventOf(run("customers/update", fixture("customers/update")), "customer", "updated").name).toBe("Bob Biller");
    expect(eventOf(run("customers/enable", fixture("customers/enable")), "user", "created").display_name).toBe("Bob Biller");
  });
});

describe("a customer without an email", () => {
  it("has its account event named by the customer id", () => {
    const plan = run("customers/enable", { ...fixture("customers/enable"), email: null });
    expect(eventOf(plan, "user", "created")).toMatchObject({ referenceId: ID });
    expect(plan.nextState).toMatchObject({ email: null, account: "enabled" });
  });

  it("has its consent left for when an email exists, its tags remembered", () => {
    const plan = run("customers/update", customerWith({ state: "subscribed" }, { email: null, tags: "vip, eu" }));
    expect(ops(plan)).toEqual(["customer/updated"]);
    expect(plan.skipped).toBe("no person upsert: no usable email");
    // The name is remembered too, for the upsert that creates the contact once an email exists.
    expect(plan.nextState).toEqual({ ...noContact({ email: null, tags: ["vip", "eu"] }), profile: { firstName: "Bob", lastName: "Biller" } });
    const consent = run("customers_email_marketing_consent/update", { ...fixture("customers_email_marketing_consent/update"), email_address: null });
    expect(consent.calls).toEqual([]);
    expect(consent.skipped).toBe("no person upsert: non-subscribers are not pushed as contacts");
  });
});

describe("a contact created by a topic without names", () => {
  it("carries the name and phone an earlier customer topic gave; an existing contact gets only what a topic says", () => {
    const created = run("customers/create", customerWith({ state: "not_subscribed" }, { phone: "+15550142" }));
    expect(created.skipped).toMatch(/non-subscribers/);
    const subscribed = { ...fixture("customers_email_marketing_consent/update"), email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-04-02T10:00:00Z" } };
    const consent = run("customers_email_marketing_consent/update", subscribed, makeCtx({ prior: created.nextState }));
    expect(upsertOf(consent).customFields).toEqual({ firstName: "Bob", lastName: "Biller", phoneNumber: "+15550142", referenceId: "706405506930370000" });
    const tags = run("customer.tags_added", { ...fixture("customer.tags_added"), customerId: "706405506930370000" }, makeCtx({ prior: consent.nextState }));
    expect(upsertOf(tags).customFields).toEqual({ referenceId: "706405506930370000" });
    // A blank name in a later payload is unknown: nothing is blanked out, the name is kept.
    const blank = run("customers/update", customerWith({ state: "subscribed" }, { first_name: "", last_name: null, updated_at: "2026-04-03T10:00:00Z" }), makeCtx({ prior: tags.nextState }));
    expect(upsertOf(blank).customFields).not.toHaveProperty("firstName");
    expect(blank.nextState).toMatchObject({ profile: { firstName: "Bob", lastName: "Biller", phone: "+15550142" } });
  });
});

describe("a customer update", () => {
  it("that creates the contact carries no skipped note", () => {
    const plan = run("customers/update", customerWith({ state: "subscribed" }));
    expect(ops(plan)).toEqual(["person.upsert", "customer/updated"]);
    expect(plan).not.toHaveProperty("skipped");
  });

  it("of a non-subscriber never pushed is remembered under the newest address", () => {
    const plan = run("customers/update", customerWith({ state: "not_subscribed" }, { email: "new@example.com" }), makeCtx({ prior: noContact() }));
    expect(ops(plan)).toEqual(["customer/updated"]);
    expect(plan.nextState).toMatchObject({ email: "new@example.com" });
  });

  it("with Shopify's confirmed double opt-in subscribes the contact as confirmed, without a second confirmation email", () => {
    const ctx = makeCtx({ settings: { optInMode: "double_opt_in" } });
    const confirmed = upsertOf(run("customers/update", customerWith({ state: "subscribed", opt_in_level: "confirmed_opt_in" }), ctx));
    expect(confirmed).toMatchObject({ email: "bob@biller.com", skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" });
    const single = upsertOf(run("customers/update", customerWith({ state: "subscribed", opt_in_level: "single_opt_in" }), ctx));
    expect(single).not.toHaveProperty("skipDoubleOptIn");
  });

  it("re-subscribing under a new address deletes the contact under the address the service knows", () => {
    const ctx = makeCtx({
      settings: { optInMode: "double_opt_in" },
      prior: contact({ consent: { ...contact().consent, state: "unsubscribed" } }),
    });
    const plan = run("customers/update", customerWith({ state: "subscribed", consent_updated_at: "2026-02-01T00:00:00Z" }, { email: "new@example.com" }), ctx);
    expect(plan.calls[0]).toEqual({ op: "person.delete", idOrEmail: "bob@biller.com" });
    expect(upsertOf(plan)).toMatchObject({ email: "new@example.com" });
  });

  it("of a redacted customer pushes nothing and keeps what was known, with the redaction", () => {
    const prior = contact();
    const plan = run("customers/update", customerWith({ state: "redacted" }), makeCtx({ prior }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("customer data redacted: nothing is pushed");
    expect(plan.nextState).toEqual({ ...prior, consent: { ...prior.consent, state: "redacted", at: null } });
    const fresh = run("customers/update", customerWith({ state: "redacted" }));
    expect(fresh.nextState).toMatchObject({ kind: "customer", email: null, tags: [], deleted: false, consent: { state: "redacted", contact: false } });
  });
});

describe("customer.tags_added with no tags", () => {
  it("updates the contact without a tags field", () => {
    const plan = run("customer.tags_added", { ...fixture("customer.tags_added"), tags: [] }, makeCtx({ prior: contact() }));
    expect(ops(plan)).toEqual(["person.upsert"]);
    expect(upsertOf(plan)).not.toHaveProperty("tags");
  });
});

describe("segment membership (mirrored segment 3 as shopify-segment:VIP)", () => {
  const ctx = (prior: CustomerSyncState | null) => makeCtx({ prior, segmentTags: VIP });
  const leftAt = "2026-04-30T00:00:00.000Z";
  const afterLeave = (over: Partial<CustomerSyncState> = {}) => contact({ segmentsLeftAt: { "shopify-segment:VIP": leftAt }, ...over });

  it("of a segment the shop does not mirror is ignored under the segment's own key, with the reason", () => {
    const plan = run("customer.joined_segment", member({ segment_id: "gid://shopify/Segment/4" }), ctx(contact()));
    expect(plan).toMatchObject({ objectKey: "segment:4", calls: [], nextState: null, skipped: "segment 4 is not mirrored as a tag (not picked in Settings)" });
  });

  it("of a customer with no contact yet remembers the tag for the contact's creation, and says so", () => {
    const plan = run("customer.joined_segment", member(), ctx(null));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("no person upsert: non-subscribers are not pushed as contacts (segment tag remembered for when the contact is created)");
    expect(plan.nextState).toMatchObject({ segmentTags: ["shopify-segment:VIP"] });
  });

  it("of a contact tags it and remembers the segment", () => {
    const plan = run("customer.joined_segment", member(), ctx(contact()));
    expect(upsertOf(plan).tags).toEqual({ "shopify-segment:VIP": true });
    expect(plan.nextState).toEqual(contact({ segmentTags: ["shopify-segment:VIP"] }));
  });

  it("a live join after a leave puts the tag back and forgets the leave", () => {
    const plan = run("customer.joined_segment", member(), ctx(afterLeave()));
    expect(upsertOf(plan).tags).toEqual({ "shopify-segment:VIP": true });
    expect((plan.nextState as CustomerSyncState).segmentsLeftAt).toBeUndefined();
    const other = { "shopify-segment:EU": leftAt };
    const withOther = run("customer.joined_segment", member(), ctx(afterLeave({ segmentsLeftAt: { ...other, "shopify-segment:VIP": leftAt } })));
    expect((withOther.nextState as CustomerSyncState).segmentsLeftAt).toEqual(other);
  });

  it("an imported join picked at the very moment of the leave, or before, does not put the tag back", () => {
    for (const picked_at of [leftAt, "2026-04-30T01:00:00+02:00"]) {
      const plan = run("customer.joined_segment", member({ picked_at }), ctx(afterLeave()));
      expect(plan.calls).toEqual([]);
      expect(plan.skipped).toBe("customer left the segment after it was picked");
      expect(plan.nextState).toEqual(afterLeave());
    }
  });

  it("an imported join picked after the leave puts the tag back and keeps the leave's time", () => {
    const plan = run("customer.joined_segment", member({ picked_at: "2026-04-30T00:00:01Z" }), ctx(afterLeave()));
    expect(upsertOf(plan).tags).toEqual({ "shopify-segment:VIP": true });
    expect((plan.nextState as CustomerSyncState).segmentsLeftAt).toEqual({ "shopify-segment:VIP": leftAt });
  });

  it("a leave is always applied, after an earlier leave too, and remembers when", () => {
    for (const body of [member(), member({ picked_at: "2026-04-01T00:00:00Z" })]) {
      const plan = run("customer.left_segment", body, ctx(afterLeave({ segmentTags: ["shopify-segment:VIP"] })));
      expect(upsertOf(plan).tags).toEqual({ "shopify-segment:VIP": false });
      expect(plan.nextState).toMatchObject({ segmentTags: [], segmentsLeftAt: { "shopify-segment:VIP": NOW.toISOString() } });
    }
  });
});

describe("customers/purchasing_summary", () => {
  it("without amounts sends the order count alone", () => {
    const plan = run("customers/purchasing_summary", { ...fixture("customers/purchasing_summary"), amountSpent: null });
    const body = eventOf(plan, "customer", "updated");
    expect(body).toMatchObject({ referenceId: "1", purchase_count: 1, is_contact: false });
    expect(body).not.toHaveProperty("currency");
    expect(body).not.toHaveProperty("purchase_value");
  });
});

describe("customers/merge", () => {
  const completed = { ...fixture("customers/merge"), status: "completed", errors: [] };
  const kept = (email: string | null) => ({ "customer:1": noContact({ email }) });
  const merged = (ghost: CustomerSyncState) => ({ ...ghost, deleted: true, consent: { ...ghost.consent, contact: false } });

  it("deletes the merged customer's contact when the kept customer has another address", () => {
    const plan = run("customers/merge", completed, makeCtx({ prior: contact(), related: kept("kept@example.com") }));
    expect(plan.calls).toEqual([{ op: "person.delete", idOrEmail: "bob@biller.com" }]);
    expect(plan.relatedKeys).toEqual(["customer:1"]);
    expect(plan.objectKey).toBe("customer:2");
    expect(plan.nextState).toEqual(merged(contact()));
  });

  it("of unknown status changes nothing, and says so", () => {
    const plan = run("customers/merge", { ...completed, status: null }, makeCtx({ prior: contact() }));
    expect(plan).toMatchObject({ calls: [], nextState: contact(), skipped: "merge of unknown status: nothing changed" });
    expect(run("customers/merge", fixture("customers/merge")).skipped).toBe("merge failed: nothing changed");
  });

  it("of a customer never seen records it deleted, without a call", () => {
    const plan = run("customers/merge", completed);
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("the merged customer had no contact in the service");
    expect(plan.nextState).toEqual({ kind: "customer", email: null, tags: [], consent: noContact().consent, deleted: true });
  });

  it("keeps the contact, with the reason, when deleting it would be wrong", () => {
    const cases: Array<[CustomerSyncState, Record<string, CustomerSyncState> | undefined, string]> = [
      [noContact(), kept("kept@example.com"), "the merged customer had no contact in the service"],
      [contact({ email: null }), kept("kept@example.com"), "the merged customer had no contact in the service"],
      [contact({ consent: { ...contact().consent, state: "unsubscribed" } }), kept("kept@example.com"), "the merged customer's contact is unsubscribed: kept as an opt-out record"],
      [contact(), undefined, "the kept customer is not known yet: the merged customer's contact is left as it is"],
      [contact(), kept(null), "the kept customer is not known yet: the merged customer's contact is left as it is"],
      [contact(), kept("bob@biller.com"), "the kept customer has the same address: one contact"],
    ];
    for (const [ghost, related, why] of cases) {
      const plan = run("customers/merge", completed, makeCtx({ prior: ghost, related }));
      expect(plan.calls).toEqual([]);
      expect(plan.skipped).toBe(why);
      expect(plan.nextState).toEqual(merged(ghost));
    }
  });

  it("of a customer already deleted changes nothing", () => {
    const gone = merged(contact());
    const plan = run("customers/merge", completed, makeCtx({ prior: gone, related: kept("kept@example.com") }));
    expect(plan).toMatchObject({ calls: [], nextState: gone, skipped: "the merged customer was already deleted" });
  });
});

describe("the customer's purchase count on its customer event", () => {
  it("is Shopify's orders_count when it is a whole number, and left out when it is missing", () => {
    const counted = run("customers/update", customerWith(null, { orders_count: 3 }));
    expect(eventOf(counted, "customer", "updated").purchase_count).toBe(3);
    const none = run("customers/update", customerWith(null, { orders_count: 0 }));
    expect(eventOf(none, "customer", "updated").purchase_count).toBe(0);
    const unknown = run("customers/update", customerWith(null, { orders_count: null }));
    expect(eventOf(unknown, "customer", "updated")).not.toHaveProperty("purchase_count");
  });

  it("is left out when orders_count is not a whole number", () => {
    const plan = run("customers/update", customerWith(null, { orders_count: 2.5 }));
    expect(eventOf(plan, "customer", "updated")).not.toHaveProperty("purchase_count");
  });
});

describe("the name remembered from a customer's account webhook", () => {
  it("customers/enable keeps the first and last name and phone for the rows that name the person later", () => {
    const plan = run("customers/enable", customerWith(null, { first_name: "Ada", last_name: "Lovelace", phone: "+15555550123" }));
    const state = plan.nextState as CustomerSyncState;
    expect(state.profile).toEqual({ firstName: "Ada", lastName: "Lovelace", phone: "+15555550123" });
  });

  it("keeps what was remembered when the webhook names nobody, and remembers no profile when nothing is known", () => {
    const prior: CustomerSyncState = {
      kind: "customer", email: "bob@biller.com", tags: [], deleted: false,
      consent: { state: null, at: null, optInLevel: null, contact: false, doiRequested: false },
      profile: { firstName: "Ada" },
    };
    const named = run("customers/disable", customerWith(null, { first_name: null, last_name: null, phone: null }), makeCtx({ prior }));
    expect((named.nextState as CustomerSyncState).profile).toEqual({ firstName: "Ada" });
    const nobody = run("customers/disable", customerWith(null, { first_name: null, last_name: null, phone: null }));
    expect(nobody.nextState).not.toHaveProperty("profile");
  });
});
