import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * A realistic stream of webhook deliveries for the demo, built from Shopify's documented sample
 * bodies (API 2026-04 shapes) with generated variations: many customers with mixed consent, tag
 * changes and purchase totals, orders that get paid, shipped and refunded, products, abandoned and
 * recovered checkouts,
 * duplicate deliveries (same Event-Id) and updates that arrive out of order. Ids are beyond 2^53,
 * sent as raw JSON numbers, as a large store's would be. Deterministic for a given seed.
 */

import { FIXTURES_DIR } from "../shopify/webhooks";

export interface DemoDelivery {
  topic: string;
  body: string;
  eventId: string;
  triggeredAt: string;
  /** What the delivery shows (duplicate, out-of-order, …), for the summary. */
  tag?: "duplicate" | "out-of-order";
}

type Json = Record<string, unknown>;

function fixture(topic: string): Json {
  try {
    return JSON.parse(readFileSync(path.join(FIXTURES_DIR, `${topic.replace("/", ".")}.json`), "utf8")) as Json;
  } catch (error) {
    throw new Error(`demo: cannot read the sample webhook bodies in ${FIXTURES_DIR} (${(error as Error).message})`, { cause: error });
  }
}

// Small seeded PRNG (mulberry32): the same seed gives the same stream.
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)],
  };
}

// Ids above Number.MAX_SAFE_INTEGER, written into the JSON text as bare numbers.
const BIG = 9_007_199_254_741_000n;
const bigId = (n: number) => `__BIG__${BIG + BigInt(n)}`;
const gid = (type: string, id: string) => `gid://shopify/${type}/${id.replace("__BIG__", "")}`;
const toJson = (body: Json) => JSON.stringify(body).replace(/"__BIG__(\d+)"/g, "$1");

const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim", "Margaret", "Linus"];
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Perlman", "Berners-Lee", "Hamilton", "Torvalds"];
const TAGS = ["vip", "wholesale", "newsletter", "returning", "eu", "gift-buyer"];

export function demoStream(options: { customers: number; seed?: number; startAt?: Date }): DemoDelivery[] {
  const rnd = prng(options.seed ?? 42);
  const out: DemoDelivery[] = [];
  let clock = (options.startAt ?? new Date("2026-11-01T09:00:00Z")).getTime();
  const at = (minutesLater = 1) => new Date((clock += minutesLater * 60_000)).toISOString();
  const push = (topic: string, body: Json, tag?: DemoDelivery["tag"]) =>
    out.push({ topic, body: toJson(body), eventId: randomUUID(), triggeredAt: new Date(clock).toISOString(), tag });

  // Catalogue.
  const productBase = fixture("products/create");
  const products = Array.from({ length: 12 }, (_, i) => {
    const id = bigId(500 + i);
    const price = (rnd.int(500, 12_000) / 100).toFixed(2);
    const variants = [{ ...(productBase.variants as Json[])[0], id: bigId(900 + i), product_id: id, price, sku: `DEMO-${i}`, title: "Default" }];
    return { ...productBase, id, admin_graphql_api_id: gid("Product", id), title: `Demo product ${i + 1}`, handle: `demo-product-${i + 1}`, status: "active", published_at: at(0), updated_at: at(), variants, price };
  });
  for (const p of products) push("products/create", p);
  for (const p of products.slice(0, 4)) push("products/update", { ...p, updated_at: at(), tags: "sale, featured" });

  const customerBase = fixture("customers/create");
  // Ordered and still ordered (no edit): Shopify's sample line says current_quantity 1.
  const quantities = (n: number) => ({ quantity: n, current_quantity: n });
  const orderBase = fixture("orders/create");
  const checkoutBase = fixture("checkouts/create");
  let orderSeq = 0;

  for (let i = 0; i < options.customers; i++) {
    const id = bigId(i + 1);
    const first = rnd.pick(FIRST);
    const last = rnd.pick(LAST);
    const email = `${first}.${last}.${i + 1}@example.com`.toLowerCase();
    const consentState = rnd.chance(0.6) ? "subscribed" : rnd.chance(0.85) ? "not_subscribed" : "unsubscribed";
    const consentAt = at(0);
    const customerGid = gid("Customer", id);
    // API 2026-04: customers/create|update carry no tags, consent or sales totals; each has its own topic.
    const customer = (over: Json): Json => ({
      ...customerBase,
      id,
      admin_graphql_api_id: customerGid,
      email,
      first_name: first,
      last_name: last,
      phone: null,
      state: "enabled",
      created_at: consentAt,
      updated_at: at(),
      ...over,
    });
    const consent = (state: string, when: string) =>
      push("customers_email_marketing_consent/update", {
        customer_id: id,
        admin_graphql_api_customer_id: customerGid,
        email_address: email,
        email_marketing_consent: { state, opt_in_level: "single_opt_in", consent_updated_at: when },
      });
    const tagsAdded = (tags: string[]) => push("customer.tags_added", { customerId: customerGid, tags, occurredAt: at() });
    push("customers/create", customer({}));
    consent(consentState, consentAt);

    if (rnd.chance(0.3)) tagsAdded([...new Set([rnd.pick(TAGS), rnd.pick(TAGS)])]);
    if (rnd.chance(0.1)) {
      // Out of order: the newer version arrives first.
      const older = customer({ first_name: `${first} (old)` });
      const newer = customer({ first_name: first });
      push("customers/update", newer);
      push("customers/update", older, "out-of-order");
      tagsAdded(["returning"]);
    }
    if (consentState === "not_subscribed" && rnd.chance(0.25)) consent("subscribed", at());

    const orders = rnd.chance(0.55) ? rnd.int(1, 2) : 0;
    let spent = 0;
    for (let o = 0; o < orders; o++) {
      const orderId = bigId(100_000 + ++orderSeq);
      const lines = Array.from({ length: rnd.int(1, 3) }, (_, l) => {
        const p = rnd.pick(products);
        const base = (orderBase.line_items as Json[])[0];
        return { ...base, id: bigId(200_000 + orderSeq * 10 + l), admin_graphql_api_id: gid("LineItem", bigId(200_000 + orderSeq * 10 + l)), product_id: p.id, variant_id: (p.variants as Json[])[0].id, title: p.title, name: p.title, sku: (p.variants as Json[])[0].sku, price: p.price, ...quantities(rnd.int(1, 3)), total_discount: "0.00", discount_allocations: [], tax_lines: [] };
      });
      const total = lines.reduce((s, l) => s + Math.round(Number(l.price) * 100) * Number(l.quantity), 0);
      const checkoutToken = `demo-checkout-${orderSeq}`;
      const order = (over: Json): Json => ({
        ...orderBase,
        id: orderId,
        admin_graphql_api_id: gid("Order", orderId),
        name: `#${1000 + orderSeq}`,
        order_number: 1000 + orderSeq,
        email,
        contact_email: email,
        customer: { ...(orderBase.customer as Json), id, admin_graphql_api_id: gid("Customer", id), email, first_name: first, last_name: last },
        line_items: lines,
        currency: "USD",
        presentment_currency: "USD",
        total_price: (total / 100).toFixed(2),
        subtotal_price: (total / 100).toFixed(2),
        current_total_price: (total / 100).toFixed(2),
        total_tax: "0.00",
        total_discounts: "0.00",
        financial_status: "pending",
        fulfillment_status: null,
        cancelled_at: null,
        checkout_token: checkoutToken,
        cart_token: `demo-cart-${orderSeq}`,
        refunds: [],
        // Shopify's order samples are test orders, dated 2022: these are real ones, placed now.
        test: false,
        processed_at: at(0),
        created_at: at(0),
        updated_at: at(),
        ...over,
      });
      if (rnd.chance(0.3)) {
        push("checkouts/create", { ...checkoutBase, token: checkoutToken, cart_token: `demo-cart-${orderSeq}`, email, completed_at: null, created_at: at(0), updated_at: at(), customer: { id, email } });
      }
      push("orders/create", order({}));
      spent += total;
      push("customers/purchasing_summary", {
        customerId: customerGid,
        numberOfOrders: o + 1,
        amountSpent: { amount: (spent / 100).toFixed(2), currencyCode: "USD" },
        lastOrderId: gid("Order", orderId),
        occurredAt: at(0),
      });
      if (rnd.chance(0.75)) {
        push("orders/paid", order({ financial_status: "paid" }));
        if (rnd.chance(0.7)) push("orders/fulfilled", order({ financial_status: "paid", fulfillment_status: "fulfilled" }));
        if (rnd.chance(0.06)) {
          const refund = fixture("refunds/create");
          push("refunds/create", { ...refund, id: bigId(300_000 + orderSeq), admin_graphql_api_id: gid("Refund", bigId(300_000 + orderSeq)), order_id: orderId, created_at: at(), processed_at: at(0) });
        }
      }
    }
    if (rnd.chance(0.12)) {
      // A checkout nobody completes: the abandonment timer will fire.
      const token = `demo-abandoned-${i + 1}`;
      const p = rnd.pick(products);
      push("checkouts/create", {
        ...checkoutBase,
        token,
        cart_token: `demo-abandoned-cart-${i + 1}`,
        email,
        completed_at: null,
        created_at: at(0),
        updated_at: at(),
        customer: { id, email },
        total_price: p.price,
        subtotal_price: p.price,
        line_items: [{ ...(checkoutBase.line_items as Json[])[0], product_id: p.id, variant_id: (p.variants as Json[])[0].id, title: p.title, price: p.price, quantity: 1 }],
      });
    }
    if (consentState === "subscribed" && rnd.chance(0.05)) consent("unsubscribed", at());
  }

  // Shopify delivers some events twice (same X-Shopify-Event-Id): re-send 8% of them later on.
  const duplicates = out.filter(() => rnd.chance(0.08)).map((d) => ({ ...d, tag: "duplicate" as const }));
  for (const d of duplicates) out.splice(rnd.int(out.indexOf(d) + 1, out.length), 0, d);
  return out;
}
