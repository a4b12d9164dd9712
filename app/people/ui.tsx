import { Badge } from "@shopify/polaris";

/** A person's status in words, the same on the badges and in the status filter. */
const STATUS_LABEL: Record<string, string> = {
  active: "Subscribed",
  confirmed: "Subscribed",
  inactive: "Not subscribed",
  unconfirmed: "Not confirmed yet",
  unsubscribed: "Unsubscribed",
  blocked: "Blocked",
};

export const statusLabel = (status: string): string => STATUS_LABEL[status] ?? status;

/** The status filter: §4.1's values (`active` is the same as `confirmed`, so only one is offered). */
export const STATUS_FILTERS = [
  { label: "Any status", value: "" },
  { label: statusLabel("active"), value: "active" },
  { label: "Not subscribed (any reason)", value: "inactive" },
  { label: statusLabel("unconfirmed"), value: "unconfirmed" },
  { label: statusLabel("unsubscribed"), value: "unsubscribed" },
  { label: statusLabel("blocked"), value: "blocked" },
];

export function PersonStatus({ status, details }: { status: string; details: string | null }) {
  return <Badge tone={status === "active" ? "success" : details === "blocked" ? "critical" : undefined}>{statusLabel(details ?? status)}</Badge>;
}
