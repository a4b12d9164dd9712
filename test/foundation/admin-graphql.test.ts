import { parse, validate } from "graphql";
import { describe, expect, it } from "vitest";
import { bulkQuery } from "~/backfill/backfill.server";
import { BACKFILL_KINDS } from "~/backfill/convert";
import { adminSchema } from "../../dev/shopify/admin-schema";
import { MAX_COST, queryCost } from "../../dev/shopify/query-cost";
import { appGraphqlDocuments, deprecatedUses } from "../support/graphql-documents";

// Every Admin GraphQL document the app sends, held to Shopify's 2026-04 schema (shopify-schema/)
// and to 900 of Shopify's 1,000-point limit by its documented cost rules (Shopify adds per-field
// costs those rules do not show), so a document Shopify would refuse fails here, not in a
// merchant's store. See docs/shopify-graphql.md.
const documents = appGraphqlDocuments();
const APP_MAX_COST = 900;

describe("the app's Admin GraphQL documents", () => {
  it("are all found and resolved to their text (written from string constants)", () => {
    expect(documents.filter((d) => d.unresolved).map((d) => `${d.file}:${d.line}: ${d.unresolved}`)).toEqual([]);
    // The app's known operations are among them (a broken finder would find none).
    const names = documents.map((d) => /(?:query|mutation)\s+(\w+)/.exec(d.text ?? "")?.[1]);
    for (const name of ["LookupOrder", "ReconcileOrders", "OrderLineItems", "RunBulk", "CustomerEmail", "ShopProfile"]) expect(names).toContain(name);
  });

  for (const d of documents.filter((x) => x.text)) {
    const name = /(?:query|mutation)\s+(\w+)/.exec(d.text!)?.[1] ?? `${d.file}:${d.line}`;
    it(`${name} (${d.file}:${d.line}) is valid against Shopify's schema, uses no deprecated field and requests at most ${APP_MAX_COST} of Shopify's ${MAX_COST} points`, () => {
      const document = parse(d.text!);
      expect(validate(adminSchema(), document).map((e) => e.message)).toEqual([]);
      expect(deprecatedUses(adminSchema(), document)).toEqual([]);
      // Page sizes are written into the documents (literals or variables' defaults): the cost needs no variables.
      expect(queryCost(adminSchema(), document).requested).toBeLessThanOrEqual(APP_MAX_COST);
    });
  }

  it("the bulk export of each kind is valid against the schema and uses no deprecated field", () => {
    for (const kind of BACKFILL_KINDS) {
      for (const since of [null, new Date("2026-01-01T00:00:00Z")]) {
        const document = parse(bulkQuery(kind, since));
        expect(validate(adminSchema(), document).map((e) => e.message), kind).toEqual([]);
        expect(deprecatedUses(adminSchema(), document), kind).toEqual([]);
      }
    }
  });
});

describe("Shopify's requested cost (dev/shopify/query-cost.ts)", () => {
  const cost = (query: string, variables: Record<string, unknown> = {}) => queryCost(adminSchema(), parse(query), variables).requested;

  it("follows shopify.dev's rules: scalars 0, objects 1, connections 2 + first × node, mutations 10", () => {
    expect(cost("{ shop { name ianaTimezone } }")).toBe(1);
    expect(cost("{ shop { name primaryDomain { url } } }")).toBe(2);
    // 2 + 10 × (Product 1 + featuredMedia 1 + preview 1 + image 1) + pageInfo 1
    expect(cost("{ products(first: 10) { pageInfo { hasNextPage } nodes { title featuredMedia { preview { image { url } } } } } }")).toBe(43);
    expect(cost("{ products(first: 10) { edges { cursor node { title } } } }")).toBe(12);
    expect(cost("query($n: Int!) { products(first: $n) { nodes { id } } }", { n: 5 })).toBe(7);
    // Nested connections multiply: 2 + 3 × (1 + 2 + 4 × 1)
    expect(cost("{ orders(first: 3) { nodes { id lineItems(first: 4) { nodes { id } } } } }")).toBe(23);
    // An interface: the most expensive of its possible selections.
    expect(cost('{ node(id: "gid://shopify/BulkOperation/1") { ... on BulkOperation { id url } ... on Order { customer { id } } } }')).toBe(2);
    expect(cost('mutation { bulkOperationRunQuery(query: "{ shop { id } }") { bulkOperation { id } userErrors { code } } }')).toBe(10);
  });

  it("gives the costs the issue measured for the documents as they were (ReconcileOrders 2,673, OrderLineItems 1,254)", () => {
    const address = "firstName lastName company address1 address2 city province provinceCode zip country countryCodeV2 phone";
    const money = "shopMoney { amount currencyCode }";
    const lineItems = `id name title sku vendor quantity originalUnitPriceSet { ${money} } product { id } variant { id }`;
    const order = `id name email createdAt totalPriceSet { ${money} } subtotalPriceSet { ${money} } totalTaxSet { ${money} }
      totalDiscountsSet { ${money} } totalShippingPriceSet { ${money} } customer { id } billingAddress { ${address} } shippingAddress { ${address} }`;
    expect(cost(`{ orders(first: 10) { pageInfo { hasNextPage endCursor } nodes { ${order} lineItems(first: 50) { pageInfo { hasNextPage endCursor } nodes { ${lineItems} } } } } }`)).toBe(2_673);
    expect(cost(`{ order(id: "gid://shopify/Order/1") { lineItems(first: 250) { pageInfo { hasNextPage endCursor } nodes { ${lineItems} } } } }`)).toBe(1_254);
  });
});
