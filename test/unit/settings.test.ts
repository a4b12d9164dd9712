import { describe, expect, it } from "vitest";
import { defaultSettings, parseSettings } from "~/sync/settings";

// The settings a shop starts with and what the settings form may store (docs/customers-and-consent.md).
describe("shop settings", () => {
  it("start frozen (their values: test/sync/primitives.test.ts)", () => {
    expect(Object.isFrozen(defaultSettings)).toBe(true);
  });

  it("read stored JSON text, with nothing stored meaning the defaults", () => {
    for (const empty of [null, undefined, "", "   ", "{}", {}]) expect(parseSettings(empty)).toEqual(defaultSettings);
    expect(parseSettings('{"syncNonSubscribers": true, "unknown": 1}')).toEqual({ ...defaultSettings, syncNonSubscribers: true });
  });

  it("trim the source and refuse a blank one", () => {
    expect(parseSettings({ source: "  pos  " }).source).toBe("pos");
    expect(() => parseSettings({ source: "   " })).toThrow();
  });

  it("keep the abandoned-cart delay between 15 minutes and 3 days, in whole minutes", () => {
    expect(parseSettings({ abandonmentDelayMinutes: 15 }).abandonmentDelayMinutes).toBe(15);
    expect(parseSettings({ abandonmentDelayMinutes: 4320 }).abandonmentDelayMinutes).toBe(4320);
    for (const bad of [14, 4321, 30.5]) expect(() => parseSettings({ abandonmentDelayMinutes: bad })).toThrow();
  });

  it("accept each documented choice, and refuse any other", () => {
    for (const optInMode of ["double_opt_in", "trust_shopify"]) expect(parseSettings({ optInMode }).optInMode).toBe(optInMode);
    for (const orderCompletedOn of ["paid_and_fulfilled", "paid", "fulfilled"]) {
      expect(parseSettings({ orderCompletedOn }).orderCompletedOn).toBe(orderCompletedOn);
    }
    for (const trackerMode of ["modern", "legacy", "compat"]) expect(parseSettings({ trackerMode }).trackerMode).toBe(trackerMode);
    for (const key of ["optInMode", "orderCompletedOn", "trackerMode"]) expect(() => parseSettings({ [key]: "" })).toThrow();
  });
});
