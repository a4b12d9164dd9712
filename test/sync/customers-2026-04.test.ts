/**
 * Customers as Shopify sends them in API 2026-04, end to end over HTTP: signed webhooks → the app →
 * the marketing-service emulator (and the fake Admin for lookups). Shopify's own samples are
 * replayed; since 2025-01 they leave out tags, consent and sales totals, and nothing may be wiped
 * for that. Re-subscribers, merges and the default consent mode are checked at the service too.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { customerEmail, startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { listDeadLetters } from "~/pipeline/dead-letters.server";
import { install, newShop, numeric } from "../backfill/helpers";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";

type Json = Record<string, unknown>;
const sample = (topic: string): Json => JSON.parse(fixture(topic)) as Json;
const MIGRATION = path.resolve(import.meta.dirname, "../../prisma/migrations/202611261001_keep_opt_in_mode/migration.sql");

describeEachDatabase("customers and consent as Shopify sends them (2026-04)", (database) => {
  let h: PipelineHarness;
  let store: FakeStore;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    store = await startFakeStore(h.app.admin, { customers: 30, products: 1, orders: 1 }, { seed: 5 });
  });
  afterAll(async () => {
    await store.close();
    await h.close();
  });
  afterEach(() => h.reset());

  const deliver = (shop: string, topic: string, body: object) => h.deliver({ topic, shop, body });
  const setMode = (shop: string, optInMode: "double_opt_in" | "trust_shopify") =>
    h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode } } });
  const peoplePosts = (email: string) =>
    h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST" && (r.body as Json).email === email);
  const confirmations = (email: string) => h.emulator.sentEmails.filter((e) => e.kind === "confirmation" && e.to.includes(email));
  const consentUpdate = (id: string, email: string, state: string, at: string, level = "single_opt_in") => ({
    ...sample("customers_email_marketing_consent/update"),
    customer_id: id,
    admin_graphql_api_customer_id: `gid://shopify/Customer/${id}`,
    email_address: email,
    email_marketing_consent: { state, opt_in_level: level, consent_updated_at: at },
  });
  /** What the merchant or a signup form does in the service itself. */
  async function service(body: Json) {
    const res = await fetch(`${h.emulator.url}/api/people`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.emulator.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.ok).toBe(true);
  }

  it("every 2026-04 customer sample, replayed in turn, wipes nothing at the service", async () => {
    const shop = newShop("customers-2026");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    // A subscribed customer of the store with tags; Shopify's samples are replayed as this customer.
    const c = store.objects.customers.find(
      (x) => customerEmail(x) && (x.defaultEmailAddress as { marketingState?: string } | null)?.marketingState === "SUBSCRIBED",
    )!;
    c.tags = ["vip", "wholesale"];
    const email = customerEmail(c)!;
    const id = numeric(c.id);
    const gid = c.id as string;
    const asCustomer = (topic: string, updatedAt: string): Json => ({ ...sample(topic), id, admin_graphql_api_id: gid, email, updated_at: updatedAt });

    // First seen without consent or tags: they come from the Admin API.
    await deliver(shop, "customers/create", asCustomer("customers/create", "2026-11-20T10:00:00Z"));
    expect(store.answered.LookupCustomer).toBeGreaterThan(0);
    expect(h.emulator.person(email)).toMatchObject({ statusDetails: "confirmed", tags: expect.arrayContaining(c.tags as string[]) });
    await service({ email, source: "form", tags: { "set-in-service": true } });

    await deliver(shop, "customers/update", asCustomer("customers/update", "2026-11-21T10:00:00Z"));
    // Shopify's sample: not_subscribed with no time. A subscribed contact is not downgraded by it.
    await deliver(shop, "customers_email_marketing_consent/update", { ...sample("customers_email_marketing_consent/update"), customer_id: id, email_address: email });
    await deliver(shop, "customer.tags_added", { ...sample("customer.tags_added"), customerId: gid });
    expect(h.emulator.person(email)?.tags).toEqual(expect.arrayContaining(["tag1", "tag2", "set-in-service", ...(c.tags as string[])]));
    await deliver(shop, "customer.tags_removed", { ...sample("customer.tags_removed"), customerId: gid });
    await deliver(shop, "customers/purchasing_summary", { ...sample("customers/purchasing_summary"), customerId: gid });
    await deliver(shop, "customers/enable", asCustomer("customers/enable", "2026-11-22T10:00:00Z"));
    await deliver(shop, "customers/disable", asCustomer("customers/disable", "2026-11-23T10:00:00Z"));
    await deliver(shop, "customers/merge", { ...sample("customers/merge"), admin_graphql_api_customer_kept_id: gid });

    const person = h.emulator.person(email)!;
    expect(person.statusDetails).toBe("confirmed");
    expect([...person.tags].sort()).toEqual([...(c.tags as string[]), "set-in-service"].sort());
    expect(person.customFields).toMatchObject({ firstName: "Bob", lastName: "Biller", referenceId: id });
    // No request ever removed a tag Shopify did not name, or reset a status, or deleted the contact.
    for (const r of peoplePosts(email)) {
      const tags = ((r.body as Json).tags ?? {}) as Record<string, boolean>;
      for (const [tag, on] of Object.entries(tags)) if (!on) expect(["tag1", "tag2"]).toContain(tag);
      expect((r.body as Json).statusDetails ?? "confirmed").toBe("confirmed");
    }
    expect(h.emulator.requests.filter((r) => r.method === "DELETE")).toEqual([]);
    const events = h.emulator.requests.filter((r) => r.path.startsWith("/api/events/"));
    expect(events.filter((r) => r.path === "/api/events/customer/updated").at(-1)?.body).toMatchObject({ email, purchase_count: 1, purchase_value: 100 });
    expect(events.filter((r) => r.path.startsWith("/api/events/user/")).map((r) => [r.path, (r.body as Json).status])).toEqual([
      ["/api/events/user/created", "enabled"],
      ["/api/events/user/updated", "disabled"],
    ]);
    expect(await listDeadLetters(shop)).toHaveLength(0);
  });

  it("keep Shopify's consent: a customer who subscribes again can receive email at once", async () => {
    const shop = newShop("resubscribe-trust");
    await h.connect(shop);
    await setMode(shop, "trust_shopify");
    h.startWorkers(1, FAST_POLICY);
    const email = "again-trust@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "9301", email, consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    await deliver(shop, "customers_email_marketing_consent/update", consentUpdate("9301", email, "unsubscribed", "2026-05-01T09:00:00Z"));
    expect(h.emulator.person(email)?.statusDetails).toBe("unsubscribed");
    await deliver(shop, "customers_email_marketing_consent/update", consentUpdate("9301", email, "subscribed", "2026-06-01T09:00:00Z"));
    expect(h.emulator.person(email)?.statusDetails).toBe("confirmed");
    expect(confirmations(email)).toHaveLength(0);
  });

  it("double opt-in: a customer who subscribes again actually gets a confirmation email, keeping tags and fields", async () => {
    const shop = newShop("resubscribe-doi");
    await h.connect(shop);
    await setMode(shop, "double_opt_in");
    h.startWorkers(1, FAST_POLICY);
    const email = "again-doi@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "9302", email, tags: "vip", consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    expect(confirmations(email)).toHaveLength(1);
    await service({ email, source: "form", skipDoubleOptIn: true, statusDetails: "confirmed" }); // the person confirms
    await deliver(shop, "customers_email_marketing_consent/update", consentUpdate("9302", email, "unsubscribed", "2026-05-01T09:00:00Z"));
    expect(h.emulator.person(email)?.statusDetails).toBe("unsubscribed");

    await deliver(shop, "customers_email_marketing_consent/update", consentUpdate("9302", email, "subscribed", "2026-06-01T09:00:00Z"));
    expect(confirmations(email)).toHaveLength(2);
    expect(h.emulator.person(email)).toMatchObject({ statusDetails: "unconfirmed", tags: ["vip"], customFields: { referenceId: "9302" } });
    expect(await listDeadLetters(shop)).toHaveLength(0);
  });

  it("double opt-in: a re-subscribe Shopify already confirmed (confirmed_opt_in) is confirmed with no second email", async () => {
    const shop = newShop("resubscribe-doi-confirmed");
    await h.connect(shop);
    await setMode(shop, "double_opt_in");
    h.startWorkers(1, FAST_POLICY);
    const email = "again-confirmed@example.com";
    await deliver(shop, "customers/create", customerBody({ id: "9303", email, consent: "unsubscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    await deliver(shop, "customers_email_marketing_consent/update", consentUpdate("9303", email, "subscribed", "2026-06-01T09:00:00Z", "confirmed_opt_in"));
    expect(h.emulator.person(email)?.statusDetails).toBe("confirmed");
    expect(confirmations(email)).toHaveLength(0);
  });

  it("customers/merge leaves no ghost contact: the merged-away customer's address is removed, the kept one stays", async () => {
    const shop = newShop("merge");
    await h.connect(shop);
    h.startWorkers(1, FAST_POLICY);
    const [kept, ghost] = ["kept9311@example.com", "ghost9312@example.com"];
    await deliver(shop, "customers/create", customerBody({ id: "9311", email: kept, consent: "subscribed" }));
    await deliver(shop, "customers/create", customerBody({ id: "9312", email: ghost, consent: "subscribed" }));
    expect(h.emulator.person(ghost)).toBeDefined();
    await deliver(shop, "customers/merge", {
      ...sample("customers/merge"),
      admin_graphql_api_customer_kept_id: "gid://shopify/Customer/9311",
      admin_graphql_api_customer_deleted_id: "gid://shopify/Customer/9312",
      status: "completed",
      errors: [],
    });
    expect(h.emulator.person(ghost)).toBeUndefined();
    expect(h.emulator.person(kept)?.statusDetails).toBe("confirmed");
  });

  it("default consent mode: a new shop keeps Shopify's consent; a shop stored before keeps double opt-in", async () => {
    const before = newShop("stored-before");
    await h.connect(before);
    expect((await h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain: before } })).settings).toEqual({});
    // The migration, as it runs on a database that already has shops.
    await h.app.db.sql.query(readFileSync(MIGRATION, "utf8"));
    const after = newShop("new-shop");
    await h.connect(after);
    h.startWorkers(1, FAST_POLICY);

    await deliver(before, "customers/create", customerBody({ id: "9321", email: "old-shop@example.com", consent: "subscribed" }));
    await deliver(after, "customers/create", customerBody({ id: "9322", email: "new-shop@example.com", consent: "subscribed" }));
    expect(h.emulator.person("old-shop@example.com")?.statusDetails).toBe("unconfirmed");
    expect(confirmations("old-shop@example.com")).toHaveLength(1);
    expect(h.emulator.person("new-shop@example.com")?.statusDetails).toBe("confirmed");
    expect(confirmations("new-shop@example.com")).toHaveLength(0);
  });
});
