import { Badge } from "@shopify/polaris";

/** The list's status tabs (§4.2 filter values; `sending` also shows `preparing`). */
export const CAMPAIGN_TABS = ["draft", "scheduled", "sending", "sent", "paused", "failed", "all"] as const;

export function StatusBadge({ status }: { status: string }) {
  const tone = status === "sent" ? "success" : status === "scheduled" ? "info" : status === "failed" ? "critical" : status === "paused" ? "warning" : status === "draft" ? undefined : "attention";
  return <Badge tone={tone}>{status === "preparing" ? "Sending (preparing)" : status.charAt(0).toUpperCase() + status.slice(1)}</Badge>;
}

