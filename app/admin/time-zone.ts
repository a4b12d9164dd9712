/**
 * The store's time zone on the admin pages: whether a name is a zone Intl knows, and a moment read
 * in a zone. Time zone arithmetic is luxon's (Intl underneath), never our own.
 */
import { IANAZone } from "luxon";

export function isValidZone(zone: string | null | undefined): zone is string {
  return Boolean(zone) && IANAZone.isValidZone(zone!);
}

/** "Jan 15, 2027, 9:31 AM EST" in `zone`. */
export function formatInZone(iso: string, zone: string): string {
  return new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short", timeZone: zone }).format(new Date(iso)) + ` ${zoneAbbreviation(iso, zone)}`;
}

function zoneAbbreviation(iso: string, zone: string): string {
  if (zone === "UTC" || zone === "Etc/UTC") return "UTC";
  const part = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "short" }).formatToParts(new Date(iso)).find((p) => p.type === "timeZoneName");
  return part?.value ?? zone;
}
