import { afterAll, beforeAll, expect, it } from "vitest";
import { GraphqlReply } from "../../dev/shopify/fake-admin";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { webhookHeaders } from "../support/webhooks";
import { install, newShop, until } from "../backfill/helpers";

/**
 * A captured sync body replayed under another installed shop (issue 48, item 4). The HMAC covers
 * the body only, so a body Shopify signed for shop A verifies under shop B's X-Shopify-Shop-Domain
 * too. Consent it carries must not become confirmed consent in B's list: the app first asks B's
 * Admin API about the customer (app/compliance/consent-origin.server.ts). The fake Admin answers
 * as Shopify does: customer ids are Shopify-wide, and a store's token sees only its own customers.
 */
describeEachDatabase("a consent body replayed under another shop", (kind) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database: kind });
    h.startWorkers();
  }, 120_000);
  afterAll(() => h.close());

  /** Two installed shops, each connected to an account of its own; customer `id` is A's alone. */
  async function twoShops(id: string, marketingState = "SUBSCRIBED") {
    const a = newShop("genuine");
    const b = newShop("victim");
    const accounts = { a: h.emulator.createAccount({ doubleOptIn: false }), b: h.emulator.createAccount({ doubleOptIn: false }) };
    await install(h, a);
    await install(h, b);
    await h.connect(a, accounts.a.apiKey);
    await h.connect(b, accounts.b.apiKey);
    const reads: string[] = [];
    h.app.admin.onGraphql("ConsentOrigin", (_query, variables, shop) => {
      const ids = variables.ids as string[];
      reads.push(`${shop} ${ids.join(",")}`);
      // Shopify's nodes(ids:): null where the shop's token does not see the customer.
      return { nodes: ids.map((gid) => (shop === a && gid === `gid://shopify/Customer/${id}` ? { id: gid, defaultEmailAddress: { marketingState } } : null)) };
    });
    return { a, b, accounts, reads };
  }

  const lastDelivery = (shop: string, topic: string) =>
    h.app.db.prisma.webhookDelivery.findFirst({ where: { shop, topic }, orderBy: { receivedAt: "desc" } });

  /** Posts `body` as Shopify signed it for `signedFor`, with the shop header changed to `shop`. */
  async function replay(topic: string, body: object, signedFor: string, shop: string): Promise<Response> {
    const raw = JSON.stringify(body);
    const headers = { ...webhookHeaders({ topic, shop: signedFor, body: raw }), "x-shopify-shop-domain": shop };
    return fetch(new URL("/webhooks", h.app.url), { method: "POST", headers, body: raw });
  }

  it("customers/create signed for shop A and replayed under shop B creates no contact in B's list; A's own delivery still subscribes", async () => {
    const id = "6100000000000001";
    const email = `replayed.${Date.now()}@example.com`;
    const { a, b, accounts, reads } = await twoShops(id);
    const captured = { ...customerBody({ id, email }), email_marketing_consent: { state: "subscribed", opt_in_level: "confirmed_opt_in", consent_updated_at: "2026-11-01T10:00:00Z" } };

    expect((await replay("customers/create", captured, a, b)).status).toBe(200); // the HMAC verifies: it covers the body only
    await h.settle();
    expect(await lastDelivery(b, "customers/create")).toMatchObject({ outcome: "ignored", outcomeDetail: expect.stringContaining("is not a customer of this shop") });
    expect(h.emulator.person(email, accounts.b.accountId)).toBeUndefined();
    expect(await h.app.db.prisma.outboundCall.count({ where: { shop: b } })).toBe(0);

    // The genuine delivery to A: confirmed with A's Admin API, the contact is active and confirmed.
    expect((await replay("customers/create", captured, a, a)).status).toBe(200);
    await h.settle();
    expect(await lastDelivery(a, "customers/create")).toMatchObject({ outcome: "planned" });
    expect(h.emulator.person(email, accounts.a.accountId)).toMatchObject({ statusDetails: "confirmed" });
    // One Admin read per shop for this customer; A's later deliveries need none.
    expect((await replay("customers/update", { ...captured, first_name: "Grace" }, a, a)).status).toBe(200);
    await h.settle();
    expect(reads).toEqual([`${b} gid://shopify/Customer/${id}`, `${a} gid://shopify/Customer/${id}`]);
  }, 120_000);

  it("customers_email_marketing_consent/update replayed under shop B subscribes nobody there, the lookup's deadline passed or not", async () => {
    const id = "6100000000000002";
    const email = `consent.${Date.now()}@example.com`;
    const { a, b, accounts } = await twoShops(id);
    // B's token sees no such customer: the lookup of the unknown customer keeps failing too.
    h.app.admin.onGraphql("LookupCustomer", () => ({ customer: null }));
    const captured = {
      customer_id: Number(id),
      email_address: email,
      email_marketing_consent: { state: "subscribed", opt_in_level: "confirmed_opt_in", consent_updated_at: "2026-11-01T10:00:00Z" },
    };
    expect((await replay("customers_email_marketing_consent/update", captured, a, b)).status).toBe(200);
    // Past the lookup's deadline the lookup plans the delivery with what it carries: make it so now.
    await until("the lookup waits", async () => (await lastDelivery(b, "customers_email_marketing_consent/update"))?.outcomeDetail?.startsWith("waiting:"));
    await h.app.db.prisma.webhookDelivery.updateMany({
      where: { shop: b, topic: "customers_email_marketing_consent/update" },
      data: { receivedAt: new Date(Date.now() - 7 * 3_600_000), runAt: new Date() },
    });
    const done = await until("the replay is recorded", async () => {
      const row = await lastDelivery(b, "customers_email_marketing_consent/update");
      return row?.status === "done" ? row : undefined;
    });
    expect(done.outcome).toBe("ignored");
    expect(h.emulator.person(email, accounts.b.accountId)).toBeUndefined();
  }, 120_000);

  it("a sale's new subscribers are confirmed with one Admin read for the shop, not one each; the one Shopify does not show in the shop is left out", async () => {
    const stranger = "6100000000000099";
    const ids = Array.from({ length: 30 }, (_, i) => String(6_100_000_000_000_100n + BigInt(i)));
    const { a, accounts } = await twoShops("unused");
    const reads: string[][] = [];
    h.app.admin.onGraphql("ConsentOrigin", (_query, variables, shop) => {
      const asked = variables.ids as string[];
      reads.push(asked);
      return { nodes: asked.map((gid) => (shop === a && !gid.endsWith(`/${stranger}`) ? { id: gid, defaultEmailAddress: { marketingState: "SUBSCRIBED" } } : null)) };
    });
    const subscribed = (id: string) => ({
      ...customerBody({ id, email: `sale.${id}@example.com` }),
      email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-11-01T10:00:00Z" },
    });
    // The sale arrives while the worker is away: the next planning batch holds all of it.
    await h.stopWorkers();
    for (const id of [...ids, stranger]) expect((await replay("customers/create", subscribed(id), a, a)).status).toBe(200);
    h.startWorkers();
    await h.settle();

    expect(reads).toHaveLength(1);
    expect(reads[0]).toHaveLength(31);
    for (const id of ids) expect(h.emulator.person(`sale.${id}@example.com`, accounts.a.accountId)).toMatchObject({ statusDetails: "confirmed" });
    expect(h.emulator.person(`sale.${stranger}@example.com`, accounts.a.accountId)).toBeUndefined();
  }, 120_000);

  it("Shopify unreachable: the consent waits in the queue and is never sent unconfirmed; it goes through once Shopify answers", async () => {
    const id = "6100000000000003";
    const email = `waiting.${Date.now()}@example.com`;
    const { a, accounts } = await twoShops(id);
    let down = true;
    h.app.admin.onGraphql("ConsentOrigin", (_query, variables, shop) => {
      if (down) return new GraphqlReply({ errors: [{ message: "Internal error" }] });
      return { nodes: (variables.ids as string[]).map((gid) => (shop === a ? { id: gid, defaultEmailAddress: { marketingState: "SUBSCRIBED" } } : null)) };
    });
    const body = { ...customerBody({ id, email }), email_marketing_consent: { state: "subscribed", opt_in_level: "confirmed_opt_in", consent_updated_at: "2026-11-01T10:00:00Z" } };
    expect((await replay("customers/create", body, a, a)).status).toBe(200);
    await until("the delivery waits", async () => (await lastDelivery(a, "customers/create"))?.outcomeDetail?.includes("could not be confirmed with Shopify"));
    expect(h.emulator.person(email, accounts.a.accountId)).toBeUndefined();
    down = false;
    await until("the contact is confirmed", async () => h.emulator.person(email, accounts.a.accountId)?.statusDetails === "confirmed");
  }, 120_000);
});
