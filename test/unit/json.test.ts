import { describe, expect, it } from "vitest";
import { parseShopifyJson, ShopifyJsonError } from "~/sync/json";

// What the app makes of a webhook body before planning: the reason a bad body is recorded with, and
// text that PostgreSQL's jsonb can store.
describe("a webhook body", () => {
  it("that is not text, blank or not JSON is refused with a reason naming the problem", () => {
    expect(() => parseShopifyJson(42 as unknown as string)).toThrow(
      expect.objectContaining({ name: "ShopifyJsonError", message: "Webhook body must be a string, got number" }),
    );
    expect(() => parseShopifyJson(" \n\t ")).toThrow(new ShopifyJsonError("Webhook body is empty"));
    let caught: unknown;
    try {
      parseShopifyJson('{"id": 1,');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ShopifyJsonError);
    expect((caught as Error).message).toMatch(/^Webhook body is not valid JSON: .+/);
    expect((caught as Error).cause).toBeInstanceOf(Error);
  });

  it("keeps a Shopify id beyond 2^53 exactly, in canonical form, and other numbers as numbers", () => {
    expect(parseShopifyJson('{"id": 820982911946154508, "n": -9007199254740993, "q": 3, "p": 19.5}')).toEqual({
      id: "820982911946154508",
      n: "-9007199254740993",
      q: 3,
      p: 19.5,
    });
  });

  it("replaces NUL and unpaired surrogates in values and keys, keeping the rest and real emoji", () => {
    const body = parseShopifyJson(String.raw`{"note": "a\u0000b", "hi\ud800": "x\udc00y", "emoji": "\ud83d\ude00", "list": ["\u0000"]}`);
    expect(body).toEqual({ note: "a\uFFFDb", "hi\uFFFD": "x\uFFFDy", emoji: "😀", list: ["\uFFFD"] });
  });

  it("leaves objects with clean keys as they are", () => {
    expect(parseShopifyJson('{"a": {"b": [1, {"c": null}]}, "d": true}')).toEqual({ a: { b: [1, { c: null }] }, d: true });
  });
});
