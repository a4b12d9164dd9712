import { Button, DatePicker, Popover, TextField } from "@shopify/polaris";
import { CalendarIcon } from "@shopify/polaris-icons";
import { useState } from "react";

const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "2026-05-01" as a local calendar day, or null. */
function parseDay(value: string): Date | null {
  const m = YMD.exec(value);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(d.getTime()) ? null : d;
}

const pad = (n: number) => String(n).padStart(2, "0");
const toYmd = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

/**
 * A date in a form as Polaris draws it: a text field (yyyy-mm-dd, typed or picked) with a
 * calendar in a popover, instead of the browser's own date input. Posts `name` as yyyy-mm-dd.
 */
export function DateField({
  label,
  name,
  value,
  onChange,
  error,
  helpText,
  disableDatesBefore,
}: {
  label: string;
  name?: string;
  value: string;
  onChange: (v: string) => void;
  error?: string;
  helpText?: string;
  /** Days before this one cannot be picked in the calendar (typed ones are for the form to refuse). */
  disableDatesBefore?: Date;
}) {
  const [open, setOpen] = useState(false);
  const picked = parseDay(value);
  const [month, setMonth] = useState(() => {
    const d = picked ?? new Date();
    return { month: d.getMonth(), year: d.getFullYear() };
  });
  return (
    <TextField
      label={label}
      name={name}
      value={value}
      onChange={onChange}
      autoComplete="off"
      placeholder="YYYY-MM-DD"
      error={error}
      helpText={helpText}
      connectedRight={
        <Popover
          active={open}
          onClose={() => setOpen(false)}
          activator={
            <Button icon={CalendarIcon} onClick={() => setOpen((o) => !o)} accessibilityLabel={`Pick the ${label.toLowerCase()} date`} />
          }
        >
          <div style={{ padding: 12, width: 280 }}>
            <DatePicker
              month={month.month}
              year={month.year}
              onMonthChange={(m, y) => setMonth({ month: m, year: y })}
              selected={picked ?? undefined}
              disableDatesBefore={disableDatesBefore}
              onChange={({ start }) => {
                onChange(toYmd(start));
                setOpen(false);
              }}
            />
          </div>
        </Popover>
      }
    />
  );
}
