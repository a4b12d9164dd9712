import { randomInt } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { database } from "~/db.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture, orderBody } from "../sync/fixtures";
import { newShop } from "../backfill/helpers";

/**
 * Erasure and export find the customer wherever the app stored them (issue 48, item 3). The
 * customer is shown to the app through signed webhooks over HTTP — customer, order, refund,
 * checkout, subscription contract and its billing — and after customers/redact every table of the
 * database (enumerated from the catalog, so a table added later is searched too) is searched for
 * every identifier of the customer. What may stay, by decision (SECURITY.md, "Erasure and export"):
 * the service deletion call itself (`person.delete`, it must name the person until it is delivered;
 * retention removes it), and the ErasedReference tombstone, which holds hashes only.
 */
describeEachDatabase("erasure and export, subscriptions included", (kind) => {
  let h: PipelineHarness;

  beforeAll(async () => {
    h = await startPipelineHarness({ database: kind });
    h.startWorkers();
  }, 120_000);
  afterAll(() => h.close());

  // Ids no other row of the database holds by chance (below 2^53: the bodies are written by JSON.stringify).
  const uniqueId = () => `${randomInt(1, 9)}${String(randomInt(0, 2 ** 47)).padStart(14, "0")}`;
  const deliver = (shop: string, topic: string, body: object) => h.deliver({ topic, shop, body });

  /** A customer of `shop` with an order, a refund, a checkout, a contract and a renewal, all delivered. */
  async function customerWithEverything(shop: string) {
    const c = {
      id: uniqueId(),
      email: `erase.${uniqueId()}@example.com`,
      phone: `+4420${randomInt(1e6, 9e6)}`,
      order: uniqueId(),
      renewalOrder: uniqueId(),
      contract: uniqueId(),
      checkout: `chk${uniqueId()}`,
    };
    const customerRef = { id: Number(c.id), admin_graphql_api_id: `gid://shopify/Customer/${c.id}`, email: c.email, phone: c.phone };
    await deliver(shop, "customers/create", { ...customerBody({ id: c.id, email: c.email }), phone: c.phone });
    await deliver(shop, "checkouts/create", {
      ...fixture("checkouts/create"),
      id: Number(uniqueId()),
      token: c.checkout,
      cart_token: null,
      email: c.email,
      phone: c.phone,
      customer: { ...fixture("checkouts/create").customer, ...customerRef },
    });
    await deliver(shop, "orders/create", orderBody({
      id: Number(c.order),
      admin_graphql_api_id: `gid://shopify/Order/${c.order}`,
      email: c.email,
      phone: c.phone,
      customer: customerRef,
      checkout_token: c.checkout,
    }));
    await deliver(shop, "refunds/create", {
      ...fixture("refunds/create"),
      id: Number(uniqueId()),
      admin_graphql_api_id: `gid://shopify/Refund/${uniqueId()}`,
      order_id: Number(c.order),
      refund_line_items: [],
      transactions: [],
    });
    const contract = {
      ...fixture("subscription_contracts/create"),
      id: Number(c.contract),
      admin_graphql_api_id: `gid://shopify/SubscriptionContract/${c.contract}`,
      customer_id: Number(c.id),
      admin_graphql_api_customer_id: `gid://shopify/Customer/${c.id}`,
      origin_order_id: Number(c.order),
      admin_graphql_api_origin_order_id: `gid://shopify/Order/${c.order}`,
    };
    await deliver(shop, "subscription_contracts/create", contract);
    await deliver(shop, "subscription_contracts/pause", { ...contract, status: "paused" });
    await deliver(shop, "subscription_billing_attempts/success", {
      ...fixture("subscription_billing_attempts/success"),
      order_id: Number(c.renewalOrder),
      admin_graphql_api_order_id: `gid://shopify/Order/${c.renewalOrder}`,
      subscription_contract_id: Number(c.contract),
      admin_graphql_api_subscription_contract_id: `gid://shopify/SubscriptionContract/${c.contract}`,
    });
    return c;
  }

  /**
   * Every row of every table of the database whose text names one of `ids`: numbers as whole
   * numbers, the rest as case-insensitive substrings. The catalog lists the tables: nothing here
   * knows the app's tables or its matcher.
   */
  async function rowsNaming(ids: { numbers: string[]; strings: string[] }): Promise<string[]> {
    const sql = database().sql;
    const tables = await sql.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations' ORDER BY 1`,
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["ObjectState", "OutboundCall", "WebhookDelivery"]));
    const found: string[] = [];
    for (const { name } of tables) {
      const rows = await sql.query<{ row: string }>(
        `SELECT t::text AS row FROM "${name}" t
          WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) n WHERE t::text ~ ('(^|[^0-9])' || n || '([^0-9]|$)'))
             OR EXISTS (SELECT 1 FROM unnest($2::text[]) s WHERE strpos(lower(t::text), lower(s)) > 0)`,
        [ids.numbers, ids.strings],
      );
      found.push(...rows.map(({ row }) => `${name}: ${row}`));
    }
    return found;
  }

  const identifiers = (c: Awaited<ReturnType<typeof customerWithEverything>>) => ({
    // The GIDs (gid://shopify/Customer/N, …/Order/N, …/SubscriptionContract/N) hold these numbers whole.
    numbers: [c.id, c.order, c.renewalOrder, c.contract],
    strings: [c.email, c.phone, c.phone.slice(1), `gid://shopify/Customer/${c.id}`, `gid://shopify/SubscriptionContract/${c.contract}`],
  });

  const lastDelivery = (shop: string, topic: string) =>
    h.app.db.prisma.webhookDelivery.findFirst({ where: { shop, topic }, orderBy: { receivedAt: "desc" } });

  it("customers/redact leaves no row naming the customer in any table; the export lists their subscription", async () => {
    const shop = newShop("erasure");
    await h.connect(shop);
    const c = await customerWithEverything(shop);
    const neighbour = await customerWithEverything(shop);
    const request = (extra: object) => ({ shop_id: 1, shop_domain: shop, customer: { id: Number(c.id), email: c.email, phone: c.phone }, ...extra });

    // What the app holds before: the contract's state and the calls that name the customer by id.
    const before = await rowsNaming(identifiers(c));
    expect(before.filter((r) => r.startsWith("ObjectState:") && r.includes(`subscription:${c.contract}`))).toHaveLength(1);
    expect(before.some((r) => r.startsWith("OutboundCall:") && new RegExp(`referenceId"+: "+${c.id}"`).test(r))).toBe(true);

    // The data request's export, as the merchant downloads it from the Privacy page.
    await deliver(shop, "customers/data_request", request({ orders_requested: [Number(c.order), Number(c.renewalOrder)], data_request: { id: 1 } }));
    const dataRequest = await lastDelivery(shop, "customers/data_request");
    expect(dataRequest).toMatchObject({ outcome: "handled" });
    const { mintSessionToken, CHROME_UA } = await import("../support/session-token");
    const res = await fetch(`${h.app.url}/app/privacy-export?shop=${shop}&id=${dataRequest!.id}`, {
      headers: { "user-agent": CHROME_UA, authorization: `Bearer ${await mintSessionToken({ shop })}` },
    });
    expect(res.status).toBe(200);
    const exported = (await res.json()) as {
      customer: { subscriptionIds: string[] };
      objectStates: { objectKey: string }[];
      outboundCalls: { objectKey: string }[];
      webhookDeliveries: { topic: string }[];
    };
    expect(exported.customer.subscriptionIds).toEqual([c.contract]);
    expect(exported.objectStates.map((o) => o.objectKey)).toEqual(expect.arrayContaining([`customer:${c.id}`, `order:${c.order}`, `subscription:${c.contract}`]));
    expect(exported.outboundCalls.map((o) => o.objectKey)).toContain(`subscription:${c.contract}`);
    expect(exported.webhookDeliveries.map((d) => d.topic)).toEqual(
      expect.arrayContaining(["subscription_contracts/create", "subscription_contracts/pause", "subscription_billing_attempts/success", "refunds/create", "checkouts/create"]),
    );
    const text = JSON.stringify(exported);
    for (const id of [neighbour.id, neighbour.email, neighbour.contract]) expect(text).not.toContain(id); // nobody else's data

    await deliver(shop, "customers/redact", request({ orders_to_redact: [Number(c.order), Number(c.renewalOrder)] }));
    expect(await lastDelivery(shop, "customers/redact")).toMatchObject({ outcome: "handled", rawBody: '{"redacted":true}' });

    const left = await rowsNaming(identifiers(c));
    // The one row that may name the person: the service deletion, until retention removes it.
    const deletion = left.filter((r) => r.startsWith("OutboundCall:") && /"op"+: "+person\.delete"/.test(r));
    expect(deletion).toHaveLength(1);
    expect(left.filter((r) => !deletion.includes(r))).toEqual([]);
    // The neighbour, their contract included, is untouched.
    const kept = await rowsNaming(identifiers(neighbour));
    expect(kept.filter((r) => r.startsWith("ObjectState:") && r.includes(`subscription:${neighbour.contract}`))).toHaveLength(1);
    expect(kept.filter((r) => r.startsWith("WebhookDelivery:")).length).toBeGreaterThanOrEqual(7);
  }, 240_000);
});
