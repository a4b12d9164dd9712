import { describe, expect, it } from "vitest";
import { backoffMs, MIN_RETRY_AFTER_MS, PIPELINE_POLICY, retryDelayMs } from "~/pipeline/policy";
import { parseRetryAfter } from "~/services/marketing/marketing-error";

describe("the production retry policy", () => {
  it("lets the 24-hour deadline, not the attempt bound, decide when a failing call is given up", () => {
    // Simulate 500 calls failing for a whole day with the production backoff (full jitter).
    let most = 0;
    for (let call = 0; call < 500; call++) {
      let attempts = 1;
      for (let waited = backoffMs(1, PIPELINE_POLICY); waited <= PIPELINE_POLICY.retryDeadlineMs; waited += backoffMs(attempts, PIPELINE_POLICY)) {
        attempts++;
      }
      most = Math.max(most, attempts);
    }
    // About 200 on average; at the old bound of 200, half of a day-long outage died early.
    expect(most).toBeLessThan(PIPELINE_POLICY.maxAttempts);
  });

  it("honours Retry-After up to the backoff cap, and backs off on its own without one", () => {
    expect(retryDelayMs(3, PIPELINE_POLICY, 30_000)).toBe(30_000);
    expect(retryDelayMs(3, PIPELINE_POLICY, 40 * 86_400_000)).toBe(PIPELINE_POLICY.backoffCapMs);
    for (let i = 0; i < 100; i++) expect(retryDelayMs(50, PIPELINE_POLICY)).toBeLessThanOrEqual(PIPELINE_POLICY.backoffCapMs);
  });

  it("never re-sends at once on Retry-After: 0 or a date already past (a 429 gives its attempt back)", () => {
    const floor = Math.max(PIPELINE_POLICY.backoffBaseMs, MIN_RETRY_AFTER_MS);
    const past = parseRetryAfter(new Date(Date.now() - 60_000).toUTCString());
    for (const retryAfterMs of [0, parseRetryAfter("0"), past, 1]) {
      expect(retryDelayMs(1, PIPELINE_POLICY, retryAfterMs)).toBe(floor);
    }
    expect(floor).toBeGreaterThanOrEqual(1_000);
    // A policy whose cap is below the floor (the tests' fast one) keeps its cap.
    expect(retryDelayMs(1, { backoffBaseMs: 5, backoffCapMs: 50 }, 0)).toBe(50);
  });
});
