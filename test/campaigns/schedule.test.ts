// The schedule picker's time arithmetic (luxon over Intl): offsets, summer time, the service's rounding.
import { describe, expect, it } from "vitest";
import { isValidZone } from "~/admin/time-zone";
import { localToIso, scheduleReadings, serviceRounded } from "~/campaigns/schedule";

describe("schedule times", () => {
  it("a wall-clock time in the store's zone becomes ISO 8601 with that zone's offset", () => {
    expect(localToIso("2027-01-15T09:30", "America/New_York")).toBe("2027-01-15T09:30:00-05:00");
    expect(localToIso("2027-07-15T09:30:20", "America/New_York")).toBe("2027-07-15T09:30:20-04:00");
    expect(localToIso("2027-01-15T09:30", "Asia/Kolkata")).toBe("2027-01-15T09:30:00+05:30");
    expect(localToIso("2027-01-15T09:30", "UTC")).toBe("2027-01-15T09:30:00Z");
  });

  it("a time that does not exist (the spring-forward gap) moves forward, never backward", () => {
    const iso = localToIso("2027-03-14T02:30", "America/New_York")!;
    expect(Date.parse(iso)).toBe(Date.parse("2027-03-14T07:30:00Z"));
  });

  it("not a time → null", () => {
    expect(localToIso("tomorrow", "UTC")).toBeNull();
    expect(localToIso("2027-02-30T10:00", "UTC")).toBeNull();
  });

  it("rounds seconds up to the next minute in UTC, as the service stores it", () => {
    expect(serviceRounded("2027-01-15T09:30:20-05:00")).toBe("2027-01-15T14:31:00Z");
    expect(serviceRounded("2027-01-15T09:30:00-05:00")).toBe("2027-01-15T14:30:00Z");
    expect(serviceRounded("2027-01-15T09:30:00.001-05:00")).toBe("2027-01-15T14:31:00Z");
  });

  it("shows a stored time in the store's zone and in UTC", () => {
    expect(scheduleReadings("2027-01-15T14:31:00Z", "America/New_York")).toEqual({ local: "Jan 15, 2027, 9:31 AM EST", utc: "Jan 15, 2027, 2:31 PM UTC", zone: "America/New_York" });
    expect(isValidZone("Europe/Paris")).toBe(true);
    expect(isValidZone("Mars/Olympus")).toBe(false);
  });
});
