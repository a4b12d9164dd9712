import { describe, expect, it } from "vitest";
import {
  canonicalDecimal,
  compareMoney,
  currencyDigits,
  isMoneyLike,
  moneyToNumber,
  multiplyMinor,
  optionalMoney,
  sumMoney,
  toMinor,
} from "~/sync/money";

// Amounts as Shopify sends them (decimal strings, sometimes padded, sometimes JSON numbers) and the
// number the marketing service receives for them.
describe("money amounts sent to the service", () => {
  it("reads an amount with spaces around it, and a currency code in any case or padding", () => {
    expect(moneyToNumber(" 12.50 ", "USD")).toBe(12.5);
    expect(currencyDigits(" jpy ")).toBe(0);
    expect(moneyToNumber("1500.40", " jpy ")).toBe(1500);
  });

  it("leaves a field out when Shopify sends null, nothing or something that is not an amount", () => {
    expect(optionalMoney(null, "USD")).toBeUndefined();
    expect(optionalMoney(undefined, "USD")).toBeUndefined();
    expect(optionalMoney("free", "USD")).toBeUndefined();
    expect(optionalMoney("12.345", "USD")).toBe(12.35);
    expect(optionalMoney(0, "USD")).toBe(0);
  });

  it("accepts only decimal amounts: a lone sign or point, an empty text or a non-string is none", () => {
    for (const bad of ["", " ", ".", "+", "-", "+.", "1e3", "12,50", null, undefined, {}, [], true, Number.NaN, Infinity, 1e21]) {
      expect(isMoneyLike(bad), String(bad)).toBe(false);
    }
    for (const good of ["0", "-3", "+3", ".5", "5.", " 7.25 ", 12.5, -0.01]) expect(isMoneyLike(good), String(good)).toBe(true);
  });

  it("sums line amounts exactly, counting missing ones as zero", () => {
    expect(sumMoney([null, "19.99", undefined, "0.01", 10], "USD")).toBe(30);
    expect(sumMoney(["0.1", "0.2"], "USD")).toBe(0.3);
    expect(sumMoney([], "USD")).toBe(0);
  });

  it("refuses a fractional quantity, naming it (the reason recorded for the delivery)", () => {
    expect(multiplyMinor("19.99", 3, "USD")).toBe(5997n);
    expect(() => multiplyMinor("19.99", 1.5, "USD")).toThrow(/integer: 1\.5/);
  });

  it("keeps an amount's digits as Shopify wrote them, and refuses text that is not one", () => {
    expect(canonicalDecimal(" 12.50 ")).toBe("12.50");
    expect(canonicalDecimal(89.99)).toBe("89.99");
    expect(() => canonicalDecimal("12,50")).toThrow(/Not a decimal amount: 12,50/);
  });

  it("names the amount it could not read", () => {
    expect(() => toMinor("12,50", "USD")).toThrow(expect.objectContaining({ name: "MoneyFormatError", message: expect.stringContaining("12,50") }));
  });

  it("compares amounts exactly in both directions", () => {
    expect(compareMoney("2.00", "1.99", "USD")).toBe(1);
    expect(compareMoney("1.99", "2", "USD")).toBe(-1);
    expect(compareMoney("2", "2.000", "USD")).toBe(0);
  });

  it("rounds extra digits half away from zero in the currency's precision", () => {
    expect(toMinor("12.345", "USD")).toBe(1235n);
    expect(toMinor("-12.345", "USD")).toBe(-1235n);
    expect(toMinor("12.344", "USD")).toBe(1234n);
    expect(toMinor(".5", "JPY")).toBe(1n);
    expect(toMinor("1.2345", "KWD")).toBe(1235n);
  });
});
