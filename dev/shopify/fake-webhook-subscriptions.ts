/**
 * The fake Admin's per-shop webhook subscriptions: QueryRoot.webhookSubscriptions (an app sees its
 * own, filtered by `topics`), Mutation.webhookSubscriptionCreate and webhookSubscriptionDelete,
 * as Shopify's kept schema has them (shopify-schema/: the topic is a WebhookSubscriptionTopic,
 * the endpoint `uri`, `callbackUrl` deprecated for it; answers carry userErrors).
 *
 * Shopify's rules modelled (shopify.dev webhookSubscriptionCreate / webhookSubscriptionDelete,
 * read 2026-11-28): one subscription per topic and address ("Address for this topic has already
 * been taken"), an address is required, an HTTPS URL (loopback http is let through here only
 * because the tests' app listens on 127.0.0.1 without TLS), and deleting an unknown id is a user
 * error, not a success. Uninstalling the app drops a shop's subscriptions (Shopify removes an
 * app's shop-specific subscriptions with it): see `forgetSubscriptions`.
 */

export interface FakeWebhookSubscription {
  id: string;
  topic: string;
  uri: string;
  format: string;
  createdAt: string;
}

interface GraphqlHost {
  onGraphql(match: string, resolver: (query: string, variables: Record<string, unknown>, shop: string) => unknown): void;
}

const installed = new WeakMap<GraphqlHost, Map<string, FakeWebhookSubscription[]>>();

/** A shop's webhook subscriptions made through the Admin API (empty for a shop with none). */
export function webhookSubscriptions(admin: GraphqlHost, shop: string): FakeWebhookSubscription[] {
  return installed.get(admin)?.get(shop) ?? [];
}

/** What uninstalling does to them (the fake Admin's uninstall). */
export function forgetSubscriptions(admin: GraphqlHost, shop: string): void {
  installed.get(admin)?.delete(shop);
}

function addressProblem(uri: string | null | undefined): string | null {
  if (!uri) return "Address can't be blank";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "Address is invalid";
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) return null;
  return `Address protocol ${url.protocol}// is not supported`;
}

export function installWebhookSubscriptionResolvers(admin: GraphqlHost): void {
  const byShop = new Map<string, FakeWebhookSubscription[]>();
  installed.set(admin, byShop);
  let next = 1;
  const of = (shop: string) => {
    if (!byShop.has(shop)) byShop.set(shop, []);
    return byShop.get(shop)!;
  };
  const shape = (s: FakeWebhookSubscription) => ({
    ...s,
    callbackUrl: s.uri,
    updatedAt: s.createdAt,
    includeFields: [],
    metafieldNamespaces: [],
    metafields: [],
    filter: null,
    name: null,
    legacyResourceId: s.id.split("/").pop(),
  });

  admin.onGraphql("webhookSubscriptions(", (_q, _v, shop) => ({
    webhookSubscriptions: (args: { first?: number | null; last?: number | null; topics?: string[] | null; uri?: string | null }) => {
      if (args.first == null && args.last == null) throw new Error("you must provide one of first or last");
      const all = of(shop).filter((s) => (!args.topics || args.topics.includes(s.topic)) && (!args.uri || args.uri === s.uri));
      const page = all.slice(0, args.first ?? args.last ?? 0).map(shape);
      return {
        nodes: page,
        edges: page.map((node) => ({ node, cursor: Buffer.from(node.id).toString("base64url") })),
        pageInfo: { hasNextPage: all.length > page.length, hasPreviousPage: false, startCursor: null, endCursor: null },
      };
    },
  }));

  admin.onGraphql("webhookSubscriptionCreate(", (_q, _v, shop) => ({
    webhookSubscriptionCreate: (args: { topic: string; webhookSubscription: { uri?: string | null; callbackUrl?: string | null; format?: string | null } }) => {
      const uri = args.webhookSubscription.uri ?? args.webhookSubscription.callbackUrl;
      const problem = addressProblem(uri);
      if (problem) return { webhookSubscription: null, userErrors: [{ field: ["webhookSubscription", "uri"], message: problem }] };
      if (of(shop).some((s) => s.topic === args.topic && s.uri === uri)) {
        return { webhookSubscription: null, userErrors: [{ field: ["webhookSubscription", "uri"], message: "Address for this topic has already been taken" }] };
      }
      const created: FakeWebhookSubscription = {
        id: `gid://shopify/WebhookSubscription/${next++}`,
        topic: args.topic,
        uri: uri!,
        format: args.webhookSubscription.format ?? "JSON",
        createdAt: new Date().toISOString(),
      };
      of(shop).push(created);
      return { webhookSubscription: shape(created), userErrors: [] };
    },
  }));

  admin.onGraphql("webhookSubscriptionDelete(", (_q, _v, shop) => ({
    webhookSubscriptionDelete: (args: { id: string }) => {
      const list = of(shop);
      const index = list.findIndex((s) => s.id === args.id);
      if (index < 0) return { deletedWebhookSubscriptionId: null, userErrors: [{ field: ["id"], message: "Webhook subscription does not exist" }] };
      list.splice(index, 1);
      return { deletedWebhookSubscriptionId: args.id, userErrors: [] };
    },
  }));
}
