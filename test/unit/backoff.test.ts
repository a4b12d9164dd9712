import { afterEach, describe, expect, it, vi } from "vitest";
import { backoffMs, leaseFor, MIN_RETRY_AFTER_MS, retryDelayMs } from "~/pipeline/policy";

const policy = { backoffBaseMs: 2_000, backoffCapMs: 15 * 60_000 };
// Math.random is pinned so the jitter's bounds are checked: full jitter waits between 0 and the
// step's ceiling (base × 2^(attempt-1), at most the cap).
const withRandom = (value: number) => vi.spyOn(Math, "random").mockReturnValue(value);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the wait before a failed call is retried", () => {
  it("doubles its ceiling with each attempt, from the base", () => {
    withRandom(0.999_999_99);
    expect([1, 2, 3, 4].map((attempt) => backoffMs(attempt, policy))).toEqual([2_000, 4_000, 8_000, 16_000]);
  });

  it("treats attempt 0 (or less) like the first", () => {
    withRandom(0.999_999_99);
    expect(backoffMs(0, policy)).toBe(2_000);
    expect(backoffMs(-5, policy)).toBe(2_000);
  });

  it("never exceeds the cap, however many attempts (2^attempt would overflow)", () => {
    withRandom(0.999_999_99);
    expect(backoffMs(11, policy)).toBe(policy.backoffCapMs);
    expect(backoffMs(5_000, policy)).toBe(policy.backoffCapMs);
  });

  it("is a random share of the ceiling, in whole milliseconds, and may be no wait at all", () => {
    withRandom(0);
    expect(backoffMs(3, policy)).toBe(0);
    withRandom(0.5);
    expect(backoffMs(3, policy)).toBe(4_000);
    withRandom(0.123_456);
    expect(backoffMs(1, policy)).toBe(247);
  });

  it("waits what the service's Retry-After asks, rounded, above the floor and up to the cap", () => {
    withRandom(0);
    expect(retryDelayMs(1, policy, 2_500.4)).toBe(2_500);
    expect(retryDelayMs(1, policy, 0)).toBe(2_000);
    expect(retryDelayMs(1, { backoffBaseMs: 10, backoffCapMs: 60_000 }, 0)).toBe(MIN_RETRY_AFTER_MS);
    expect(retryDelayMs(1, policy, 10 * 60 * 60_000)).toBe(policy.backoffCapMs);
  });

  it("backs off on its own when Retry-After is missing, negative or not a finite number", () => {
    withRandom(0.5);
    for (const retryAfterMs of [undefined, -1, Number.NaN, Infinity]) {
      expect(retryDelayMs(3, policy, retryAfterMs), String(retryAfterMs)).toBe(4_000);
    }
  });
});

describe("a worker's lease on the calls it claimed", () => {
  it("is the policy's, stretched to four service timeouts when those are longer", () => {
    expect(leaseFor({ leaseMs: 60_000 }, 10_000)).toBe(60_000);
    expect(leaseFor({ leaseMs: 60_000 }, 30_000)).toBe(120_000);
  });
});
