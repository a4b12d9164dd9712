import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  bodyShopFields,
  isKnownTopic,
  kindOf,
  normalizeTopic,
  topicInfo,
  topicLabel,
  TOPICS,
  topicsThroughAdminApi,
  topicsWithRole,
  type SyncTopicEntry,
} from "~/sync/topics.server";
import { HANDLED_TOPICS, planWebhook } from "~/sync/plan-webhook";
import { defaultSettings } from "~/sync/settings";
import { FIXTURES_DIR } from "../support/webhooks";

const toml = readFileSync(path.resolve(import.meta.dirname, "../../shopify.app.toml"), "utf8");
const listed = (key: string) =>
  [...toml.matchAll(new RegExp(`^\\s*${key} = \\[([^\\]]*)\\]`, "gm"))].flatMap((m) => [...m[1].matchAll(/"([^"]+)"/g)].map((t) => t[1]));

/**
 * Where Shopify lets an app subscribe to each topic (available_on: toml, graphql, rest), from its
 * topic metadata, kept in the repository (the tests have no network); the file names its source.
 * `npm run shopify:upgrade` replaces it where the public dataset has the new version; until then
 * the newest one kept stands for the toml's version (never a newer one).
 */
const fixtures = path.resolve(import.meta.dirname, "../fixtures");
const metadataFile = readdirSync(fixtures).filter((f) => /^shopify-topic-metadata\.\d{4}-\d{2}\.json$/.test(f)).sort().at(-1)!;
const metadata = JSON.parse(readFileSync(path.join(fixtures, metadataFile), "utf8")) as {
  apiVersion: string;
  availableOn: Record<string, string[]>;
};
const tomlApiVersion = /^api_version = "(\d{4}-\d{2})"/m.exec(toml)![1];

describe("the topic registry", () => {
  it("is what shopify.app.toml subscribes to, and the Admin API subscriptions the app makes", () => {
    expect(new Set([...listed("topics"), ...listed("compliance_topics"), ...topicsThroughAdminApi()])).toEqual(new Set(Object.keys(TOPICS)));
    expect(new Set(listed("compliance_topics"))).toEqual(new Set(topicsWithRole("compliance")));
    expect(topicsThroughAdminApi()).toEqual(["customer.joined_segment", "customer.left_segment"]);
    for (const topic of topicsThroughAdminApi()) expect(listed("topics"), topic).not.toContain(topic);
  });

  it("declares each topic where Shopify's topic metadata says it may be: toml topics in the toml, the others through GraphQL", () => {
    expect(metadataFile).toBe(`shopify-topic-metadata.${metadata.apiVersion}.json`);
    expect(metadata.apiVersion <= tomlApiVersion, `metadata ${metadata.apiVersion}, toml ${tomlApiVersion}`).toBe(true);
    for (const topic of [...listed("topics"), ...listed("compliance_topics")]) {
      expect(metadata.availableOn[topic], `${topic}: Shopify's ${metadata.apiVersion} metadata`).toContain("toml");
    }
    for (const topic of topicsThroughAdminApi()) expect(metadata.availableOn[topic], topic).toContain("graphql");
  });

  it("every sync topic is planned by a mapper (none falls through to 'not synced')", () => {
    const ctx = { shopDomain: "s.myshopify.com", storefrontUrl: "https://s.example", settings: defaultSettings, now: new Date(), prior: null };
    for (const topic of HANDLED_TOPICS) {
      const body = readFileSync(path.join(FIXTURES_DIR, `${topic.replace("/", ".")}.json`), "utf8");
      expect(planWebhook(topic, body, ctx).skipped ?? "", topic).not.toMatch(/is not synced/);
    }
  });

  it("every topic has a label in the merchant's words, and every sync topic a planner", () => {
    for (const [topic, entry] of Object.entries(TOPICS)) {
      expect(entry.label.trim(), topic).not.toBe("");
      expect(entry.label, topic).not.toContain("/");
      if (entry.role === "sync") expect(typeof entry.planner, topic).toBe("function");
    }
    // The type holds it at compile time too (npx tsc): a sync line without its planner is refused.
    // @ts-expect-error a sync topic must name its planner
    const missing: SyncTopicEntry = { kind: "order", role: "sync", label: "Order archived" };
    expect(missing).toBeDefined();
  });

  it("buckets topics and object keys by kind", () => {
    expect(kindOf("refunds/create")).toBe("order");
    expect(kindOf("customers_email_marketing_consent/update")).toBe("customer");
    expect(kindOf("checkout:abc")).toBe("checkout");
    expect(kindOf("shop/redact")).toBe("privacy");
    expect(kindOf("nonsense/topic")).toBe("other");
    expect(kindOf("app/uninstalled")).toBe("app");
    expect(kindOf("bulk_operations/finish")).toBe("bulk");
    const keys = ["customer:1", "order:2", "product:3", "cart:c1", "checkout:abc", "subscription:9", "unhandled:fulfillments/create"];
    expect(keys.map(kindOf)).toEqual(["customer", "order", "product", "cart", "checkout", "subscription", "other"]);
  });
});

describe("reading a topic name", () => {
  it("accepts Shopify's spelling in any case and the fixture files' dotted names", () => {
    expect(normalizeTopic(" ORDERS/CREATE ")).toBe("orders/create");
    expect(normalizeTopic("orders.create")).toBe("orders/create");
    expect(normalizeTopic("subscription_billing_attempts.success")).toBe("subscription_billing_attempts/success");
    expect(normalizeTopic("a.b.c")).toBe("a/b/c");
  });

  it("keeps the topics Shopify itself names with a dot", () => {
    expect(normalizeTopic("customer.tags_added")).toBe("customer.tags_added");
    expect(normalizeTopic("Customer.Joined_Segment")).toBe("customer.joined_segment");
  });

  it("knows only the registry's own topics, as written", () => {
    expect(isKnownTopic("orders/create")).toBe(true);
    expect(isKnownTopic("ORDERS/CREATE")).toBe(false);
    expect(isKnownTopic("toString")).toBe(false);
    expect(topicInfo("Orders.Create")?.label).toBe("New order");
    expect(topicInfo("fulfillments/create")).toBeUndefined();
  });

  it("shows a topic in the merchant's words, and one the app does not subscribe to as it is", () => {
    expect(topicLabel("customers/create")).toBe("New customer");
    expect(topicLabel("customers.create")).toBe("New customer");
    expect(topicLabel("fulfillments/create")).toBe("fulfillments/create");
  });
});

describe("topic roles", () => {
  it("lists the topics of each role", () => {
    expect(topicsWithRole("lifecycle")).toEqual(["app/uninstalled", "app/scopes_update"]);
    expect(topicsWithRole("compliance")).toEqual(["customers/data_request", "customers/redact", "shop/redact"]);
    expect(topicsWithRole("bulk")).toEqual(["bulk_operations/finish"]);
    expect(new Set(topicsWithRole("sync"))).toEqual(new Set(HANDLED_TOPICS));
  });

  it("names the body fields that must agree with the shop header, for lifecycle and compliance topics only", () => {
    expect(bodyShopFields("app/uninstalled")).toEqual(["myshopify_domain", "domain"]);
    expect(bodyShopFields("app/scopes_update")).toEqual(["shop_domain", "myshopify_domain", "domain"]);
    for (const topic of ["customers/data_request", "customers/redact", "shop/redact"]) expect(bodyShopFields(topic), topic).toEqual(["shop_domain"]);
    for (const topic of ["orders/create", "bulk_operations/finish", "fulfillments/create"]) expect(bodyShopFields(topic), topic).toEqual([]);
  });

  it("says what a sync topic needs looked up when its object is unknown, and nothing for one that carries it whole", () => {
    expect(TOPICS["customers/create"]).toMatchObject({ role: "sync", kind: "customer", lookup: "Customer without consent" });
    expect(TOPICS["refunds/create"]).toMatchObject({ role: "sync", kind: "order", lookup: "Order" });
    expect(TOPICS["orders/create"]).not.toHaveProperty("lookup");
    expect(TOPICS["customers/redact"]).toMatchObject({ role: "compliance", kind: "privacy" });
    expect(TOPICS["app/uninstalled"]).toMatchObject({ role: "lifecycle", kind: "app" });
  });
});
