/**
 * Every contact carries the name and phone Shopify knows, whichever of the customer topics arrives
 * first and in whatever order the rest follow (issue 45, item 1). One customer per order of arrival
 * of Shopify's 2026-04 customer samples (customers/create, customers/update,
 * customers_email_marketing_consent/update, customer.tags_added, customers/purchasing_summary:
 * 5! = 120 orders), end to end: signed webhooks → pipeline → the emulator, the fake Admin answering
 * the lookups of customers never seen. The customer signs up as a non-subscriber (not pushed as a
 * contact) and subscribes later: the Admin answers "subscribed" from the moment the consent webhook
 * is sent, as Shopify would.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { listDeadLetters } from "~/pipeline/dead-letters.server";
import { install, newShop, numeric } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

type Json = Record<string, unknown>;
const sample = (topic: string): Json => JSON.parse(fixture(topic)) as Json;

const TOPICS = [
  "customers/create",
  "customers/update",
  "customers_email_marketing_consent/update",
  "customer.tags_added",
  "customers/purchasing_summary",
] as const;
type CustomerTopic = (typeof TOPICS)[number];

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}
const ORDERS = permutations(TOPICS);

describeEachDatabase("customer topics in every order of arrival", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, { customers: ORDERS.length, products: 1, orders: 1 }, { seed: 45 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });

  it(`the contact ends with the name and phone, in all ${ORDERS.length} orders`, async () => {
    expect(ORDERS).toHaveLength(120);
    const shop = newShop("arrival-orders");
    await install(h, shop);
    const customers = store.objects.customers.map((c, i) => {
      const email = `ada.thompson.${i}@example.com`;
      // Shopify's customer as it stands when it signs up: a named non-subscriber with a phone.
      Object.assign(c, {
        firstName: "Ada",
        lastName: "Thompson",
        defaultPhoneNumber: { phoneNumber: "+15550142" },
        defaultEmailAddress: { emailAddress: email, marketingState: "NOT_SUBSCRIBED", marketingOptInLevel: null, marketingUpdatedAt: "2026-11-20T10:00:00Z" },
        tags: [],
      });
      return { store: c, gid: c.id as string, id: numeric(c.id as string), email };
    });
    const body = (topic: CustomerTopic, c: (typeof customers)[number]): Json => {
      const profile = { first_name: "Ada", last_name: "Thompson", phone: "+15550142", email: c.email };
      switch (topic) {
        case "customers/create":
          return { ...sample(topic), ...profile, id: c.id, admin_graphql_api_id: c.gid, created_at: "2026-11-20T10:00:00Z", updated_at: "2026-11-20T10:00:00Z" };
        case "customers/update":
          return { ...sample(topic), ...profile, id: c.id, admin_graphql_api_id: c.gid, created_at: "2026-11-20T10:00:00Z", updated_at: "2026-11-21T10:00:00Z" };
        case "customers_email_marketing_consent/update":
          return {
            ...sample(topic),
            customer_id: c.id,
            admin_graphql_api_customer_id: c.gid,
            email_address: c.email,
            email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-11-22T10:00:00Z" },
          };
        case "customer.tags_added":
          return { ...sample(topic), customerId: c.gid };
        case "customers/purchasing_summary":
          return { ...sample(topic), customerId: c.gid };
      }
    };

    h.startWorkers(1, FAST_POLICY);
    // Round k sends the k-th topic of every customer's order, then waits: each customer's topics
    // arrive in its own order.
    for (let k = 0; k < TOPICS.length; k++) {
      await Promise.all(
        customers.map(async (c, i) => {
          const topic = ORDERS[i][k];
          if (topic === "customers_email_marketing_consent/update") {
            (c.store.defaultEmailAddress as Json).marketingState = "SUBSCRIBED";
            (c.store.defaultEmailAddress as Json).marketingOptInLevel = "SINGLE_OPT_IN";
            (c.store.defaultEmailAddress as Json).marketingUpdatedAt = "2026-11-22T10:00:00Z";
          }
          expect((await h.send({ topic, shop, body: body(topic, c) })).status).toBe(200);
        }),
      );
      await h.settle(120_000);
    }

    const wrong = customers.flatMap((c, i) => {
      const person = h.emulator.person(c.email);
      const fields = person?.customFields ?? {};
      const ok = person?.statusDetails === "confirmed" && fields.firstName === "Ada" && fields.lastName === "Thompson" && fields.phoneNumber === "+15550142";
      return ok ? [] : [{ order: ORDERS[i].join(" → "), status: person?.statusDetails, fields }];
    });
    expect(wrong).toEqual([]);
    // No upsert ever sent a blank name or phone.
    for (const r of h.emulator.requests.filter((x) => x.path === "/api/people" && x.method === "POST")) {
      const fields = ((r.body as Json).customFields ?? {}) as Json;
      for (const key of ["firstName", "lastName", "phoneNumber"]) if (key in fields) expect(fields[key]).toBeTruthy();
    }
    expect(await listDeadLetters(shop)).toHaveLength(0);
  });
});
