import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nextTry, PIPELINE_POLICY, retryRule, type PipelinePolicy } from "~/pipeline/policy";

const policy: PipelinePolicy = { ...PIPELINE_POLICY };
const NOW = Date.UTC(2026, 10, 28, 12);
const ago = (ms: number) => new Date(NOW - ms);

// Full jitter pinned at its ceiling: the waits below are the backoff's steps (2 s, 4 s, 8 s, …).
beforeEach(() => {
  vi.spyOn(Math, "random").mockReturnValue(1);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("one decision for every retried work: try again after a wait, or give up", () => {
  it("a service call: retried with backoff until the attempt bound", () => {
    expect(nextTry("serviceCall", { attempts: 3, since: ago(0) }, policy, NOW)).toEqual({ giveUp: false, delayMs: 8_000, rest: false });
    expect(nextTry("serviceCall", { attempts: policy.maxAttempts - 1, since: ago(0) }, policy, NOW).giveUp).toBe(false);
    expect(nextTry("serviceCall", { attempts: policy.maxAttempts, since: ago(0) }, policy, NOW)).toEqual({ giveUp: true, delayMs: policy.backoffCapMs });
  });

  it("a service call: a 429 with Retry-After waits as told and uses up no attempt, but the deadline still ends it", () => {
    expect(nextTry("serviceCall", { attempts: policy.maxAttempts, since: ago(0), retryAfterMs: 30_000, flowControl: true }, policy, NOW)).toEqual({
      giveUp: false,
      delayMs: 30_000,
      rest: false,
    });
    const deadline = policy.retryDeadlineMs;
    expect(nextTry("serviceCall", { attempts: 1, since: ago(deadline - 30_000), retryAfterMs: 30_000, flowControl: true }, policy, NOW).giveUp).toBe(false);
    expect(nextTry("serviceCall", { attempts: 1, since: ago(deadline - 29_999), retryAfterMs: 30_000, flowControl: true }, policy, NOW).giveUp).toBe(true);
  });

  it("a service call: gives up now when its next try would start after the deadline", () => {
    const deadline = policy.retryDeadlineMs;
    expect(nextTry("serviceCall", { attempts: 2, since: ago(deadline - 4_000) }, policy, NOW).giveUp).toBe(false);
    expect(nextTry("serviceCall", { attempts: 2, since: ago(deadline - 3_999) }, policy, NOW)).toEqual({ giveUp: true, delayMs: 4_000 });
  });

  it("planning and reminder timers: a few tries, or none when the data cannot be used", () => {
    for (const work of ["planning", "reminderTimer"] as const) {
      expect(nextTry(work, { attempts: policy.maxPlanAttempts - 1 }, policy, NOW)).toEqual({ giveUp: false, delayMs: 2_000 * 2 ** (policy.maxPlanAttempts - 2), rest: false });
      expect(nextTry(work, { attempts: policy.maxPlanAttempts }, policy, NOW).giveUp).toBe(true);
      expect(nextTry(work, { attempts: 1, permanent: true }, policy, NOW).giveUp).toBe(true);
    }
  });

  it("look-ups and reconciliation sweeps: retried until their deadline has passed, whatever the attempts", () => {
    const cases = [
      ["lookup", policy.lookupDeadlineMs],
      ["reconcileSweep", policy.reconcileDeadlineMs],
    ] as const;
    for (const [work, deadline] of cases) {
      expect(nextTry(work, { attempts: 10_000, since: ago(deadline) }, policy, NOW)).toEqual({ giveUp: false, delayMs: policy.backoffCapMs, rest: false });
      expect(nextTry(work, { attempts: 1, since: ago(deadline + 1) }, policy, NOW).giveUp).toBe(true);
      // No arrival given: only the wait is asked for.
      expect(nextTry(work, { attempts: 1 }, policy, NOW)).toEqual({ giveUp: false, delayMs: 2_000, rest: false });
    }
    expect(nextTry("lookup", { attempts: 1, since: ago(0), permanent: true }, policy, NOW).giveUp).toBe(true);
  });

  it("a history import step: waits 5 s more per try, and fails the import after 5", () => {
    expect(nextTry("historyImportStep", { attempts: 1 }, policy, NOW)).toEqual({ giveUp: false, delayMs: 5_000, rest: false });
    expect(nextTry("historyImportStep", { attempts: 4 }, policy, NOW)).toEqual({ giveUp: false, delayMs: 20_000, rest: false });
    expect(nextTry("historyImportStep", { attempts: 5 }, policy, NOW).giveUp).toBe(true);
  });

  it("a segment member import: stops after 8 failed pages in a row", () => {
    expect(nextTry("segmentImport", { attempts: 7 }, policy, NOW).giveUp).toBe(false);
    expect(nextTry("segmentImport", { attempts: 8 }, policy, NOW)).toEqual({ giveUp: true, delayMs: 256_000 });
  });

  it("a sweep of the service's people never gives up: after 5 tries it rests until its next interval", () => {
    expect(nextTry("serviceSweep", { attempts: 4 }, policy, NOW)).toEqual({ giveUp: false, delayMs: 16_000, rest: false });
    expect(nextTry("serviceSweep", { attempts: 5 }, policy, NOW)).toEqual({ giveUp: false, delayMs: policy.consentReturnEveryMs, rest: true });
    expect(nextTry("serviceSweep", { attempts: 50, since: ago(365 * 86_400_000) }, policy, NOW).giveUp).toBe(false);
  });

  it("the numbers are the policy's, so a test or a benchmark can change them", () => {
    expect(retryRule("serviceCall", { ...policy, maxAttempts: 3 })).toMatchObject({ maxAttempts: 3 });
    expect(nextTry("segmentImport", { attempts: 2 }, { ...policy, maxSegmentImportAttempts: 2 }, NOW).giveUp).toBe(true);
    expect(nextTry("serviceSweep", { attempts: 2 }, { ...policy, sweepTriesPerInterval: 2, consentReturnEveryMs: 7 }, NOW)).toEqual({ giveUp: false, delayMs: 7, rest: true });
  });
});
