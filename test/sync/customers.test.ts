import { describe, expect, it } from "vitest";
import { customerWith, eventOf, fixture, makeCtx, ops, run, runSequence, upsertOf } from "./fixtures";

const trust = makeCtx({ settings: { optInMode: "trust_shopify" } });
const subscribed = { state: "subscribed", consent_updated_at: "2026-01-01T00:00:00Z" };

describe("customers → person upsert", () => {
  it("tags are a diff against what was last synced: added true, removed false", () => {
    const [first, second] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip, newsletter" }) },
        { topic: "customers/update", body: customerWith(subscribed, { tags: "vip,  wholesale" }) },
      ],
      trust,
    );
    expect(upsertOf(first).tags).toEqual({ vip: true, newsletter: true });
    expect(upsertOf(second).tags).toEqual({ wholesale: true, newsletter: false });
    expect(second.nextState).toMatchObject({ tags: ["vip", "wholesale"] });
  });

  it("unchanged tags send no tags key", () => {
    const [, second] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip" }) },
        { topic: "customers/update", body: customerWith(subscribed, { tags: "vip" }) },
      ],
      trust,
    );
    expect(upsertOf(second)).not.toHaveProperty("tags");
  });

  it("email change: identified by the OLD email with emailChange; the event uses the new one", () => {
    const [, changed, after] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed) },
        { topic: "customers/update", body: customerWith(subscribed, { email: "robert@biller.com" }) },
        { topic: "customers/update", body: customerWith(subscribed, { email: "robert@biller.com", first_name: "Rob" }) },
      ],
      trust,
    );
    expect(upsertOf(changed)).toMatchObject({ email: "bob@biller.com", emailChange: "robert@biller.com" });
    expect(eventOf(changed, "customer", "updated").email).toBe("robert@biller.com");
    expect(upsertOf(after).email).toBe("robert@biller.com");
    expect(upsertOf(after)).not.toHaveProperty("emailChange");
  });

  it("phone and names go to custom fields; referenceId is the exact customer id string", () => {
    const plan = run("customers/create", customerWith(subscribed, { phone: "+16135550135" }), trust);
    expect(upsertOf(plan).customFields).toEqual({
      firstName: "Bob",
      lastName: "Biller",
      phoneNumber: "+16135550135",
      referenceId: "706405506930370084",
    });
  });

  it("customer without email: no upsert, event by referenceId", () => {
    const plan = run("customers/create", customerWith(subscribed, { email: null }), trust);
    expect(ops(plan)).toEqual(["customer/created"]);
    expect(eventOf(plan, "customer", "created")).toMatchObject({ referenceId: "706405506930370084" });
    expect(plan.skipped).toMatch(/no usable email/);
    // Consent is not recorded as applied, so it applies once an email appears.
    const later = run("customers/update", customerWith(subscribed), { ...trust, prior: plan.nextState });
    expect(upsertOf(later)).toMatchObject({ status: "active", statusDetails: "confirmed" });
  });

  it("customerEventsCreateContacts sets is_contact on customer and user events", () => {
    const ctx = makeCtx({ settings: { customerEventsCreateContacts: true } });
    expect(eventOf(run("customers/create", fixture("customers/create"), ctx), "customer", "created").is_contact).toBe(true);
    expect(eventOf(run("customers/enable", fixture("customers/enable"), ctx), "user", "created").is_contact).toBe(true);
    expect(eventOf(run("customers/disable", fixture("customers/disable"), ctx), "user", "updated").is_contact).toBe(false);
  });

  it("customers/update identical to the last one sends only the (profile) upsert", () => {
    const [, again] = runSequence(
      [
        { topic: "customers/update", body: customerWith(subscribed) },
        { topic: "customers/update", body: customerWith(subscribed) },
      ],
      trust,
    );
    expect(ops(again)).toEqual(["person.upsert"]);
  });
});

describe("customers/delete", () => {
  const created = () => run("customers/create", customerWith(subscribed), trust).nextState;

  it("default: customer/deleted event by the last known email, no contact created", () => {
    const plan = run("customers/delete", fixture("customers/delete"), { ...trust, prior: created() });
    expect(ops(plan)).toEqual(["customer/deleted"]);
    expect(eventOf(plan, "customer", "deleted")).toEqual({
      email: "bob@biller.com",
      source: "shopify",
      id: "706405506930370084",
      is_contact: false,
      customer_email: "bob@biller.com",
      modified_at: "2026-05-01T12:00:00.000Z",
    });
  });

  it("deleteContactOnCustomerDelete: person.delete by email, then later updates are ignored", () => {
    const ctx = makeCtx({ settings: { optInMode: "trust_shopify", deleteContactOnCustomerDelete: true } });
    const plan = run("customers/delete", fixture("customers/delete"), { ...ctx, prior: created() });
    expect(plan.calls).toEqual([{ op: "person.delete", idOrEmail: "bob@biller.com" }]);
    const late = run("customers/update", customerWith(subscribed), { ...ctx, prior: plan.nextState });
    expect(late.calls).toEqual([]);
  });

  it("deleteContactOnCustomerDelete without a known email falls back to the event", () => {
    const ctx = makeCtx({ settings: { deleteContactOnCustomerDelete: true } });
    const plan = run("customers/delete", fixture("customers/delete"), ctx);
    expect(ops(plan)).toEqual(["customer/deleted"]);
    expect(eventOf(plan, "customer", "deleted").referenceId).toBe("706405506930370084");
  });
});

describe("customer accounts (user events)", () => {
  it("first enable → user/created; disable → user/updated (disabled, not deleted); enable again → user/updated", () => {
    const [enabled, disabled, again] = runSequence([
      { topic: "customers/enable", body: fixture("customers/enable") },
      { topic: "customers/disable", body: fixture("customers/disable") },
      { topic: "customers/enable", body: fixture("customers/enable") },
    ]);
    expect(eventOf(enabled, "user", "created")).toMatchObject({
      email: "bob@biller.com",
      id: "706405506930370084",
      first_name: "Bob",
      display_name: "Bob Biller",
      status: "enabled",
    });
    expect(ops(disabled)).toEqual(["user/updated"]);
    const off = eventOf(disabled, "user", "updated");
    expect(off.status).toBe("disabled");
    expect(off).not.toHaveProperty("deleted_at");
    expect(ops(again)).toEqual(["user/updated"]);
    expect(eventOf(again, "user", "updated").status).toBe("enabled");
  });
});
