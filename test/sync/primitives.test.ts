/** json.ts, money.ts, settings.ts, payload primitives. */
import { describe, expect, it } from "vitest";
import { parseShopifyJson, ShopifyJsonError } from "../../app/sync/json";
import {
  currencyDigits,
  minorToDecimal,
  moneyToNumber,
  multiplyMinor,
  fromMinor,
  sumMoney,
  toMinor,
} from "../../app/sync/money";
import { customerPayload, money, shopifyId, tagList, timestamp } from "../../app/sync/payloads";
import { defaultSettings, parseSettings } from "../../app/sync/settings";
import type { Json } from "./fixtures";

describe("parseShopifyJson", () => {
  it("keeps integers beyond 2^53 as exact decimal strings, others as numbers", () => {
    const v = parseShopifyJson('{"a": 820982911946154508, "b": 42, "c": 19.99, "d": -9007199254740993, "e": [1e3], "f": 9007199254740991}') as Json;
    expect(v).toEqual({ a: "820982911946154508", b: 42, c: 19.99, d: "-9007199254740993", e: [1000], f: 9007199254740991 });
  });

  it("throws a clear error on bad JSON", () => {
    expect(() => parseShopifyJson("{bad")).toThrow(ShopifyJsonError);
    expect(() => parseShopifyJson("{bad")).toThrow(/not valid JSON/);
    expect(() => parseShopifyJson("")).toThrow(/empty/);
  });

  it("duplicate keys: last wins, like JSON.parse", () => {
    expect(parseShopifyJson('{"a":1,"a":2}')).toEqual({ a: 2 });
  });
});

describe("money", () => {
  it("no float drift", () => {
    expect(fromMinor(multiplyMinor("19.99", 3, "USD"), "USD")).toBe(59.97);
    expect(sumMoney(["0.10", "0.20"], "USD")).toBe(0.3);
    expect(sumMoney(Array(250).fill("19.99"), "USD")).toBe(4997.5);
    expect(moneyToNumber("12.50", "EUR")).toBe(12.5);
  });

  it("zero-decimal and three-decimal currencies", () => {
    expect(moneyToNumber("1500", "JPY")).toBe(1500);
    expect(moneyToNumber("1500.00", "JPY")).toBe(1500);
    expect(toMinor("1500", "JPY")).toBe(1500n);
    for (const c of ["JPY", "KRW", "VND", "CLP", "ISK"]) expect(currencyDigits(c)).toBe(0);
    expect(currencyDigits("HUF")).toBe(2);
    expect(currencyDigits("KWD")).toBe(3);
    expect(currencyDigits(null)).toBe(2);
    expect(minorToDecimal(1500n, "JPY")).toBe("1500");
    expect(minorToDecimal(-5n, "USD")).toBe("-0.05");
    expect(minorToDecimal(1234n, "KWD")).toBe("1.234");
  });

  it("rounds extra digits half away from zero; accepts JSON numbers", () => {
    expect(toMinor("12.345", "USD")).toBe(1235n);
    expect(toMinor("-12.345", "USD")).toBe(-1235n);
    expect(toMinor(89.99, "USD")).toBe(8999n);
    expect(() => toMinor("12,50", "USD")).toThrow();
  });
});

describe("payload primitives", () => {
  it("shopifyId: strings out, gid numbers, no lossy numbers", () => {
    expect(shopifyId.parse(123)).toBe("123");
    expect(shopifyId.parse("820982911946154508")).toBe("820982911946154508");
    expect(shopifyId.parse("gid://shopify/Customer/706405506930370084")).toBe("706405506930370084");
    expect(shopifyId.safeParse(1.5).success).toBe(false);
  });

  it("the gid wins over a rounded id", () => {
    const c = customerPayload.parse({ id: 706405506930370000, admin_graphql_api_id: "gid://shopify/Customer/706405506930370084" });
    expect(c.id).toBe("706405506930370084");
    expect(c.addresses).toEqual([]);
    expect(c.email).toBeNull();
  });

  it("money, timestamps and tags", () => {
    expect(money.parse("12.50")).toBe("12.50");
    expect(money.parse(12.5)).toBe("12.5");
    expect(money.parse("")).toBeNull();
    expect(money.safeParse("abc").success).toBe(false);
    expect(timestamp.parse("2021-12-31T19:00:00-05:00")).toBe("2022-01-01T00:00:00.000Z");
    expect(timestamp.parse("not a date")).toBeNull();
    expect(tagList.parse(" a, b,,a ,c ")).toEqual(["a", "b", "c"]);
  });
});

describe("settings", () => {
  it("privacy-safe defaults; consent as the customer gave it to Shopify", () => {
    expect(defaultSettings).toEqual({
      optInMode: "trust_shopify",
      syncNonSubscribers: false,
      deleteContactOnCustomerDelete: false,
      eraseContactOnRedact: true,
      abandonmentDelayMinutes: 60,
      orderCompletedOn: "paid_and_fulfilled",
      customerEventsCreateContacts: false,
      trackerMode: "modern",
      storefrontEvents: false,
      source: "shopify",
      // Confirmed form signups become Shopify customers (Built for Shopify: data to and from Shopify);
      // shops connected before the setting existed were migrated to off.
      signupsToShopify: true,
    });
    expect(parseSettings(null)).toEqual(defaultSettings);
    expect(parseSettings("")).toEqual(defaultSettings);
  });

  it("parses JSON text and objects, enforces bounds", () => {
    expect(parseSettings('{"optInMode":"trust_shopify","abandonmentDelayMinutes":15}')).toMatchObject({ optInMode: "trust_shopify", abandonmentDelayMinutes: 15 });
    expect(() => parseSettings({ abandonmentDelayMinutes: 10 })).toThrow();
    expect(() => parseSettings({ abandonmentDelayMinutes: 4321 })).toThrow();
    expect(() => parseSettings({ optInMode: "whatever" })).toThrow();
    expect(parseSettings({ unknown: 1 })).toEqual(defaultSettings);
  });
});
