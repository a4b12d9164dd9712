/**
 * planWebhook, per delivery (docs/marketing-service-interface.md, Shopify's samples in
 * test/fixtures/shopify-webhooks/): which service calls a topic plans, what a topic the app does
 * not sync records, and the reason an invalid payload is recorded with. Pure: no database or server.
 */
import { describe, expect, it } from "vitest";
import { HANDLED_TOPICS, InvalidPayloadError, planWebhook, readWebhook } from "../../app/sync/plan-webhook";
import type { ObjectSyncState, SyncPlan } from "../../app/sync/plan-contract";
import { fixture, fixtureText, listFixtures, makeCtx, ops, upsertOf } from "../sync/fixtures";

/** Shopify's sample customer (id 1 in the GraphQL-shaped samples) as already pushed to the service. */
const KNOWN_CUSTOMER: ObjectSyncState = {
  kind: "customer",
  email: "bob@biller.com",
  tags: ["tag1"],
  consent: { state: "subscribed", at: null, optInLevel: null, contact: true, doiRequested: false },
  deleted: false,
};

function invalidReason(topic: string, body: unknown): string {
  try {
    planWebhook(topic, body, makeCtx());
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect((error as InvalidPayloadError).name).toBe("InvalidPayloadError");
    expect((error as InvalidPayloadError).topic).toBe(topic);
    return (error as Error).message;
  }
  throw new Error(`${topic}: ${JSON.stringify(body)} was planned, not refused`);
}

describe("topics the app syncs", () => {
  it("are the customer, order, product, cart, checkout and subscription topics, and no app or privacy topic", () => {
    for (const t of ["customers/create", "customers_email_marketing_consent/update", "customer.tags_removed", "orders/paid", "refunds/create", "products/update", "checkouts/create", "subscription_contracts/create"]) {
      expect(HANDLED_TOPICS).toContain(t);
    }
    for (const t of ["app/uninstalled", "app/scopes_update", "customers/redact", "customers/data_request", "shop/redact", "bulk_operations/finish", "carts/create", "carts/update"]) {
      expect(HANDLED_TOPICS).not.toContain(t);
    }
  });

  it("each Shopify sample of a synced topic is planned by that topic (never as not synced)", () => {
    const synced = listFixtures().filter(({ topic }) => (HANDLED_TOPICS as string[]).includes(topic));
    expect(synced.length).toBeGreaterThan(30);
    for (const { topic } of synced) {
      const plan = planWebhook(topic, fixture(topic), makeCtx());
      expect(plan.objectKey, topic).not.toMatch(/^unhandled:/);
      expect(plan.skipped ?? "", topic).not.toMatch(/is not synced/);
    }
  });

  it("the raw body text plans as its parsed JSON, with Shopify's 18-digit ids kept exactly", () => {
    const text = fixtureText("customers_email_marketing_consent/update");
    expect(text).toContain("706405506930370000");
    const fromText = planWebhook("customers_email_marketing_consent/update", text, makeCtx());
    expect(fromText.objectKey).toBe("customer:706405506930370000");
    expect(fromText).toEqual(planWebhook("customers_email_marketing_consent/update", fixture("customers_email_marketing_consent/update"), makeCtx()));
  });

  it("read before planning, the raw body text gives the keys and plan of its parsed JSON, the 18-digit id exact", () => {
    const topic = "customers_email_marketing_consent/update";
    const text = fixtureText(topic);
    const { prior: _, ...noPrior } = makeCtx();
    const fromText = readWebhook(topic, text, noPrior);
    const fromJson = readWebhook(topic, fixture(topic), noPrior);
    expect(fromText.keys).toEqual({ objectKey: "customer:706405506930370000" });
    expect(fromText.keys).toEqual(fromJson.keys);
    expect(fromText.plan(makeCtx())).toEqual(fromJson.plan(makeCtx()));
    expect(fromText.plan(makeCtx()).objectKey).toBe("customer:706405506930370000");
  });

  it("customer.tags_removed removes the named tags on the contact; customer.tags_added adds them", () => {
    const removed = planWebhook("customer.tags_removed", fixture("customer.tags_removed"), makeCtx({ prior: KNOWN_CUSTOMER }));
    expect(ops(removed)).toEqual(["person.upsert"]);
    expect(upsertOf(removed).tags).toEqual({ tag1: false, tag2: false });
    const added = planWebhook("customer.tags_added", fixture("customer.tags_added"), makeCtx({ prior: KNOWN_CUSTOMER }));
    expect(upsertOf(added).tags).toEqual({ tag1: true, tag2: true });
  });

  it("customer.joined_segment / left_segment of a mirrored segment add / remove its tag on the contact", () => {
    const ctx = makeCtx({ prior: KNOWN_CUSTOMER, segmentTags: { "3": "shopify-segment:vip" } });
    const joined = planWebhook("customer.joined_segment", fixture("customer.joined_segment"), ctx);
    expect(upsertOf(joined).tags).toEqual({ "shopify-segment:vip": true });
    const left = planWebhook("customer.left_segment", fixture("customer.left_segment"), { ...ctx, prior: joined.nextState });
    expect(upsertOf(left).tags).toEqual({ "shopify-segment:vip": false });
    // A later replay of the join from before the segment was picked must not put the tag back.
    expect(left.nextState).toMatchObject({ segmentsLeftAt: { "shopify-segment:vip": expect.any(String) } });
  });

  it("orders/create records the order as created, orders/updated as updated", () => {
    // Shopify's samples are test orders; as real ones:
    expect(ops(planWebhook("orders/create", Object.assign(fixture("orders/create"), { test: false }), makeCtx()))).toEqual(["order/created"]);
    expect(ops(planWebhook("orders/updated", Object.assign(fixture("orders/updated"), { test: false }), makeCtx()))).toEqual(["order/updated"]);
  });
});

describe("topics the app does not sync", () => {
  const unsynced = (topic: string): SyncPlan => planWebhook(topic, { id: 1 }, makeCtx());

  it("plan no call and record why, under the topic as Shopify spells it in any case", () => {
    for (const topic of ["app/uninstalled", "customers/redact", "shop/redact", "bulk_operations/finish", "fulfillments/create"]) {
      expect(unsynced(topic)).toEqual({
        objectKey: `unhandled:${topic}`,
        objectUpdatedAt: null,
        calls: [],
        nextState: null,
        skipped: `topic ${topic} is not synced`,
      });
    }
    expect(unsynced("APP/UNINSTALLED")).toMatchObject({ objectKey: "unhandled:app/uninstalled", skipped: "topic app/uninstalled is not synced" });
  });
});

describe("invalid payloads are refused with a reason naming the topic, the field and the number of issues", () => {
  it("a customer without an id", () => {
    expect(invalidReason("customers/update", {})).toBe("Invalid customers/update payload (1 issue; id: Customer id is required)");
  });

  it("a body that is not an object names the body", () => {
    expect(invalidReason("customers/update", 42)).toBe("Invalid customers/update payload (1 issue; (body): Invalid input: expected object, received number)");
  });

  it("several issues are counted, the first one is named", () => {
    expect(invalidReason("customer.tags_added", {})).toBe("Invalid customer.tags_added payload (2 issues; customerId: Invalid input)");
  });

  it("a nested field is named by its path in the payload", () => {
    const order = fixture("orders/create");
    order.line_items[0].quantity = "two";
    expect(invalidReason("orders/create", order)).toBe("Invalid orders/create payload (1 issue; line_items.0.quantity: Invalid input: expected number, received string)");
  });

  it("a raw body that is not JSON is refused before any topic schema", () => {
    expect(() => planWebhook("customers/update", "{not json", makeCtx())).toThrow();
  });
});
