/**
 * What the webhook body schemas (app/sync/payloads.ts) accept, refuse and yield: Shopify's samples
 * and the messy variants real deliveries bring (nulls, missing fields, ids beyond 2^53 as numbers
 * and strings, odd timestamps, other currencies). The mappers rely on every field they read being
 * a value or null (never undefined), ids being exact strings and money being exact decimal strings.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { parseShopifyJson } from "../../app/sync/json";
import {
  address,
  cartLineItem,
  checkoutPayload,
  consentUpdatePayload,
  customerMergePayload,
  customerPayload,
  customerTagsPayload,
  deletePayload,
  embeddedCustomer,
  emailMarketingConsent,
  gidNumber,
  money,
  moneySet,
  orderEditedPayload,
  orderLineItem,
  orderPayload,
  preferGid,
  productPayload,
  productVariant,
  purchasingSummaryPayload,
  refundPayload,
  segmentMembershipPayload,
  shopifyId,
  subscriptionBillingAttemptPayload,
  subscriptionBillingCyclePayload,
  subscriptionContractPayload,
  tagList,
  timestamp,
} from "../../app/sync/payloads";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const FIXTURES = new URL("../fixtures/shopify-webhooks/", import.meta.url);

/** A sample body as the pipeline reads it: lossless, so ids beyond 2^53 arrive as exact strings. */
function sample(topic: string): Record<string, Json> {
  return parseShopifyJson(readFileSync(new URL(`${topic.replace("/", ".")}.json`, FIXTURES), "utf8")) as Record<string, Json>;
}
/** The same body through plain JSON.parse: ids beyond 2^53 arrive as rounded numbers. */
function sampleRounded(topic: string): Record<string, Json> {
  return JSON.parse(readFileSync(new URL(`${topic.replace("/", ".")}.json`, FIXTURES), "utf8")) as Record<string, Json>;
}

/**
 * The issues of a refused body as "path: message" lines (what a merchant's skipped note is built
 * from). Each is the schema's own explanation, a well-formed zod "custom" issue, not a generic one.
 */
function refusal(schema: z.ZodType, input: unknown): string[] {
  const r = schema.safeParse(input);
  if (r.success) throw new Error(`expected a refusal, got ${JSON.stringify(r.data)}`);
  expect(r.error.issues.map((i) => i.code)).toEqual(r.error.issues.map(() => "custom"));
  return r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

const ALL_NULL_ADDRESS = {
  first_name: null,
  last_name: null,
  name: null,
  phone: null,
  company: null,
  address1: null,
  address2: null,
  city: null,
  province: null,
  province_code: null,
  zip: null,
  country: null,
  country_code: null,
};

describe("shopifyId: every id is an exact string", () => {
  it("reads numbers, numeric strings, gids and bigints as the id's digits", () => {
    expect(shopifyId.parse(123)).toBe("123");
    expect(shopifyId.parse(0)).toBe("0");
    expect(shopifyId.parse("820982911946154508")).toBe("820982911946154508");
    expect(shopifyId.parse("  820982911946154508 ")).toBe("820982911946154508");
    expect(shopifyId.parse("gid://shopify/Customer/706405506930370084")).toBe("706405506930370084");
    expect(shopifyId.parse(" gid://shopify/Customer/706405506930370084 ")).toBe("706405506930370084");
    expect(shopifyId.parse(820982911946154508n)).toBe("820982911946154508");
  });

  it("keeps a number beyond 2^53 as the JSON literal a reader sees, and writes huge ones without an exponent", () => {
    // 706405506930370000 is stored as 706405506930370048; the payload said ...0000.
    expect(shopifyId.parse(706405506930370000)).toBe("706405506930370000");
    expect(shopifyId.parse(1e21)).toBe("1000000000000000000000");
    expect(shopifyId.parse(999999999999999900000)).toBe("999999999999999900000");
  });

  it("keeps an opaque non-numeric id as text", () => {
    expect(shopifyId.parse("exampleCartId")).toBe("exampleCartId");
    expect(shopifyId.parse("gid://shopify/Customer/abc")).toBe("gid://shopify/Customer/abc");
  });

  it("refuses fractions, negatives, blanks and non-ids with a message naming the value", () => {
    expect(refusal(shopifyId, 1.5)).toEqual([": Expected a Shopify id, got 1.5"]);
    expect(refusal(shopifyId, -1)).toEqual([": Expected a Shopify id, got -1"]);
    expect(refusal(shopifyId, "")).toEqual([": Expected a Shopify id, got an empty string"]);
    expect(refusal(shopifyId, "   ")).toEqual([": Expected a Shopify id, got an empty string"]);
    expect(shopifyId.safeParse(null).success).toBe(false);
    expect(shopifyId.safeParse(true).success).toBe(false);
  });
});

describe("gidNumber and preferGid", () => {
  it("reads the number of any resource's gid, with or without a query or fragment", () => {
    expect(gidNumber("gid://shopify/Customer/706405506930370084")).toBe("706405506930370084");
    expect(gidNumber("gid://shopify/Order_2/5")).toBe("5");
    expect(gidNumber("gid://shopify/Customer/12?foo=bar")).toBe("12");
    expect(gidNumber("gid://shopify/Customer/12#frag")).toBe("12");
    expect(gidNumber("  gid://shopify/Customer/12  ")).toBe("12");
  });

  it("is null for anything that is not a whole Shopify gid", () => {
    expect(gidNumber(null)).toBeNull();
    expect(gidNumber(undefined)).toBeNull();
    expect(gidNumber("")).toBeNull();
    expect(gidNumber("12")).toBeNull();
    expect(gidNumber("x gid://shopify/Customer/12")).toBeNull();
    expect(gidNumber("gid://shopify/Customer/12abc")).toBeNull();
    expect(gidNumber("gid://shopify/Customer/12?")).toBe("12");
    expect(gidNumber("gid://shopify//12")).toBeNull();
    expect(gidNumber("gid://other/Customer/12")).toBeNull();
    expect(gidNumber("gid://shopify/Cust-omer/12")).toBeNull();
  });

  it("prefers the gid's number, falls back to the REST id, else null", () => {
    expect(preferGid("gid://shopify/Customer/7", "5")).toBe("7");
    expect(preferGid(null, "5")).toBe("5");
    expect(preferGid("not a gid", "5")).toBe("5");
    expect(preferGid(null, null)).toBeNull();
    expect(preferGid(undefined, undefined)).toBeNull();
  });
});

describe("money", () => {
  it("keeps amounts exact: strings as sent (trimmed), numbers as their JSON literal", () => {
    expect(money.parse("12.50")).toBe("12.50");
    expect(money.parse(" 12.50 ")).toBe("12.50");
    expect(money.parse(89.99)).toBe("89.99");
    expect(money.parse(0)).toBe("0");
    expect(money.parse("-5.00")).toBe("-5.00");
    expect(money.parse("1500")).toBe("1500");
  });

  it("reads an empty amount as missing", () => {
    expect(money.parse("")).toBeNull();
  });

  it("refuses what is not a decimal amount, quoting it", () => {
    expect(refusal(money, "abc")).toEqual([': Expected a decimal amount, got "abc"']);
    expect(refusal(money, "12,50")).toEqual([': Expected a decimal amount, got "12,50"']);
    expect(refusal(money, 1e25)).toEqual([": Expected a decimal amount, got 1e+25"]);
    expect(money.safeParse(null).success).toBe(false);
  });
});

describe("timestamp", () => {
  it("normalises offsets and epoch milliseconds to UTC ISO", () => {
    expect(timestamp.parse("2021-12-31T19:00:00-05:00")).toBe("2022-01-01T00:00:00.000Z");
    expect(timestamp.parse("2022-01-01T00:00:00Z")).toBe("2022-01-01T00:00:00.000Z");
    expect(timestamp.parse(1640995200000)).toBe("2022-01-01T00:00:00.000Z");
    expect(timestamp.parse(0)).toBe("1970-01-01T00:00:00.000Z");
  });

  it("reads unparsable text as missing", () => {
    expect(timestamp.parse("not a date")).toBeNull();
    expect(timestamp.parse("")).toBeNull();
  });

  it("accepts every instant of the years 1 to 9999", () => {
    expect(timestamp.parse("0001-01-01T00:00:00.000Z")).toBe("0001-01-01T00:00:00.000Z");
    expect(timestamp.parse("1900-06-01T00:00:00Z")).toBe("1900-06-01T00:00:00.000Z");
    expect(timestamp.parse("9999-12-31T23:59:59.999Z")).toBe("9999-12-31T23:59:59.999Z");
  });

  it("refuses a date outside the years 1 to 9999, quoting at most 40 characters of it", () => {
    expect(refusal(timestamp, "0000-12-31T23:59:59.999Z")).toEqual([": timestamp 0000-12-31T23:59:59.999Z is outside the years 1–9999"]);
    expect(refusal(timestamp, "+010000-01-01T00:00:00.000Z")).toEqual([": timestamp +010000-01-01T00:00:00.000Z is outside the years 1–9999"]);
    expect(refusal(timestamp, 1e20)).toEqual([": timestamp 100000000000000000000 is outside the years 1–9999"]);
    expect(refusal(timestamp, "Sat Sep 13 275760 00:00:00 GMT+0000 (Coordinated Universal Time)")).toEqual([
      ": timestamp Sat Sep 13 275760 00:00:00 GMT+0000 (Coo is outside the years 1–9999",
    ]);
  });
});

describe("tagList", () => {
  it("splits Shopify's comma list, trims, drops empties and duplicates", () => {
    expect(tagList.parse(" a, b,,a ,c ")).toEqual(["a", "b", "c"]);
    expect(tagList.parse("")).toEqual([]);
    expect(tagList.parse("VIP")).toEqual(["VIP"]);
  });

  it("reads an array of tags (numbers as text) the same way, without splitting on commas", () => {
    expect(tagList.parse([" x ", 5, "", "x", "a,b"])).toEqual(["x", "5", "a,b"]);
  });
});

describe("money sets, addresses and consent", () => {
  it("a money set keeps both currencies, exact and upper-cased; an unknown code reads as null", () => {
    expect(
      moneySet.parse({ shop_money: { amount: 84.03, currency_code: " eur " }, presentment_money: { amount: "86.00", currency_code: "GBP" } }),
    ).toStrictEqual({ shop_money: { amount: "84.03", currency_code: "EUR" }, presentment_money: { amount: "86.00", currency_code: "GBP" } });
    expect(moneySet.parse({ shop_money: { amount: "1", currency_code: "EURO" }, presentment_money: { currency_code: "US" } })).toStrictEqual({
      shop_money: { amount: "1", currency_code: null },
      presentment_money: { amount: null, currency_code: null },
    });
    expect(moneySet.parse({ shop_money: { currency_code: "U$D" } }).shop_money?.currency_code).toBeNull();
    expect(moneySet.parse({})).toStrictEqual({ shop_money: null, presentment_money: null });
  });

  it("an address reads numbers as text and every missing field as null", () => {
    expect(address.parse({})).toStrictEqual(ALL_NULL_ADDRESS);
    expect(address.parse({ zip: 40003, phone: 5555555, address1: true, city: null, extra: 1 })).toStrictEqual({
      ...ALL_NULL_ADDRESS,
      zip: "40003",
      phone: "5555555",
      address1: "true",
      extra: 1,
    });
  });

  it("consent: states and levels in lower case, a future state as no information, the time in UTC", () => {
    expect(emailMarketingConsent.parse({ state: " SUBSCRIBED ", opt_in_level: "CONFIRMED_OPT_IN", consent_updated_at: "2021-12-31T19:00:00-05:00" })).toStrictEqual({
      state: "subscribed",
      opt_in_level: "confirmed_opt_in",
      consent_updated_at: "2022-01-01T00:00:00.000Z",
    });
    expect(emailMarketingConsent.parse({ state: "not_subscribed" }).state).toBe("not_subscribed");
    expect(emailMarketingConsent.parse({ state: "double_subscribed" }).state).toBeNull();
    expect(emailMarketingConsent.parse({})).toStrictEqual({ state: null, opt_in_level: null, consent_updated_at: null });
  });
});

describe("customers", () => {
  it("the customers/create sample: the gid's id wins over the rounded one, times in UTC", () => {
    for (const body of [sample("customers/create"), sampleRounded("customers/create")]) {
      const c = customerPayload.parse(body);
      expect(c.id).toBe("706405506930370084");
      expect(c.email).toBe("bob@biller.com");
      expect(c.first_name).toBe("Bob");
      expect(c.created_at).toBe("2022-01-01T00:00:00.000Z");
      expect(c.currency).toBe("USD");
      expect(c.addresses).toEqual([]);
      expect(c.default_address).toMatchObject({ city: "Ottawa", zip: "K2P 2L8", country_code: "CA" });
      // Since API 2025-01 these come by their own topics.
      expect(c.tags).toBeNull();
      expect(c.email_marketing_consent).toBeNull();
      expect(c.total_spent).toBeNull();
    }
  });

  it("a messy customer: numbers as text, null arrays as [], tags and money normalised", () => {
    const c = customerPayload.parse({
      id: "  42 ",
      phone: 15555550123,
      first_name: 7,
      tags: "vip, vip ,newsletter",
      total_spent: 1234.5,
      currency: "eur",
      addresses: null,
      orders_count: 3,
      email_marketing_consent: { state: "Unsubscribed" },
    });
    expect(c).toMatchObject({ id: "42", phone: "15555550123", first_name: "7", tags: ["vip", "newsletter"], total_spent: "1234.5", currency: "EUR", addresses: [], orders_count: 3 });
    expect(c.email_marketing_consent).toStrictEqual({ state: "unsubscribed", opt_in_level: null, consent_updated_at: null });
    expect(c.last_name).toBeNull();
    expect(c.updated_at).toBeNull();
  });

  it("a customer id comes from the REST id when the gid is missing or foreign", () => {
    expect(customerPayload.parse({ id: 42 }).id).toBe("42");
    expect(customerPayload.parse({ id: 42, admin_graphql_api_id: "Customer 7" }).id).toBe("42");
    expect(customerPayload.parse({ admin_graphql_api_id: "gid://shopify/Customer/7" }).id).toBe("7");
  });

  it("refuses a customer without any id, naming the field", () => {
    expect(refusal(customerPayload, { email: "a@example.com" })).toEqual(["id: Customer id is required"]);
    expect(refusal(customerPayload, { id: null, admin_graphql_api_id: null })).toEqual(["id: Customer id is required"]);
  });

  it("an embedded customer may lack its id (a guest checkout)", () => {
    const c = embeddedCustomer.parse({ email: "guest@example.com" });
    expect(c.id).toBeNull();
    expect(c.addresses).toEqual([]);
    expect(embeddedCustomer.parse({ id: 1, admin_graphql_api_id: "gid://shopify/Customer/2" }).id).toBe("2");
  });

  it("consent updates: the sample, the gid preferred, a missing customer refused", () => {
    const s = consentUpdatePayload.parse(sample("customers_email_marketing_consent/update"));
    expect(s).toMatchObject({ customer_id: "706405506930370000", email_address: "bob@biller.com" });
    expect(s.email_marketing_consent).toStrictEqual({ state: "not_subscribed", opt_in_level: null, consent_updated_at: null });
    expect(consentUpdatePayload.parse({ customer_id: 1, admin_graphql_api_customer_id: "gid://shopify/Customer/706405506930370084" }).customer_id).toBe(
      "706405506930370084",
    );
    const bare = consentUpdatePayload.parse({ customer_id: "9" });
    expect(bare).toStrictEqual({ customer_id: "9", admin_graphql_api_customer_id: null, email_address: null, email_marketing_consent: null });
    expect(refusal(consentUpdatePayload, { email_address: "a@example.com" })).toEqual(["customer_id: customer_id is required"]);
  });

  it("tag changes: the customer's gid as its number, the tags as a list, the time in UTC", () => {
    expect(customerTagsPayload.parse(sample("customer/tags_added"))).toStrictEqual({ customerId: "1", tags: ["tag1", "tag2"], occurredAt: "2005-05-05T06:00:00.000Z" });
    expect(customerTagsPayload.parse({ customerId: 5, tags: "a, b" })).toStrictEqual({ customerId: "5", tags: ["a", "b"], occurredAt: null });
    expect(customerTagsPayload.safeParse({ tags: ["a"] }).success).toBe(false);
  });

  it("segment membership: gids as numbers; the import's picked_at is an ISO time with an offset", () => {
    expect(segmentMembershipPayload.parse(sample("customer/joined_segment"))).toStrictEqual({ shop_id: "gid://shopify/Shop/1", customer_id: "2", segment_id: "3" });
    expect(segmentMembershipPayload.parse({ customer_id: 2, segment_id: 3 })).toStrictEqual({ customer_id: "2", segment_id: "3", shop_id: null });
    expect(segmentMembershipPayload.parse({ customer_id: 2, segment_id: 3, picked_at: "2026-11-27T05:00:00+01:00" }).picked_at).toBe("2026-11-27T05:00:00+01:00");
    expect(segmentMembershipPayload.safeParse({ customer_id: 2, segment_id: 3, picked_at: "yesterday" }).success).toBe(false);
    expect(segmentMembershipPayload.safeParse({ customer_id: 2 }).success).toBe(false);
  });

  it("purchasing summary: order counts as numbers, the amount exact in its currency", () => {
    expect(purchasingSummaryPayload.parse(sample("customers/purchasing_summary"))).toStrictEqual({
      customerId: "1",
      numberOfOrders: 1,
      amountSpent: { amount: "100.00", currencyCode: "USD" },
      lastOrderId: "gid://shopify/Order/1",
      occurredAt: "2005-05-05T06:00:00.000Z",
    });
    const messy = purchasingSummaryPayload.parse({ customerId: "7", numberOfOrders: "12", amountSpent: { amount: 1500, currencyCode: "jpy" } });
    expect(messy).toStrictEqual({ customerId: "7", numberOfOrders: 12, amountSpent: { amount: "1500", currencyCode: "JPY" }, lastOrderId: null, occurredAt: null });
    expect(purchasingSummaryPayload.parse({ customerId: "7", numberOfOrders: 0, amountSpent: {} }).amountSpent).toStrictEqual({ amount: null, currencyCode: null });
    for (const bad of ["12a", "a12", "-1", "1.5", "", -1, 1.5]) {
      expect(purchasingSummaryPayload.safeParse({ customerId: "7", numberOfOrders: bad }).success, String(bad)).toBe(false);
    }
  });

  it("merges: the kept and deleted customers' numbers and the status in lower case", () => {
    expect(customerMergePayload.parse(sample("customers/merge"))).toMatchObject({
      admin_graphql_api_customer_kept_id: "1",
      admin_graphql_api_customer_deleted_id: "2",
      status: "failed",
    });
    expect(customerMergePayload.parse({ admin_graphql_api_customer_kept_id: 1, admin_graphql_api_customer_deleted_id: "2", status: " COMPLETED " }).status).toBe("completed");
    expect(customerMergePayload.parse({ admin_graphql_api_customer_kept_id: 1, admin_graphql_api_customer_deleted_id: "2" }).status).toBeNull();
    expect(customerMergePayload.safeParse({ admin_graphql_api_customer_kept_id: 1 }).success).toBe(false);
  });
});

describe("orders", () => {
  it("the orders/create sample: exact ids from the gids, exact money, UTC times, tags as a list", () => {
    for (const body of [sample("orders/create"), sampleRounded("orders/create")]) {
      const o = orderPayload.parse(body);
      expect(o).toMatchObject({
        id: "820982911946154508",
        name: "#9999",
        order_number: 1234,
        email: "jon@example.com",
        token: "123456abcd",
        cart_token: null,
        checkout_token: null,
        created_at: "2022-01-01T00:00:00.000Z",
        cancelled_at: "2022-01-01T00:00:00.000Z",
        closed_at: null,
        currency: "USD",
        total_price: "404.95",
        total_discounts: "20.00",
        test: true,
        tags: ["tag1", "tag2"],
        payment_gateway_names: ["visa", "bogus"],
        note_attributes: [],
      });
      expect(o.total_shipping_price_set).toStrictEqual({ shop_money: { amount: "10.00", currency_code: "USD" }, presentment_money: { amount: "10.00", currency_code: "USD" } });
      expect(o.line_items.map((l) => [l.id, l.price])).toEqual([
        ["487817672276298554", "89.99"],
        ["789012345678901234", "19.99"],
        ["890123456789012345", "24.99"],
        ["976318377106520349", "159.99"],
        ["315789986012684393", "119.99"],
      ]);
      expect(o.line_items[0]).toMatchObject({ name: "Aviator sunglasses", quantity: 1, variant_id: null, vendor: null, requires_shipping: true, gift_card: false });
      expect(o.customer?.id).toBe("115310627314723954");
      expect(o.shipping_address).toMatchObject({ zip: "40003", country_code: "US", address2: null });
      expect(o.shipping_lines[0]).toStrictEqual({ ...o.shipping_lines[0], price: "10.00", title: "Generic Shipping" });
    }
  });

  it("a messy order: numeric money, lower-case currencies, blank tokens and names as missing, nulls as []", () => {
    const o = orderPayload.parse({
      id: "1001",
      name: "   ",
      order_number: "1001",
      currency: "eur",
      presentment_currency: "gbp",
      token: "  ",
      cart_token: " abc ",
      checkout_token: 12345,
      total_price: 84.03,
      line_items: null,
      shipping_lines: null,
      payment_gateway_names: null,
      note_attributes: [{ name: "gift", value: 1 }],
      tags: ["b", "a"],
      processed_at: "garbage",
      current_total_additional_fees_set: { shop_money: { amount: 0.5, currency_code: "eur" } },
    });
    expect(o).toMatchObject({
      id: "1001",
      name: null,
      order_number: "1001",
      currency: "EUR",
      presentment_currency: "GBP",
      token: null,
      cart_token: "abc",
      checkout_token: "12345",
      total_price: "84.03",
      line_items: [],
      shipping_lines: [],
      payment_gateway_names: [],
      note_attributes: [{ name: "gift", value: "1" }],
      tags: ["b", "a"],
      processed_at: null,
    });
    expect(o.current_total_additional_fees_set).toStrictEqual({ shop_money: { amount: "0.5", currency_code: "EUR" }, presentment_money: null });
    expect(o.customer).toBeNull();
    expect(o.billing_address).toBeNull();
    expect(o.email).toBeNull();
    expect(o.test).toBeNull();
  });

  it("a minimal order reads every other field as null or []", () => {
    const o = orderPayload.parse({ id: 5 });
    expect(o.id).toBe("5");
    expect(o.admin_graphql_api_id).toBeNull();
    expect(o.total_shipping_price_set).toBeNull();
    expect(o.line_items).toEqual([]);
    expect(o.tags).toBeNull();
  });

  it("line items: blank titles as missing, exact discounts, taxes and images of either shape", () => {
    const l = orderLineItem.parse({
      id: Number("9007199254740993"), // as JSON.parse reads it: 9007199254740992
      admin_graphql_api_id: "gid://shopify/LineItem/9007199254740993",
      title: "",
      name: " ",
      variant_title: "Pink",
      sku: 123,
      price: "19.99",
      price_set: { shop_money: { amount: 19.99, currency_code: "usd" } },
      quantity: 2,
      discount_allocations: [{ amount: 5, amount_set: { shop_money: { amount: "5.00", currency_code: "usd" } } }],
      tax_lines: [{ price: 1.2, rate: 0.06, title: "Tax" }],
      image: { src: "https://cdn.example/a.png" },
    });
    expect(l).toMatchObject({ id: "9007199254740993", title: null, name: null, variant_title: "Pink", sku: "123", price: "19.99", quantity: 2 });
    expect(l.price_set).toStrictEqual({ shop_money: { amount: "19.99", currency_code: "USD" }, presentment_money: null });
    expect(l.discount_allocations).toStrictEqual([{ amount: "5", amount_set: { shop_money: { amount: "5.00", currency_code: "USD" }, presentment_money: null } }]);
    expect(l.tax_lines).toStrictEqual([{ price: "1.2", rate: 0.06, title: "Tax" }]);
    expect(l.image).toStrictEqual({ src: "https://cdn.example/a.png", url: null });
    expect(orderLineItem.parse({ image: "https://cdn.example/b.png" }).image).toBe("https://cdn.example/b.png");
    expect(orderLineItem.parse({ id: 3 })).toMatchObject({ id: "3", discount_allocations: [], tax_lines: [], image: null, current_quantity: null });
    expect(orderLineItem.safeParse({ quantity: 1.5 }).success).toBe(false);
    expect(orderLineItem.parse({ discount_allocations: [{}], tax_lines: [{}] })).toMatchObject({
      discount_allocations: [{ amount: null, amount_set: null }],
      tax_lines: [{ price: null, rate: null, title: null }],
    });
  });

  it("shipping lines read numeric prices exactly and missing fields as null", () => {
    const o = orderPayload.parse({ id: 1, shipping_lines: [{ price: 4.9, discounted_price: "0.00", is_removed: false }, {}] });
    expect(o.shipping_lines).toStrictEqual([
      { price: "4.9", discounted_price: "0.00", is_removed: false, title: null },
      { price: null, discounted_price: null, is_removed: null, title: null },
    ]);
  });

  it("refuses an order without an id, and a bad amount or id inside it, naming the field", () => {
    expect(refusal(orderPayload, { email: "a@example.com" })).toEqual(["id: Order id is required"]);
    expect(refusal(orderPayload, { id: 1, total_price: "12,50" })).toEqual(['total_price: Expected a decimal amount, got "12,50"']);
    expect(refusal(orderPayload, { id: 1, line_items: [{ product_id: -3 }] })).toEqual(["line_items.0.product_id: Expected a Shopify id, got -3"]);
    expect(refusal(orderPayload, { id: 1, updated_at: 1e20 })).toEqual(["updated_at: timestamp 100000000000000000000 is outside the years 1–9999"]);
  });

  it("deletes: the sample's id (beyond 2^53) as an exact string; no id is refused", () => {
    expect(deletePayload.parse(sample("orders/delete"))).toStrictEqual({ id: "820982911946154500", admin_graphql_api_id: null });
    expect(deletePayload.parse(sampleRounded("products/delete")).id).toBe("788032119674292900");
    expect(deletePayload.parse({ admin_graphql_api_id: "gid://shopify/Product/788032119674292922" }).id).toBe("788032119674292922");
    expect(refusal(deletePayload, {})).toEqual(["id: Deleted resource id is required"]);
  });

  it("edits: the order, the edit and the changed lines' ids as exact strings", () => {
    const e = orderEditedPayload.parse(sample("orders/edited")).order_edit;
    expect(e).toMatchObject({
      id: "78912328793123780",
      order_id: "820982911946154500",
      created_at: "2022-01-01T00:00:00.000Z",
      committed_at: "2022-01-01T00:00:00.000Z",
    });
    expect(e.line_items).toStrictEqual({ additions: [{ id: "78643924236718240", delta: 1 }], removals: [{ id: "487817672276298560", delta: 1 }] });
    const bare = orderEditedPayload.parse({ order_edit: { order_id: 1, line_items: { additions: [{}], removals: null } } }).order_edit;
    expect(bare).toStrictEqual({ id: null, order_id: "1", created_at: null, committed_at: null, line_items: { additions: [{ id: null, delta: null }], removals: [] } });
    expect(orderEditedPayload.parse({ order_edit: { order_id: 1, line_items: { removals: [{ id: 2 }] } } }).order_edit.line_items?.removals).toStrictEqual([
      { id: "2", delta: null },
    ]);
    expect(orderEditedPayload.safeParse({ order_edit: { id: 1 } }).success).toBe(false);
    expect(orderEditedPayload.safeParse({}).success).toBe(false);
  });
});

describe("refunds", () => {
  it("the refunds/create sample: ids from the gid, line amounts and transactions exact", () => {
    const r = refundPayload.parse(sample("refunds/create"));
    expect(r).toMatchObject({ id: "890088186047892319", order_id: "820982911946154500", note: "Things were damaged", created_at: "2022-01-01T00:00:00.000Z" });
    expect(r.refund_line_items[0]).toMatchObject({
      id: "487817672276298600",
      line_item_id: "487817672276298560",
      quantity: 1,
      subtotal: "89.99",
      total_tax: "0",
      subtotal_set: { shop_money: { amount: "89.99", currency_code: "USD" }, presentment_money: { amount: "89.99", currency_code: "USD" } },
    });
    expect(r.refund_line_items[0].line_item?.id).toBe("487817672276298554");
    expect(r.transactions[0]).toMatchObject({ id: "245135271310201180", kind: "refund", status: "success", amount: "75.00", currency: null });
    expect(r.refund_shipping_lines).toEqual([]);
    expect(r.order_adjustments).toEqual([]);
  });

  it("a refund paid in another currency keeps both amounts", () => {
    const r = refundPayload.parse(
      parseShopifyJson(readFileSync(new URL("variants/refunds.create.presentment-gbp.json", FIXTURES), "utf8")),
    );
    expect(r.transactions.map((t) => [t.amount, t.currency])).toContainEqual(["86.00", "GBP"]);
  });

  it("messy refunds: numeric amounts, lower-case currencies, empty parts as null", () => {
    const r = refundPayload.parse({
      id: 1,
      order_id: "2",
      refund_line_items: [{ line_item_id: 3, subtotal: 10, total_tax_set: { presentment_money: { amount: 1, currency_code: "gbp" } } }],
      transactions: [{ amount: 86, currency: "gbp" }],
      refund_shipping_lines: [{ subtotal_amount_set: { shop_money: { amount: 5, currency_code: "eur" } } }],
      order_adjustments: [{ amount: -2.5, tax_amount: 0, kind: "shipping_refund" }],
    });
    expect(r.refund_line_items).toStrictEqual([
      {
        id: null,
        line_item_id: "3",
        quantity: null,
        subtotal: "10",
        total_tax: null,
        subtotal_set: null,
        total_tax_set: { shop_money: null, presentment_money: { amount: "1", currency_code: "GBP" } },
        line_item: null,
      },
    ]);
    expect(r.transactions).toStrictEqual([{ id: null, kind: null, status: null, test: null, amount: "86", currency: "GBP" }]);
    expect(r.refund_shipping_lines).toStrictEqual([{ subtotal_amount_set: { shop_money: { amount: "5", currency_code: "EUR" }, presentment_money: null }, tax_amount_set: null }]);
    expect(r.order_adjustments).toStrictEqual([{ amount: "-2.5", tax_amount: "0", amount_set: null, tax_amount_set: null, kind: "shipping_refund" }]);
  });

  it("refuses a refund without its order or its id", () => {
    expect(refundPayload.safeParse({ id: 1 }).success).toBe(false);
    expect(refusal(refundPayload, { order_id: 2 })).toEqual(["id: Refund id is required"]);
  });
});

describe("products", () => {
  it("the products/create sample: exact ids, status, tags and variants", () => {
    for (const body of [sample("products/create"), sampleRounded("products/create")]) {
      const p = productPayload.parse(body);
      expect(p).toMatchObject({ id: "788032119674292922", title: "Example T-Shirt", status: "active", tags: ["example", "mens", "t-shirt"], images: [], image: null, category: null });
      expect(p.published_at).toBe("2022-01-01T00:00:00.000Z");
      expect(p.variants[0]).toStrictEqual({ ...p.variants[0], id: "642667041472713922", title: "Small", price: "19.99", sku: null, option2: null });
    }
  });

  it("messy products: upper-case status, blank title, numeric prices, images and both category shapes", () => {
    const p = productPayload.parse({
      id: 1,
      title: "  ",
      status: "ARCHIVED",
      image: { src: "https://cdn.example/p.png" },
      images: [{}],
      variants: [{ id: 2, price: 19.5, barcode: 123456, option1: 42 }],
      category: { name: "Shirts" },
    });
    expect(p).toMatchObject({ id: "1", title: null, status: "archived" });
    expect(p.image).toStrictEqual({ src: "https://cdn.example/p.png", alt: null });
    expect(p.images).toStrictEqual([{ src: null, alt: null }]);
    expect(p.variants).toStrictEqual([
      { id: "2", admin_graphql_api_id: null, title: null, sku: null, barcode: "123456", price: "19.5", option1: "42", option2: null, option3: null },
    ]);
    expect(p.category).toStrictEqual({ name: "Shirts", full_name: null });
    expect(productPayload.parse({ id: 1, category: "Apparel > Shirts" }).category).toBe("Apparel > Shirts");
    expect(productVariant.parse({ admin_graphql_api_id: "gid://shopify/ProductVariant/9", id: 8 }).id).toBe("9");
    expect(refusal(productPayload, { title: "T" })).toEqual(["id: Product id is required"]);
  });
});

describe("carts and checkouts", () => {
  it("messy cart and checkout lines read exactly", () => {
    expect(cartLineItem.parse({ title: "", presentment_title: "Hat", quantity: 2, price: 10, applied_discounts: [{ amount: 1 }, {}] })).toMatchObject({
      title: null,
      presentment_title: "Hat",
      price: "10",
      applied_discounts: [{ amount: "1" }, { amount: null }],
      discount_allocations: [],
      tax_lines: [],
      key: null,
    });
  });

  it("the checkouts/create sample: token, cart token, exact totals, line prices and the customer's gid", () => {
    const c = checkoutPayload.parse(sample("checkouts/create"));
    expect(c).toMatchObject({
      token: "123123123",
      cart_token: "eeafa272cebfd4b22385bc4b645e762c",
      id: null,
      email: "example@email.com",
      buyer_accepts_marketing: false,
      total_price: "421.88",
      currency: "USD",
      completed_at: null,
      created_at: "2022-01-01T00:00:00.000Z",
    });
    expect(c.line_items[0]).toMatchObject({ presentment_title: "IPod Nano - 8GB", price: "199.00", variant_id: "808950810" });
    expect(c.line_items[0].tax_lines[0]).toStrictEqual({ ...c.line_items[0].tax_lines[0], price: "11.94", rate: 0.06, title: "Tax" });
    expect(c.customer?.id).toBe("603851970716743426");
  });

  it("a blank cart token is missing, so the checkout token identifies the checkout", () => {
    const c = checkoutPayload.parse(parseShopifyJson(readFileSync(new URL("variants/checkouts.create.blank-cart-token.json", FIXTURES), "utf8")));
    expect(c.cart_token).toBeNull();
    expect(c.token).not.toBeNull();
  });

  it("a checkout is identified by its token, id or cart token; without any it is refused", () => {
    expect(checkoutPayload.parse({ token: "t" }).token).toBe("t");
    expect(checkoutPayload.parse({ id: 5 }).id).toBe("5");
    expect(checkoutPayload.parse({ cart_token: "c" })).toMatchObject({ cart_token: "c", token: null, id: null, line_items: [], shipping_lines: [], customer: null });
    expect(refusal(checkoutPayload, { token: "", cart_token: "  ", email: "a@example.com" })).toEqual(["token: Checkout token or id is required"]);
  });
});

describe("subscriptions", () => {
  it("the subscription_contracts/create sample: ids from the gids, policy and status", () => {
    const s = subscriptionContractPayload.parse(sample("subscription_contracts/create"));
    expect(s).toMatchObject({ id: "7103183873", customer_id: "1", currency_code: "CAD", status: "active", origin_order_id: "1", revision_id: "8906927309", lines: [] });
    expect(s.billing_policy).toStrictEqual({ interval: "week", interval_count: 4, min_cycles: 1, max_cycles: 2 });
  });

  it("messy contracts: upper-case status and interval, the customer's gid preferred, prices of either shape", () => {
    const s = subscriptionContractPayload.parse({
      id: 10,
      customer_id: 1,
      admin_graphql_api_customer_id: "gid://shopify/Customer/99",
      status: "PAUSED",
      billing_policy: { interval: "MONTH" },
      lines: [
        { title: " ", quantity: 1, current_price: 12.5, variant_image: "https://cdn.example/v.png", selling_plan_id: 4, selling_plan_name: "Monthly" },
        { title: "Box", current_price: { amount: "9.00", currency_code: "cad" }, variant_image: { src: "https://cdn.example/w.png" } },
      ],
    });
    expect(s).toMatchObject({ id: "10", customer_id: "99", status: "paused", billing_policy: { interval: "month", interval_count: null } });
    expect(s.lines[0]).toMatchObject({ title: null, current_price: "12.5", variant_image: "https://cdn.example/v.png", selling_plan_id: "4", selling_plan_name: "Monthly", sku: null });
    expect(s.lines[1]).toMatchObject({ title: "Box", current_price: { amount: "9.00", currency_code: "CAD" }, variant_image: { src: "https://cdn.example/w.png", alt: null } });
    expect(subscriptionContractPayload.parse({ id: 10 })).toMatchObject({ customer_id: null, lines: [], billing_policy: null });
    expect(subscriptionContractPayload.parse({ id: 10, customer_id: 3 }).customer_id).toBe("3");
    expect(refusal(subscriptionContractPayload, { customer_id: 1 })).toEqual(["id: Subscription contract id is required"]);
  });

  it("billing attempts: the contract, order and attempt from the gids; without a contract refused", () => {
    const a = subscriptionBillingAttemptPayload.parse(sample("subscription_billing_attempts/failure"));
    expect(a).toMatchObject({ id: null, order_id: "1", subscription_contract_id: "2197742298", idempotency_key: "9a453d81-d41d-403e-806f-714dee215ff9", error_code: null });
    const messy = subscriptionBillingAttemptPayload.parse({
      id: 5,
      admin_graphql_api_id: "gid://shopify/SubscriptionBillingAttempt/6",
      order_id: 7,
      subscription_contract_id: 8,
      idempotency_key: 1234,
      error_code: "payment_method_declined",
    });
    expect(messy).toMatchObject({ id: "6", order_id: "7", subscription_contract_id: "8", idempotency_key: "1234", error_code: "payment_method_declined", error_message: null });
    expect(
      subscriptionBillingAttemptPayload.parse({ subscription_contract_id: 8, admin_graphql_api_subscription_contract_id: "gid://shopify/SubscriptionContract/80", admin_graphql_api_order_id: "gid://shopify/Order/70" }),
    ).toMatchObject({ id: null, order_id: "70", subscription_contract_id: "80" });
    expect(refusal(subscriptionBillingAttemptPayload, { order_id: 1 })).toEqual(["subscription_contract_id: subscription_contract_id is required"]);
  });

  it("skipped billing cycles: the contract, the cycle and its times in UTC; without a contract refused", () => {
    expect(subscriptionBillingCyclePayload.parse(sample("subscription_billing_cycles/skip"))).toMatchObject({
      subscription_contract_id: "9322892687",
      cycle_index: 1,
      cycle_start_at: "2022-10-01T04:00:00.000Z",
      cycle_end_at: "2022-11-01T04:00:00.000Z",
      billing_attempt_expected_date: "2022-11-01T04:00:00.000Z",
      skipped: true,
    });
    expect(
      subscriptionBillingCyclePayload.parse({ subscription_contract_id: 1, admin_graphql_api_subscription_contract_id: "gid://shopify/SubscriptionContract/2" }),
    ).toStrictEqual({
      subscription_contract_id: "2",
      admin_graphql_api_subscription_contract_id: "gid://shopify/SubscriptionContract/2",
      cycle_index: null,
      cycle_start_at: null,
      cycle_end_at: null,
      billing_attempt_expected_date: null,
      skipped: null,
    });
    expect(refusal(subscriptionBillingCyclePayload, { cycle_index: 1 })).toEqual(["subscription_contract_id: subscription_contract_id is required"]);
  });
});
