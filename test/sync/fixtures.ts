/**
 * Shared helpers for the sync golden tests: fixture loading, a default context, call validation,
 * and builders for the messy variations real deliveries have.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { serviceCallSchema, type ServiceCall } from "../../app/services/marketing/schemas";
import { parseShopifyJson } from "../../app/sync/json";
import { decide, type ObjectMemory } from "../../app/pipeline/decide";
import { planWebhook } from "../../app/sync/plan-webhook";
import type { ObjectSyncState, SyncContext, SyncPlan } from "../../app/sync/plan-contract";
import { normalizeTopic } from "../../app/sync/topics.server";
import { defaultSettings, type ShopSettings } from "../../app/sync/settings";

/** Loose JSON for deep assertions on plain bodies (tests only). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export { FIXTURES_DIR as FIXTURE_DIR } from "../../dev/shopify/webhooks";
import { FIXTURES_DIR as FIXTURE_DIR } from "../../dev/shopify/webhooks";

/** Every fixture: file "orders.create.json" ↔ topic "orders/create". */
export function listFixtures(): Array<{ file: string; topic: string }> {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, topic: normalizeTopic(file.replace(/\.json$/, "")) }));
}

export function fixtureText(topic: string): string {
  return readFileSync(path.join(FIXTURE_DIR, `${topic.replace("/", ".")}.json`), "utf8");
}

/** The fixture parsed losslessly, as a mutable plain object (a fresh copy each call). */
export function fixture(topic: string): Record<string, Json> {
  return parseShopifyJson(fixtureText(topic)) as Record<string, Json>;
}

export const NOW = new Date("2026-05-01T12:00:00.000Z");

export function makeCtx(over: Partial<Omit<SyncContext, "settings">> & { settings?: Partial<ShopSettings> } = {}): SyncContext {
  const { settings, ...rest } = over;
  return {
    shopDomain: "acme.myshopify.com",
    storefrontUrl: "https://shop.example.com",
    currency: "USD",
    prior: null,
    now: NOW,
    ...rest,
    settings: { ...defaultSettings, ...settings },
  };
}

/** Asserts every call is accepted by the service schema, and returns them. */
export function expectValidCalls(plan: SyncPlan): ServiceCall[] {
  for (const call of plan.calls) {
    const r = serviceCallSchema.safeParse(call);
    if (!r.success) throw new Error(`invalid call ${JSON.stringify(call)}: ${JSON.stringify(r.error.issues)}`);
  }
  // The plan must survive a JSON round trip (it is queued and stored).
  expect(JSON.parse(JSON.stringify(plan))).toEqual(JSON.parse(JSON.stringify(plan)));
  if (plan.nextState !== null) expect(JSON.parse(JSON.stringify(plan.nextState))).toEqual(plan.nextState);
  return plan.calls;
}

/** planWebhook + validation. */
export function run(topic: string, body: unknown, ctx: SyncContext = makeCtx()): SyncPlan {
  const plan = planWebhook(topic, body, ctx);
  expectValidCalls(plan);
  return plan;
}

/**
 * Feeds deliveries in order as the pipeline does: each plan sees the state the last one left,
 * and keeps only the calls the pipeline would send (a stale version sends nothing, a call whose
 * content equals the last one of its kind is dropped).
 */
export function runSequence(
  steps: Array<{ topic: string; body: unknown }>,
  ctx: Omit<SyncContext, "prior"> = makeCtx(),
  prior: ObjectSyncState | null = null,
): SyncPlan[] {
  const plans: SyncPlan[] = [];
  let memory: ObjectMemory | undefined = prior ? { lastUpdatedAt: null, contentHashes: {}, state: prior } : undefined;
  for (const step of steps) {
    const plan = run(step.topic, step.body, { ...ctx, prior: (memory?.state as ObjectSyncState | undefined) ?? null });
    const decision = decide(plan, memory);
    plans.push({ ...plan, calls: decision.calls });
    memory = decision.next ?? memory;
  }
  return plans;
}

type AnyCall = Extract<ServiceCall, { op: "event" }>;
/** The single event call of a type/action, failing when absent. */
export function eventOf(plan: SyncPlan, type: AnyCall["type"], action: string): Record<string, Json> {
  const call = plan.calls.find((c) => c.op === "event" && c.type === type && c.action === action);
  if (!call || call.op !== "event") throw new Error(`no ${type}/${action} in ${JSON.stringify(plan.calls.map(callName))}`);
  return call.body as Record<string, Json>;
}

export function upsertOf(plan: SyncPlan): Record<string, Json> {
  const call = plan.calls.find((c) => c.op === "person.upsert");
  if (!call || call.op !== "person.upsert") throw new Error(`no person.upsert in ${JSON.stringify(plan.calls.map(callName))}`);
  return call.body as Record<string, Json>;
}

export function callName(call: ServiceCall): string {
  if (call.op === "event") return `${call.type}/${call.action}`;
  return call.op;
}

export function ops(plan: SyncPlan): string[] {
  return plan.calls.map(callName);
}

// ---------------------------------------------------------------------------
// Variation builders
// ---------------------------------------------------------------------------

/** A customer body with a consent object. */
export function customerWith(
  consent: { state: string | null; opt_in_level?: string | null; consent_updated_at?: string | null } | null,
  over: Record<string, unknown> = {},
): Record<string, Json> {
  const c = fixture("customers/update");
  c.email_marketing_consent =
    consent === null ? null : { opt_in_level: "single_opt_in", consent_updated_at: null, ...consent };
  return { ...c, ...over };
}

/** Replaces every money string of an order-like body with the given currency code. */
export function withCurrency<T>(body: T, currency: string): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([k, x]) => [
          k,
          k === "currency_code" || k === "currency" || k === "presentment_currency" ? currency : walk(x),
        ]),
      );
    }
    return v;
  };
  return walk(body) as T;
}

/** An order line item with the given price and quantity. */
export function orderLine(i: number, price: string, quantity: number, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 1000 + i,
    admin_graphql_api_id: `gid://shopify/LineItem/${1000 + i}`,
    product_id: 5000 + i,
    variant_id: 7000 + i,
    name: `Item ${i}`,
    title: `Item ${i}`,
    sku: `SKU-${i}`,
    price,
    quantity,
    total_discount: "0.00",
    discount_allocations: [],
    tax_lines: [],
    requires_shipping: true,
    ...over,
  };
}

/** A minimal order body (real orders have more; the schema is lenient). */
export function orderBody(over: Record<string, unknown> = {}): Record<string, Json> {
  return {
    id: 4242,
    admin_graphql_api_id: "gid://shopify/Order/4242",
    name: "#1001",
    email: "ann@example.com",
    created_at: "2026-04-01T10:00:00Z",
    updated_at: "2026-04-01T10:00:00Z",
    currency: "USD",
    financial_status: "pending",
    fulfillment_status: null,
    total_price: "59.97",
    total_tax: "0.00",
    total_discounts: "0.00",
    line_items: [orderLine(1, "19.99", 3)],
    customer: { id: 99, admin_graphql_api_id: "gid://shopify/Customer/99", email: "ann@example.com" },
    ...over,
  };
}

/** Makes `n` line items, each "19.99" × 1. */
export function manyLines(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => orderLine(i + 1, "19.99", 1));
}

/** Sets every null-able leaf we do not need to null (addresses, phone, names…). */
export function nullOut<T extends Record<string, unknown>>(body: T, keys: string[]): T {
  const copy: Record<string, unknown> = { ...body };
  for (const k of keys) copy[k] = null;
  return copy as T;
}
