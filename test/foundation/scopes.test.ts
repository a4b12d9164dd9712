import { readFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { buildClientSchema, getNamedType, parse, TypeInfo, visit, visitWithTypeInfo, type IntrospectionQuery } from "graphql";
import { describe, expect, it } from "vitest";
import { bulkQuery } from "~/backfill/backfill.server";
import { topicsThroughAdminApi } from "~/sync/topics.server";
import { appGraphqlDocuments } from "../support/graphql-documents";

/**
 * The access scopes in shopify.app.toml, held to Shopify's own schema for the app's API version:
 * every field the app's GraphQL documents read or change, and every webhook topic it subscribes
 * to, has its scope (nothing missing: Shopify would answer ACCESS_DENIED or never deliver), and
 * every scope asked for is required by one of them (nothing unused: the merchant is asked for
 * no more than the app reads, and Shopify's review refuses scopes without a use).
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const toml = readFileSync(path.join(ROOT, "shopify.app.toml"), "utf8");
const apiVersion = /^api_version\s*=\s*"([^"]+)"/m.exec(toml)![1];
const introspection = JSON.parse(gunzipSync(readFileSync(path.join(ROOT, `shopify-schema/admin_${apiVersion}.json.gz`))).toString("utf8")).data as IntrospectionQuery;
const schema = buildClientSchema(introspection);
const granted = /^scopes\s*=\s*"([^"]*)"/m.exec(toml)![1].split(",");

// Shopify's extension of introspection: `requiredAccess` on types and fields (text naming the scopes).
type Access = { requiredAccess?: string | null };
const rawTypes = new Map(introspection.__schema.types.map((t) => [t.name, t as typeof t & Access & { fields?: (Access & { name: string })[] | null; enumValues?: { name: string; description?: string | null }[] | null }]));

/** Every scope a piece of Shopify's text names. */
function scopesIn(text: string): string[] {
  return [...new Set(text.match(/\b(?:read|write|unauthenticated_read|unauthenticated_write)_[a-z_]+/g) ?? [])];
}

/**
 * What a `requiredAccess` text asks for: one of the scopes before "Also:" ("`a` access scope or
 * `b` access scope"), and each scope named after it ("Also: The app requires read_customer_events").
 */
function requirementsIn(what: string, text: string | null | undefined): Requirement[] {
  if (!text) return [];
  const [main, also = ""] = text.split(/Also:/);
  const anyOf = scopesIn(main);
  return [...(anyOf.length ? [{ what, anyOf }] : []), ...scopesIn(also).map((s) => ({ what: `${what} (also)`, anyOf: [s] }))];
}

interface Requirement {
  what: string;
  anyOf: string[];
}

/** Shopify: a write scope includes its read scope. */
const grants = (scope: string, needed: string) => scope === needed || (needed.startsWith("read_") && scope === `write_${needed.slice(5)}`);
const satisfiedBy = (r: Requirement) => granted.filter((g) => r.anyOf.some((n) => grants(g, n)));

/** The app's GraphQL documents (found and resolved as the schema test finds them), and the bulk exports' queries. */
function documents(): { file: string; text: string }[] {
  const out = appGraphqlDocuments().map((d) => {
    if (d.text === undefined) throw new Error(`${d.file}:${d.line}: ${d.unresolved}`);
    return { file: `${d.file}:${d.line}`, text: d.text };
  });
  for (const kind of ["customers", "products", "orders"] as const) out.push({ file: `bulk export of ${kind}`, text: bulkQuery(kind, new Date("2026-01-01T00:00:00Z")) });
  return out;
}

/** Protected customer data the documents read (Shopify's `isProtected` fields), as "subject.content". */
const protectedRead = new Set<string>();

function documentRequirements(): Requirement[] {
  const found: Requirement[] = [];
  for (const doc of documents()) {
    const info = new TypeInfo(schema);
    visit(
      parse(doc.text),
      visitWithTypeInfo(info, {
        Field() {
          const parent = info.getParentType();
          const def = info.getFieldDef();
          if (!parent || !def) return;
          const field = rawTypes.get(parent.name)?.fields?.find((f) => f.name === def.name);
          const named = getNamedType(def.type);
          found.push(
            ...requirementsIn(`${doc.file}: ${parent.name}.${def.name}`, field?.requiredAccess),
            ...requirementsIn(`${doc.file}: ${named.name}`, rawTypes.get(named.name)?.requiredAccess),
          );
          const p = field as { isProtected?: boolean; protectedSubject?: string; protectedContent?: string } | undefined;
          if (p?.isProtected) protectedRead.add(`${p.protectedSubject}.${p.protectedContent}`);
        },
      }),
    );
  }
  return found;
}

/** The topics subscribed to in shopify.app.toml, and those made per shop through the Admin API (compliance topics need no scope). */
function topics(): string[] {
  const block = /\[\[webhooks\.subscriptions\]\]\s*topics\s*=\s*\[([^\]]*)\]/m.exec(toml)![1];
  return [...[...block.matchAll(/"([^"]+)"/g)].map((m) => m[1]), ...topicsThroughAdminApi()];
}

function topicRequirements(): Requirement[] {
  const values = rawTypes.get("WebhookSubscriptionTopic")!.enumValues!;
  return topics().flatMap((topic) => {
    const value = values.find((v) => v.name === topic.replace(/[/.]/g, "_").toUpperCase());
    if (!value) throw new Error(`${topic} is not a webhook topic of API ${apiVersion}`);
    const text = /Requires (.*)$/s.exec(value.description ?? "")?.[1];
    const anyOf = text ? scopesIn(text) : [];
    return anyOf.length ? [{ what: `webhook ${topic}`, anyOf }] : [];
  });
}

/** Scopes whose need the schema states in prose, not as a field's requirement. */
const BEYOND_FIELDS: Record<string, () => boolean> = {
  // Orders older than 60 days (Order's description); without it the history import takes 60 days.
  read_all_orders: () => (rawTypes.get("Order")?.description ?? "").includes("read_all_orders"),
  // The storefront's app proxy ([app_proxy] in shopify.app.toml); not a GraphQL field.
  write_app_proxy: () => /^\[app_proxy\]/m.test(toml),
};

describe(`access scopes against Shopify's schema (${apiVersion})`, () => {
  const requirements = [...documentRequirements(), ...topicRequirements()];

  it("finds the app's documents and topics (the test reads what it should)", () => {
    expect(documents().length).toBeGreaterThanOrEqual(15);
    expect(topics()).toContain("orders/create");
    expect(requirements.some((r) => r.what.startsWith("webhook subscription_contracts/"))).toBe(true);
  });

  it("asks for every scope a query, mutation or subscribed topic requires", () => {
    const missing = requirements.filter((r) => satisfiedBy(r).length === 0).map((r) => `${r.what} needs one of ${r.anyOf.join(", ")}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it("asks for no scope that nothing requires", () => {
    const used = new Set(requirements.flatMap((r) => satisfiedBy(r).slice(0, 1)));
    const unused = granted.filter((g) => !used.has(g) && !BEYOND_FIELDS[g]?.());
    expect(unused).toEqual([]);
  });

  it("names in docs/shopify-requirements.md every protected customer field the app reads", () => {
    const doc = readFileSync(path.join(ROOT, "docs/shopify-requirements.md"), "utf8");
    expect(protectedRead.size).toBeGreaterThan(0);
    expect([...protectedRead].filter((p) => !doc.includes(`\`${p}\``))).toEqual([]);
  });

  it("asks only for scopes that exist", () => {
    const known = new Set(
      introspection.__schema.types.flatMap((t) => [
        ...scopesIn((t as Access).requiredAccess ?? ""),
        ...((rawTypes.get(t.name)?.fields ?? []).flatMap((f) => scopesIn(f.requiredAccess ?? ""))),
        ...((rawTypes.get(t.name)?.enumValues ?? []).flatMap((v) => scopesIn(v.description ?? ""))),
      ]),
    );
    expect(granted.filter((g) => !known.has(g) && !(g in BEYOND_FIELDS))).toEqual([]);
  });
});
