import { describe, expect, it } from "vitest";
import { backoffMs, PIPELINE_POLICY, retryDelayMs } from "~/pipeline/policy";

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
});
