import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { kindOf, TOPICS, topicsWithRole, type SyncTopicEntry } from "~/sync/topics.server";
import { HANDLED_TOPICS, planWebhook } from "~/sync/plan";
import { defaultSettings } from "~/sync/settings";
import { FIXTURES_DIR } from "../support/webhooks";

const toml = readFileSync(path.resolve(import.meta.dirname, "../../shopify.app.toml"), "utf8");
const listed = (key: string) =>
  [...toml.matchAll(new RegExp(`^\\s*${key} = \\[([^\\]]*)\\]`, "gm"))].flatMap((m) => [...m[1].matchAll(/"([^"]+)"/g)].map((t) => t[1]));

describe("the topic registry", () => {
  it("is exactly what shopify.app.toml subscribes to", () => {
    expect(new Set([...listed("topics"), ...listed("compliance_topics")])).toEqual(new Set(Object.keys(TOPICS)));
    expect(new Set(listed("compliance_topics"))).toEqual(new Set(topicsWithRole("compliance")));
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
  });
});
