import { Badge, BlockStack, Button, InlineStack, Text } from "@shopify/polaris";
import type { EmbedState, TrackerOnStorefront } from "~/storefront/tracker-state";

/** The embed's state in words: the same on the Storefront page and on Sync health. */
export const EMBED_WORDS: Record<EmbedState, { tone: "success" | "attention" | "critical" | undefined; label: string; help: string }> = {
  enabled: { tone: "success", label: "On", help: "The tracker embed is on in your live theme." },
  disabled: { tone: "attention", label: "Off", help: "The tracker embed was added to your live theme but is switched off." },
  not_added: { tone: "critical", label: "Not added", help: "Your live theme does not load the tracker yet." },
  unknown: { tone: undefined, label: "Unknown", help: "We could not read your live theme just now." },
};

export function EmbedBadge({ state }: { state: EmbedState }) {
  const words = EMBED_WORDS[state];
  return <Badge tone={words.tone}>{words.label}</Badge>;
}

/** What the live theme says about the embed, and the theme editor's deep link that turns it on. */
export function EmbedStatus({ embed }: { embed: { state: EmbedState; themeName: string | null; activateUrl: string } }) {
  return (
    <BlockStack gap="200">
      <Text as="p">
        <span data-embed-state={embed.state}>
          {EMBED_WORDS[embed.state].help}
          {embed.themeName ? ` Live theme: ${embed.themeName}.` : ""}
        </span>
      </Text>
      {embed.state !== "enabled" && (
        <BlockStack gap="200">
          <Text as="p" tone="subdued">
            The theme editor opens with the Marketing tracker switched on under App embeds: click Save there.
          </Text>
          <InlineStack>
            <Button variant="primary" url={embed.activateUrl} target="_blank">
              Turn on the tracker embed
            </Button>
          </InlineStack>
        </BlockStack>
      )}
    </BlockStack>
  );
}

/** Whether the tracker runs on the storefront (trackerOnStorefront), as a line with its badge. */
export function TrackerRunning({ status }: { status: TrackerOnStorefront }) {
  return (
    <InlineStack gap="200" blockAlign="center" wrap>
      <Badge tone={status.tone}>{status.label}</Badge>
      <Text as="span">
        <span data-tracker-running={status.state}>{status.line}</span>
      </Text>
    </InlineStack>
  );
}
