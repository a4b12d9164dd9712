import { Badge } from "@shopify/polaris";

export function PersonStatus({ status, details }: { status: string; details: string | null }) {
  return <Badge tone={status === "active" ? "success" : details === "blocked" ? "critical" : undefined}>{details ?? status}</Badge>;
}
