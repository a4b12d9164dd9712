import { Badge, BlockStack, Box, Card, InlineGrid, Layout, Text } from "@shopify/polaris";

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

/** Why an inactive person gets no email, when statusDetails says so. */
const NOT_RECEIVING = new Set(["unconfirmed", "unsubscribed", "blocked"]);
const BOUNCED = "Bounced or suppressed";

/**
 * A person's status in words. `status` decides whether they receive email: it also reflects hard
 * bounces and suppression (spec §2.2), so an inactive person whose statusDetails still says
 * "confirmed" reads "Bounced or suppressed", never "Subscribed".
 */
export function personStatusLabel(status: string, details: string | null): string {
  if (status === "active") return statusLabel("active");
  if (status === "inactive") return details && NOT_RECEIVING.has(details) ? statusLabel(details) : BOUNCED;
  return statusLabel(details ?? status);
}

export function PersonStatus({ status, details }: { status: string; details: string | null }) {
  const label = personStatusLabel(status, details);
  return <Badge tone={status === "active" ? "success" : details === "blocked" || label === BOUNCED ? "critical" : undefined}>{label}</Badge>;
}

/** Subscribed, waiting for confirmation and unsubscribed contacts: the service's totals per status. */
export function ConsentCounts({ counts }: { counts: { subscribed: number; waiting: number; unsubscribed: number; blocked: number } }) {
  const cells: [string, number, string][] = [
    [statusLabel("confirmed"), counts.subscribed, "Receive your campaigns"],
    ["Waiting for confirmation", counts.waiting, "Sent a confirmation email; receive nothing until they confirm"],
    [statusLabel("unsubscribed"), counts.unsubscribed, "Asked not to receive email"],
    [statusLabel("blocked"), counts.blocked, "Bounced or suppressed by the service"],
  ];
  return (
    <Layout.Section>
      <InlineGrid columns={{ xs: 2, md: 4 }} gap="400">
        {cells.map(([label, n, help]) => (
          <Card key={label}>
            <BlockStack gap="100">
              <Text as="p" variant="bodySm" tone="subdued">
                {label}
              </Text>
              <Text as="p" variant="headingLg">
                <span data-consent={label}>{new Intl.NumberFormat("en-US").format(n)}</span>
              </Text>
              <Text as="p" variant="bodySm" tone="subdued">
                {help}
              </Text>
            </BlockStack>
          </Card>
        ))}
      </InlineGrid>
      {counts.waiting > 0 && (
        <Box paddingBlockStart="200">
          <Text as="p" tone="caution">
            <span data-consent-waiting-hint>
              {new Intl.NumberFormat("en-US").format(counts.waiting)} {counts.waiting === 1 ? "contact was" : "contacts were"} sent a confirmation email and
              receive none of your campaigns until they confirm. Settings decides whether customers who subscribed at Shopify must confirm again.
            </span>
          </Text>
        </Box>
      )}
    </Layout.Section>
  );
}
