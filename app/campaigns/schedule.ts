/**
 * Schedule times: the picker works in the store's time zone; the service takes an ISO 8601 time
 * with an explicit offset and stores it in UTC to the minute, seconds rounded up (§3.1, §8).
 * Time zone arithmetic is luxon's (Intl underneath), never our own.
 */
import { DateTime } from "luxon";
import { formatInZone } from "../admin/time-zone";

/** The picker's value: a wall-clock time, seconds optional. */
export const LOCAL_DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A wall-clock time in `zone` as ISO 8601 with that zone's offset, or null when it is not a time. */
export function localToIso(local: string, zone: string): string | null {
  if (!LOCAL_DATETIME_RE.test(local)) return null;
  const dt = DateTime.fromISO(local, { zone });
  return dt.isValid ? dt.toISO({ suppressMilliseconds: true }) : null;
}

/** What the service will store for `iso`: UTC, to the minute, seconds rounded up. */
export function serviceRounded(iso: string): string | null {
  const dt = DateTime.fromISO(iso, { setZone: true });
  if (!dt.isValid) return null;
  const utc = dt.toUTC();
  const floor = utc.startOf("minute");
  return (floor < utc ? floor.plus({ minutes: 1 }) : floor).toISO({ suppressMilliseconds: true });
}

/** Both readings of a stored time: the store's zone and UTC. */
export function scheduleReadings(iso: string, zone: string): { local: string; utc: string; zone: string } {
  return { local: formatInZone(iso, zone), utc: formatInZone(iso, "UTC"), zone };
}

/** The picker's value for a stored time (for "change the schedule"). */
export function isoToLocalInput(iso: string, zone: string): string {
  return DateTime.fromISO(iso).setZone(zone).toFormat("yyyy-MM-dd'T'HH:mm");
}

const isUtc = (zone: string) => zone === "UTC" || zone === "Etc/UTC";

/**
 * One reading of a stored time for the merchant: the store's zone, with UTC (as the service
 * stores it) in brackets only when the store is elsewhere: "Jan 15, 2027, 9:31 AM EST (2:31 PM UTC)".
 */
export function scheduleText(iso: string, zone: string): string {
  const local = formatInZone(iso, zone);
  if (isUtc(zone)) return local;
  const utc = new Intl.DateTimeFormat("en-US", { timeStyle: "short", timeZone: "UTC" }).format(new Date(iso));
  return `${local} (${utc} UTC)`;
}
