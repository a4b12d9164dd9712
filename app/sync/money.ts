/**
 * Exact money arithmetic for Shopify amounts.
 *
 * Shopify sends money as decimal strings ("12.50"), sometimes as JSON numbers (refund subtotals).
 * Everything is converted to integer minor units (bigint) of the currency, summed/multiplied there,
 * and only turned into a JS number at the very end, so 19.99 × 3 is 59.97 and never 59.970000000000006.
 */

/** A decimal amount: "12.50", "-3", 12.5. */
export type MoneyInput = string | number;

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;
/**
 * ISO 4217 minor units for the currencies that do not use 2 (list one, 2024 edition).
 * A fixed table rather than Intl: ICU/CLDR says 0 for HUF, IDR, COP… (cash rounding) while
 * ISO and Shopify allow cents there, and the result must not change with the Node build.
 */
const ISO_4217_MINOR_UNITS: Readonly<Record<string, number>> = {
  // zero-decimal
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  // three-decimal
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  // four-decimal
  CLF: 4, UYW: 4,
};

/**
 * Number of minor-unit digits of an ISO 4217 currency: JPY/KRW/VND/CLP/ISK → 0, USD/EUR/HUF → 2,
 * BHD/KWD/JOD/OMR/TND → 3. Unknown or missing codes use 2.
 */
export function currencyDigits(currency?: string | null): number {
  if (!currency) return 2;
  return ISO_4217_MINOR_UNITS[currency.trim().toUpperCase()] ?? 2;
}

export class MoneyFormatError extends Error {
  override readonly name = "MoneyFormatError";
}

/** True when the value is a decimal amount this module can parse exactly. */
export function isMoneyLike(value: unknown): value is MoneyInput {
  if (typeof value === "number") return Number.isFinite(value) && !/e/i.test(String(value));
  if (typeof value !== "string") return false;
  const m = DECIMAL.exec(value.trim());
  // Stryker disable next-line StringLiteral: group 2 (\d*) always takes part in a match, so its default is never read
  return m !== null && ((m[2] ?? "") + (m[3] ?? "")).length > 0;
}

/** Canonical decimal string of a money input, without changing its value ("12.5" → "12.5", 89.99 → "89.99"). */
export function canonicalDecimal(value: MoneyInput): string {
  if (!isMoneyLike(value)) throw new MoneyFormatError(`Not a decimal amount: ${String(value)}`);
  // String(number) is the shortest round-trip form, i.e. exactly what the JSON said.
  return typeof value === "number" ? String(value) : value.trim();
}

/**
 * Decimal amount → integer minor units of `currency`. Extra digits beyond the currency's precision
 * are rounded half away from zero ("1500.00" JPY → 1500n, "12.345" USD → 1235n).
 */
export function toMinor(value: MoneyInput, currency?: string | null): bigint {
  const text = canonicalDecimal(value);
  const m = DECIMAL.exec(text);
  // Stryker disable next-line ConditionalExpression,StringLiteral,CallExpression: unreachable, canonicalDecimal has checked the text
  if (!m) throw new MoneyFormatError(`Not a decimal amount: ${text}`);
  // Stryker disable next-line StringLiteral: group 2 (\d*) is always a string, so intPart's default is never used
  const [, sign, intPart = "", fracPart = ""] = m;
  const digits = currencyDigits(currency);
  const kept = fracPart.slice(0, digits).padEnd(digits, "0");
  // Stryker disable next-line StringLiteral: BigInt("") is 0n too; the "0" is for the reader
  let minor = BigInt((intPart || "0") + kept);
  const dropped = fracPart.slice(digits);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: "".charCodeAt(0) is NaN, never >= 53; the length check is for the reader
  if (dropped.length > 0 && dropped.charCodeAt(0) >= 53 /* '5' */) minor += 1n;
  return sign === "-" ? -minor : minor;
}

/** Integer minor units → JS number in major units (the nearest double to the exact decimal). */
export function fromMinor(minor: bigint, currency?: string | null): number {
  const digits = currencyDigits(currency);
  // Dividing two exactly representable integers yields the correctly rounded double of the
  // decimal, i.e. the same double as the literal 59.97.
  return Number(minor) / 10 ** digits;
}

/** Integer minor units → decimal string with the currency's digits ("59.97", "1500"). */
export function minorToDecimal(minor: bigint, currency?: string | null): string {
  const digits = currencyDigits(currency);
  const negative = minor < 0n;
  const abs = (negative ? -minor : minor).toString().padStart(digits + 1, "0");
  const whole = abs.slice(0, abs.length - digits);
  const frac = digits === 0 ? "" : `.${abs.slice(abs.length - digits)}`;
  return `${negative ? "-" : ""}${whole}${frac}`;
}

/** Decimal amount → number, rounded to the currency's minor unit. */
export function moneyToNumber(value: MoneyInput, currency?: string | null): number {
  return fromMinor(toMinor(value, currency), currency);
}

/** Like moneyToNumber but null/undefined/unparsable → undefined (lenient payload fields). */
export function optionalMoney(value: MoneyInput | null | undefined, currency?: string | null): number | undefined {
  if (!isMoneyLike(value)) return undefined;
  return moneyToNumber(value, currency);
}

/** Exact sum in minor units; null/undefined entries count as zero. */
export function sumMinor(values: ReadonlyArray<MoneyInput | null | undefined>, currency?: string | null): bigint {
  let total = 0n;
  for (const v of values) if (v !== null && v !== undefined) total += toMinor(v, currency);
  return total;
}

/** Exact sum as a number. */
export function sumMoney(values: ReadonlyArray<MoneyInput | null | undefined>, currency?: string | null): number {
  return fromMinor(sumMinor(values, currency), currency);
}

/** unit price × quantity, exact ("19.99" × 3 → 59.97). */
export function multiplyMinor(unit: MoneyInput, quantity: number, currency?: string | null): bigint {
  if (!Number.isSafeInteger(quantity)) throw new MoneyFormatError(`Quantity must be an integer: ${quantity}`);
  return toMinor(unit, currency) * BigInt(quantity);
}

/** Compares two decimal amounts exactly: -1, 0 or 1. */
export function compareMoney(a: MoneyInput, b: MoneyInput, currency?: string | null): -1 | 0 | 1 {
  const x = toMinor(a, currency);
  const y = toMinor(b, currency);
  return x < y ? -1 : x > y ? 1 : 0;
}
