import { BlockStack, ChoiceList, Text } from "@shopify/polaris";

/** Customers per Shopify email-marketing state (consent-counts.server.ts asks Shopify). */
export interface ShopifyConsentCounts {
  subscribed: number;
  pending: number;
  notSubscribed: number;
  unsubscribed: number;
}

export type OptInMode = "trust_shopify" | "double_opt_in";

const people = (n: number) => `${n.toLocaleString("en-US")} ${n === 1 ? "customer" : "customers"}`;

/**
 * The consent mode as a choice the merchant makes knowingly: each option says what it does to this
 * store's customers who subscribed at Shopify, in numbers from Shopify (counts may be null when
 * Shopify could not be asked: the words then stand without numbers). Posts `optInMode`.
 */
export function ConsentChoice({ value, onChange, counts, error }: { value: OptInMode; onChange: (v: OptInMode) => void; counts: ShopifyConsentCounts | null; error?: string }) {
  const subscribed = counts ? people(counts.subscribed) : "Customers";
  return (
    <BlockStack gap="200">
      <ChoiceList
        title="Email consent of customers who subscribed at Shopify"
        name="optInMode"
        selected={[value]}
        onChange={([v]) => onChange(v === "double_opt_in" ? "double_opt_in" : "trust_shopify")}
        error={error}
        choices={[
          {
            label: "Keep Shopify's consent (recommended)",
            value: "trust_shopify",
            helpText: `${subscribed} subscribed at Shopify ${counts?.subscribed === 1 ? "stays" : "stay"} subscribed in your marketing account. No confirmation email is sent.`,
          },
          {
            label: "Ask each to confirm by email (double opt-in)",
            value: "double_opt_in",
            helpText: counts
              ? `Up to ${people(counts.subscribed)} get a confirmation email from your marketing account and stay unsubscribed until they confirm (customers Shopify's own double opt-in already confirmed are not asked again). Those who never confirm cannot be emailed.`
              : "Customers subscribed at Shopify get a confirmation email from your marketing account and stay unsubscribed until they confirm (customers Shopify's own double opt-in already confirmed are not asked again).",
          },
        ]}
      />
      <Text as="p" variant="bodySm" tone="subdued">
        <span data-consent-counts>
          {counts
            ? `Your store today, as Shopify shows it: ${counts.subscribed.toLocaleString("en-US")} subscribed, ${counts.pending.toLocaleString("en-US")} waiting to confirm Shopify's own email, ${counts.notSubscribed.toLocaleString("en-US")} not subscribed, ${counts.unsubscribed.toLocaleString("en-US")} unsubscribed. With either choice, customers who are not subscribed or unsubscribed at Shopify are never subscribed, and those waiting for Shopify's confirmation are subscribed once they confirm. These are Shopify's counts of your customers; your marketing account counts its own contacts, from every source (Sync health shows them), so the two numbers differ.`
            : "Shopify did not give the counts of your customers just now; reload the page to see them."}
        </span>
      </Text>
    </BlockStack>
  );
}
