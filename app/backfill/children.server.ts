/**
 * An object's children (an order's line items, a product's variants) as the Admin GraphQL API
 * nests them: a connection of at most `first` nodes. An object is only ever sent whole, so the
 * pages past the first are fetched while Shopify says there are more (pageInfo.hasNextPage).
 */
import { z } from "zod";
import { adminQuery } from "../shopify/admin-api.server";
import { CONTRACT_LINE_FIELDS, LINE_ITEM_FIELDS, VARIANT_FIELDS } from "./fields";

/**
 * The first page, asked for inside the object's own query. Page sizes are chosen by Shopify's
 * requested cost (docs/shopify-graphql.md): a line item costs 5 points, a variant 2, and the app's
 * queries request at most 900 of Shopify's 1,000 (test/foundation/admin-graphql.test.ts holds every
 * query to it): Shopify adds per-field costs its documented rules do not show.
 */
export const FIRST_LINE_ITEMS = `lineItems(first: 50) { pageInfo { hasNextPage endCursor } nodes { ${LINE_ITEM_FIELDS} } }`;
export const FIRST_VARIANTS = `variants(first: 50) { pageInfo { hasNextPage endCursor } nodes { ${VARIANT_FIELDS} } }`;
export const FIRST_CONTRACT_LINES = `lines(first: 50) { pageInfo { hasNextPage endCursor } nodes { ${CONTRACT_LINE_FIELDS} } }`;

// The pages after the first: as many children as 900 points allow (179 line items: 4 + 5 × 179 =
// 899; 250 variants, Shopify's largest page: 4 + 2 × 250 = 504). The size is the `$first`
// variable's default, halved when Shopify still refuses the cost (app/shopify/admin-api.server.ts).
const NEXT_PAGES = {
  lineItems: {
    query: `#graphql
      query OrderLineItems($id: ID!, $after: String, $first: Int = 179) {
        order(id: $id) { lineItems(first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${LINE_ITEM_FIELDS} } } }
      }`,
    owner: "order",
  },
  variants: {
    query: `#graphql
      query ProductVariants($id: ID!, $after: String, $first: Int = 250) {
        product(id: $id) { variants(first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${VARIANT_FIELDS} } } }
      }`,
    owner: "product",
  },
  // A contract line costs 3 (line, price, image): 4 + 3 × 250 = 754.
  lines: {
    query: `#graphql
      query SubscriptionContractLines($id: ID!, $after: String, $first: Int = 250) {
        subscriptionContract(id: $id) { lines(first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${CONTRACT_LINE_FIELDS} } } }
      }`,
    owner: "subscriptionContract",
  },
} as const;

const connection = z.object({
  nodes: z.array(z.unknown()),
  pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }).nullish(),
});

export class ObjectGone extends Error {
  override readonly name = "ObjectGone";
}

/** All the children of `node` under `field`: the nodes it carries, then the pages after them. */
export async function allChildren(
  shop: string,
  node: Record<string, unknown>,
  field: keyof typeof NEXT_PAGES,
  options: { maxWaitMs?: number } = {},
): Promise<unknown[]> {
  const first = connection.safeParse(node[field]);
  if (!first.success) return [];
  return pagesAfter(shop, node.id, field, first.data.nodes, first.data.pageInfo, options);
}

/** Every child of the object `id` (a product's variants, say), read from the first page on. */
export function everyChild(shop: string, id: string, field: keyof typeof NEXT_PAGES, options: { maxWaitMs?: number } = {}): Promise<unknown[]> {
  return pagesAfter(shop, id, field, [], { hasNextPage: true, endCursor: null }, options);
}

async function pagesAfter(
  shop: string,
  id: unknown,
  field: keyof typeof NEXT_PAGES,
  carried: unknown[],
  pageInfo: z.infer<typeof connection>["pageInfo"],
  options: { maxWaitMs?: number },
): Promise<unknown[]> {
  const node = { id };
  const nodes = [...carried];
  let page = pageInfo;
  const next = NEXT_PAGES[field];
  for (let reads = 0; page?.hasNextPage; reads++) {
    // No cursor: the first page (nothing read yet).
    if (!page.endCursor && (nodes.length || reads > 0)) throw new Error(`Shopify said ${String(node.id)} has more ${field} but gave no cursor`);
    const data = await adminQuery(shop, next.query, { id: node.id, after: page.endCursor ?? null }, { maxWaitMs: options.maxWaitMs, pageVariable: "first" });
    const owner = z.record(z.string(), z.looseObject({}).nullable()).parse(data)[next.owner];
    // Deleted meanwhile: never sent with part of its children; the step is retried.
    if (!owner) throw new ObjectGone(`${String(node.id)} is no longer in Shopify while its ${field} were read`);
    const more = connection.parse(owner[field]);
    nodes.push(...more.nodes);
    page = more.pageInfo;
  }
  return nodes;
}
