import { FormLayout, Select } from "@shopify/polaris";
import { DateTime } from "luxon";
import { useMemo } from "react";
import { DateField } from "./DateField";

const pad = (n: number) => String(n).padStart(2, "0");

/** Every quarter hour of a day: "09:30" → "9:30 AM". */
const TIMES = Array.from({ length: 96 }, (_, i) => {
  const h = Math.floor(i / 4);
  const m = (i % 4) * 15;
  return { value: `${pad(h)}:${pad(m)}`, label: `${h % 12 === 0 ? 12 : h % 12}:${pad(m)} ${h < 12 ? "AM" : "PM"}` };
});

/** "2027-01-15T09:30" → { date: "2027-01-15", time: "09:30" }. */
export function splitLocal(local: string): { date: string; time: string } {
  const [date = "", time = ""] = local.split("T");
  return { date, time: time.slice(0, 5) };
}

/**
 * The send time as the merchant picks it: a day in Polaris' calendar (days before today in the
 * store's zone cannot be picked) and a time of day, both in the store's time zone. `value` and
 * `onChange` carry "yyyy-mm-ddThh:mm", what the schedule form posts as `scheduledAt`; an incomplete
 * pick keeps what was picked so far.
 */
export function ScheduleField({ value, onChange, zone, error }: { value: string; onChange: (v: string) => void; zone: string; error?: string }) {
  const { date, time } = splitLocal(value);
  // Today in the store's zone, as a local calendar day for the date picker.
  const today = useMemo(() => {
    const d = DateTime.now().setZone(zone);
    return new Date(d.year, d.month - 1, d.day);
  }, [zone]);
  const set = (next: { date?: string; time?: string }) => onChange(`${next.date ?? date}T${next.time ?? (time || "09:00")}`);
  return (
    <FormLayout.Group condensed>
      <DateField label="Send on" value={date} onChange={(d) => set({ date: d })} error={error} disableDatesBefore={today} />
      <Select label="Time" options={[{ label: "Pick a time", value: "", disabled: true }, ...TIMES]} value={time} onChange={(t) => set({ time: t })} helpText={`In your store's time zone, ${zone}.`} />
    </FormLayout.Group>
  );
}
