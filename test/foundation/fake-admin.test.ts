import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAdmin, type FakeAdmin } from "../../dev/shopify/fake-admin";
import { startFakeStore, type FakeStore } from "../../dev/shopify/fake-store";
import { mintSessionToken } from "../../dev/shopify/session-token";

// The fake Admin answers as Shopify does (docs/shopify-graphql.md), over HTTP: from the 2026-04
// schema, with Shopify's requested cost, single-query limit, leaky bucket and bulk error codes.
const API_KEY = "fake-admin-test-key";
const SECRET = "fake-admin-test-secret";
const SHOP = "fake-admin-test.myshopify.com";

describe("the fake Shopify Admin", () => {
  let admin: FakeAdmin;
  let store: FakeStore;
  let token: string;
  beforeAll(async () => {
    admin = await startFakeAdmin({ apiKey: API_KEY, apiSecret: SECRET });
    store = await startFakeStore(admin, { customers: 3, products: 2, orders: 2 }, { concurrentExports: 1 });
    const exchanged = await fetch(`${admin.url}/admin/oauth/access_token?shop=${SHOP}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_id: API_KEY,
        client_secret: SECRET,
        subject_token: await mintSessionToken({ shop: SHOP, apiKey: API_KEY, secret: SECRET }),
        requested_token_type: "urn:shopify:params:oauth:token-type:offline-access-token",
      }),
    });
    token = ((await exchanged.json()) as { access_token: string }).access_token;
  });
  afterAll(async () => {
    await store.close();
    await admin.close();
  });

  async function graphql(query: string, variables: Record<string, unknown> = {}) {
    const res = await fetch(`${admin.url}/admin/api/2026-04/graphql.json?shop=${SHOP}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-shopify-access-token": token },
      body: JSON.stringify({ query, variables }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { data?: Record<string, unknown>; errors?: { message: string; extensions?: Record<string, unknown> }[]; extensions?: { cost: Record<string, unknown> } };
  }

  it("refuses an unknown field as Shopify does, before answering", async () => {
    const answer = await graphql("query CustomerEmail($id: ID!) { customer(id: $id) { emailAddressOops } }", { id: "gid://shopify/Customer/1" });
    expect(answer.data).toBeUndefined();
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: "Field 'emailAddressOops' doesn't exist on type 'Customer'",
        extensions: { code: "undefinedField", typeName: "Customer", fieldName: "emailAddressOops" },
      }),
    ]);
  });

  it("pages a segment's members with totalCount and cursors, and refuses a page size or segment it cannot serve", async () => {
    const shop = admin.shops.get(SHOP)!;
    shop.segments = [{ id: "gid://shopify/Segment/1", name: "VIP", query: "", creationDate: "2026-01-01T00:00:00Z", lastEditDate: "2026-01-01T00:00:00Z" }];
    shop.segmentMembers = { "gid://shopify/Segment/1": ["11", "12", "13"] };
    const members = `query M($segmentId: ID!, $after: String) { customerSegmentMembers(segmentId: $segmentId, first: 2, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } edges { node { id } } } }`;
    const first = await graphql(members, { segmentId: "gid://shopify/Segment/1" });
    const page1 = first.data!.customerSegmentMembers as { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: string } }[] };
    expect(page1.totalCount).toBe(3);
    expect(page1.edges.map((e) => e.node.id)).toEqual(["gid://shopify/CustomerSegmentMember/11", "gid://shopify/CustomerSegmentMember/12"]);
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const second = await graphql(members, { segmentId: "gid://shopify/Segment/1", after: page1.pageInfo.endCursor });
    expect(second.data!.customerSegmentMembers).toMatchObject({ totalCount: 3, pageInfo: { hasNextPage: false }, edges: [{ node: { id: "gid://shopify/CustomerSegmentMember/13" } }] });
    const unsized = await graphql(`{ customerSegmentMembers(segmentId: "gid://shopify/Segment/1") { totalCount } }`);
    expect(unsized.errors?.[0]?.message).toContain("first or last");
    const unknown = await graphql(members, { segmentId: "gid://shopify/Segment/2" });
    expect(unknown.errors?.[0]?.message).toContain("Segment does not exist");
  });

  it("webhook subscriptions: created and deleted as the 2026-04 schema has them, recorded per shop, with Shopify's user errors", async () => {
    const create = `mutation C($topic: WebhookSubscriptionTopic!, $uri: String!) {
      webhookSubscriptionCreate(topic: $topic, webhookSubscription: { uri: $uri, format: JSON }) { webhookSubscription { id topic uri } userErrors { field message } } }`;
    const uri = "https://app.example/webhooks";
    const made = await graphql(create, { topic: "CUSTOMER_JOINED_SEGMENT", uri });
    const created = made.data!.webhookSubscriptionCreate as { webhookSubscription: { id: string; topic: string; uri: string }; userErrors: unknown[] };
    expect(created).toMatchObject({ webhookSubscription: { topic: "CUSTOMER_JOINED_SEGMENT", uri }, userErrors: [] });
    // The same topic at the same address again; an address that is not HTTPS; a topic not in the enum.
    expect((await graphql(create, { topic: "CUSTOMER_JOINED_SEGMENT", uri })).data!.webhookSubscriptionCreate).toMatchObject({
      webhookSubscription: null,
      userErrors: [{ message: "Address for this topic has already been taken" }],
    });
    expect((await graphql(create, { topic: "CUSTOMER_LEFT_SEGMENT", uri: "http://app.example/webhooks" })).data!.webhookSubscriptionCreate).toMatchObject({
      webhookSubscription: null,
      userErrors: [{ message: "Address protocol http:// is not supported" }],
    });
    expect((await graphql(create, { topic: "CUSTOMER_JOINED", uri })).errors?.[0]?.message).toContain("WebhookSubscriptionTopic");
    const list = `{ webhookSubscriptions(first: 10, topics: [CUSTOMER_JOINED_SEGMENT, CUSTOMER_LEFT_SEGMENT]) { nodes { id topic uri } } }`;
    expect((await graphql(list)).data!.webhookSubscriptions).toEqual({ nodes: [created.webhookSubscription] });

    const remove = `mutation D($id: ID!) { webhookSubscriptionDelete(id: $id) { deletedWebhookSubscriptionId userErrors { field message } } }`;
    expect((await graphql(remove, { id: created.webhookSubscription.id })).data!.webhookSubscriptionDelete).toEqual({ deletedWebhookSubscriptionId: created.webhookSubscription.id, userErrors: [] });
    expect((await graphql(remove, { id: created.webhookSubscription.id })).data!.webhookSubscriptionDelete).toEqual({
      deletedWebhookSubscriptionId: null,
      userErrors: [{ field: ["id"], message: "Webhook subscription does not exist" }],
    });
    expect((await graphql(list)).data!.webhookSubscriptions).toEqual({ nodes: [] });
  });

  it("answers only the fields asked for, with the requested and actual cost and the bucket", async () => {
    const id = store.objects.orders[0]!.id as string;
    const answer = await graphql(`query LookupOrder($id: ID!) { order(id: $id) { id name lineItems(first: 50) { nodes { id quantity } } } }`, { id });
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual({ order: { id, name: store.objects.orders[0]!.name, lineItems: { nodes: [expect.objectContaining({ quantity: expect.any(Number) })] } } });
    expect(Object.keys((answer.data!.order as { lineItems: { nodes: object[] } }).lineItems.nodes[0]!).sort()).toEqual(["id", "quantity"]);
    // Requested 1 + (2 + 50 × 1); actual: the one line item returned, 1 + (2 + 1).
    expect(answer.extensions?.cost).toMatchObject({ requestedQueryCost: 53, actualQueryCost: 4, throttleStatus: { maximumAvailable: 1_000, restoreRate: 100 } });
  });

  it("refuses a query requesting more than 1,000 points with MAX_COST_EXCEEDED", async () => {
    const answer = await graphql(`{ orders(first: 10) { nodes { id lineItems(first: 250) { nodes { id product { id } } } } } }`);
    expect(answer.data).toBeUndefined();
    expect(answer.errors?.[0]).toMatchObject({ extensions: { code: "MAX_COST_EXCEEDED", cost: 5_032, maxCost: 1_000 } });
    expect(answer.errors?.[0]?.message).toMatch(/^Query cost is 5032, which exceeds the single query max cost limit \(1000\)/);
  });

  it("throttles by the leaky bucket: THROTTLED with the requested cost and the bucket's state", async () => {
    admin.throttle({ currentlyAvailable: 100, restoreRate: 0 });
    try {
      const answer = await graphql(`{ orders(first: 100) { nodes { id customer { id } } } }`);
      expect(answer.data).toBeUndefined();
      expect(answer.errors).toEqual([expect.objectContaining({ message: "Throttled", extensions: expect.objectContaining({ code: "THROTTLED" }) })]);
      expect(answer.extensions?.cost).toEqual({
        requestedQueryCost: 202,
        actualQueryCost: null,
        throttleStatus: { maximumAvailable: 1_000, currentlyAvailable: 100, restoreRate: 0 },
      });
    } finally {
      admin.throttle({ currentlyAvailable: 1_000, restoreRate: 100 });
    }
  });

  it("refuses a second bulk query while one runs with BulkOperationUserErrorCode OPERATION_IN_PROGRESS", async () => {
    const run = `mutation RunBulk($query: String!) { bulkOperationRunQuery(query: $query, groupObjects: true) { bulkOperation { id } userErrors { field message code } } }`;
    const first = await graphql(run, { query: "{ customers { edges { node { id } } } }" });
    expect(first.data).toMatchObject({ bulkOperationRunQuery: { bulkOperation: { id: expect.any(String) }, userErrors: [] } });
    const second = await graphql(run, { query: "{ products { edges { node { id } } } }" });
    expect(second.data).toMatchObject({ bulkOperationRunQuery: { bulkOperation: null, userErrors: [{ code: "OPERATION_IN_PROGRESS" }] } });
    expect(second.extensions?.cost).toMatchObject({ requestedQueryCost: 10 });
  });

  it("refuses a bulk query the schema refuses with BulkOperationUserErrorCode INVALID", async () => {
    const answer = await graphql(`mutation RunBulk($query: String!) { bulkOperationRunQuery(query: $query) { bulkOperation { id } userErrors { field code } } }`, {
      query: "{ customers { edges { node { id email featuredOops } } } }",
    });
    expect(answer.data).toEqual({ bulkOperationRunQuery: { bulkOperation: null, userErrors: [{ field: ["query"], code: "INVALID" }] } });
  });

  it("lists what it received at GET /__requests: operation name, variables and time, narrowed by ?operation=", async () => {
    const before = new Date().toISOString();
    await graphql(`query CustomerEmail($id: ID!) { customer(id: $id) { id } }`, { id: "gid://shopify/Customer/77" });
    const res = await fetch(`${admin.url}/__requests?operation=CustomerEmail&shop=${SHOP}`);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { at: string; shop: string; operation: string; variables: Record<string, unknown> }[] };
    const mine = data.filter((r) => r.variables.id === "gid://shopify/Customer/77");
    expect(mine).toEqual([{ at: expect.any(String), shop: SHOP, operation: "CustomerEmail", variables: { id: "gid://shopify/Customer/77" } }]);
    expect(mine[0]!.at >= before).toBe(true);
    expect(data.every((r) => r.operation === "CustomerEmail")).toBe(true);
    // The access token is never listed.
    expect(JSON.stringify(await (await fetch(`${admin.url}/__requests`)).json())).not.toContain(token);
  });

  it("reset forgets a test's resolvers and throttling, and answers from the schema again", async () => {
    const shopQuery = `query ShopName { shop { name } }`;
    const before = await graphql(shopQuery);
    admin.onGraphql("ShopName", () => ({ shop: { name: "set up by a test" } }));
    admin.throttle({ currentlyAvailable: 0, restoreRate: 0 });
    expect((await graphql(shopQuery)).errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "THROTTLED" }) })]);
    admin.reset();
    const after = await graphql(shopQuery);
    expect(after.data).toEqual(before.data);
    expect(after.extensions?.cost).toMatchObject({ throttleStatus: { maximumAvailable: 1_000, restoreRate: 100 } });
  });
});
