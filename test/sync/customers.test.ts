import { describe, expect, it } from "vitest";
import { customerWith, eventOf, fixture, makeCtx, ops, run, runSequence, upsertOf } from "./fixtures";
import { customerBody } from "../../app/backfill/convert";

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

describe("2026-04 shapes: a field left out is unknown, never empty", () => {
  const consent = (state: string, at = "2026-01-01T00:00:00Z") => ({
    topic: "customers_email_marketing_consent/update",
    body: { customer_id: "706405506930370084", email_address: "bob@biller.com", email_marketing_consent: { state, opt_in_level: "single_opt_in", consent_updated_at: at } },
  });
  const tagsEvent = (topic: "customer.tags_added" | "customer.tags_removed", tags: string[]) => ({
    topic,
    body: { ...fixture(topic), customerId: "gid://shopify/Customer/706405506930370084", tags },
  });

  it("customers/update without tags (Shopify's 2026-04 sample) leaves the contact's tags alone", () => {
    const [, update] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip, newsletter" }) },
        { topic: "customers/update", body: { ...fixture("customers/update"), first_name: "Robert", updated_at: "2026-02-01T00:00:00Z" } },
      ],
      trust,
    );
    expect(upsertOf(update)).not.toHaveProperty("tags");
    expect(upsertOf(update)).not.toHaveProperty("status");
    expect(update.nextState).toMatchObject({ tags: ["vip", "newsletter"], consent: { state: "subscribed" } });
    // No sales totals in the payload: none are sent (the last known ones stay at the service).
    expect(eventOf(update, "customer", "updated")).not.toHaveProperty("purchase_count");
  });

  it("customer.tags_added / tags_removed change only the named tags, whatever else the contact has", () => {
    const [, added, removed] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip" }) },
        tagsEvent("customer.tags_added", ["eu", "vip"]),
        tagsEvent("customer.tags_removed", ["eu", "never-had"]),
      ],
      trust,
    );
    expect(upsertOf(added).tags).toEqual({ eu: true, vip: true });
    expect(upsertOf(added)).not.toHaveProperty("status");
    expect(upsertOf(removed).tags).toEqual({ eu: false, "never-had": false });
    expect(removed.nextState).toMatchObject({ tags: ["vip"] });
  });

  it("tags learnt before the customer is a contact go with the upsert that creates it", () => {
    const [create, added, subscribe] = runSequence(
      [
        { topic: "customers/create", body: fixture("customers/create") },
        tagsEvent("customer.tags_added", ["vip"]),
        consent("subscribed"),
      ],
      trust,
    );
    expect(ops(create)).toEqual(["customer/created"]);
    expect(ops(added)).toEqual([]);
    expect(upsertOf(subscribe)).toMatchObject({ tags: { vip: true }, statusDetails: "confirmed" });
  });

  it("customers/purchasing_summary: count and value on customer/updated, never a new contact", () => {
    const [, summary] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed) },
        { topic: "customers/purchasing_summary", body: { ...fixture("customers/purchasing_summary"), customerId: "gid://shopify/Customer/706405506930370084" } },
      ],
      trust,
    );
    expect(ops(summary)).toEqual(["customer/updated"]);
    expect(eventOf(summary, "customer", "updated")).toMatchObject({
      email: "bob@biller.com",
      id: "706405506930370084",
      is_contact: false,
      purchase_count: 1,
      purchase_value: 100,
      currency: "USD",
    });
  });

  it("double opt-in, subscribing again after an unsubscribe: the contact is deleted and created again with its tags", () => {
    const doi = makeCtx({ settings: { optInMode: "double_opt_in" } });
    const [, , again] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip" }) },
        consent("unsubscribed", "2026-02-01T00:00:00Z"),
        consent("subscribed", "2026-03-01T00:00:00Z"),
      ],
      doi,
    );
    expect(ops(again)).toEqual(["person.delete", "person.upsert"]);
    expect(again.calls[0]).toEqual({ op: "person.delete", idOrEmail: "bob@biller.com" });
    const body = upsertOf(again);
    expect(body).toMatchObject({ email: "bob@biller.com", tags: { vip: true }, customFields: { referenceId: "706405506930370084" } });
    expect(body).not.toHaveProperty("skipDoubleOptIn");
    expect(body).not.toHaveProperty("statusDetails");
  });
});

describe("customers/merge", () => {
  const merge = (status: string, kept = "1", deleted = "2") => ({
    ...fixture("customers/merge"),
    admin_graphql_api_customer_kept_id: `gid://shopify/Customer/${kept}`,
    admin_graphql_api_customer_deleted_id: `gid://shopify/Customer/${deleted}`,
    status,
  });
  const stateOf = (id: string, email: string) =>
    run("customers/create", customerWith(subscribed, { id: Number(id), admin_graphql_api_id: `gid://shopify/Customer/${id}`, email }), trust).nextState;

  it("completed: the merged-away customer's contact is deleted when the kept one has another address", () => {
    const plan = run("customers/merge", merge("completed"), {
      ...trust,
      prior: stateOf("2", "ghost@example.com"),
      related: { "customer:1": stateOf("1", "kept@example.com") },
    });
    expect(plan.relatedKeys).toEqual(["customer:1"]);
    expect(plan.calls).toEqual([{ op: "person.delete", idOrEmail: "ghost@example.com" }]);
    expect(plan.nextState).toMatchObject({ deleted: true });
  });

  it("same address as the kept customer, kept customer unknown, or a failed merge: no deletion", () => {
    const ghost = stateOf("2", "same@example.com");
    expect(run("customers/merge", merge("completed"), { ...trust, prior: ghost, related: { "customer:1": stateOf("1", "same@example.com") } }).calls).toEqual([]);
    expect(run("customers/merge", merge("completed"), { ...trust, prior: ghost, related: { "customer:1": null } }).calls).toEqual([]);
    const failed = run("customers/merge", fixture("customers/merge"), { ...trust, prior: ghost });
    expect(failed.calls).toEqual([]);
    expect(failed.skipped).toMatch(/merge failed/);
  });
});

describe("customers read through GraphQL", () => {
  it("a customer read without its tags leaves the known tags alone; read with [] it has none", () => {
    const node = { id: "gid://shopify/Customer/706405506930370084", defaultEmailAddress: { emailAddress: "bob@biller.com" }, updatedAt: "2026-03-01T00:00:00Z" };
    const [, withoutTags, emptyTags] = runSequence(
      [
        { topic: "customers/create", body: customerWith(subscribed, { tags: "vip" }) },
        { topic: "customers/update", body: customerBody(node) },
        { topic: "customers/update", body: customerBody({ ...node, tags: [], updatedAt: "2026-03-02T00:00:00Z" }) },
      ],
      trust,
    );
    expect(upsertOf(withoutTags)).not.toHaveProperty("tags");
    expect(upsertOf(emptyTags).tags).toEqual({ vip: false });
  });
});
