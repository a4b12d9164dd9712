import { Form } from "@remix-run/react";
import { Banner, BlockStack, Button, InlineStack } from "@shopify/polaris";
import type { ReactNode } from "react";

/**
 * "Are you sure?" in the page itself: a banner saying what will happen, the action (a form posting
 * `fields`) and Cancel. For actions that cannot be taken back or that reach customers.
 */
export function ConfirmAction({
  title,
  tone = "warning",
  fields,
  confirmLabel,
  critical = false,
  loading,
  onCancel,
  children,
}: {
  title: string;
  tone?: "warning" | "critical";
  /** Posted with the confirmation, `intent` among them. */
  fields: Record<string, string>;
  confirmLabel: string;
  /** The action's button in the critical tone (sending to everyone, deleting). */
  critical?: boolean;
  loading: boolean;
  onCancel: () => void;
  children: ReactNode;
}) {
  return (
    <Banner tone={tone} title={title}>
      <BlockStack gap="200">
        {children}
        <InlineStack gap="200">
          <Form method="post">
            {Object.entries(fields).map(([k, v]) => (
              <input key={k} type="hidden" name={k} value={v} />
            ))}
            <Button submit variant="primary" tone={critical ? "critical" : undefined} loading={loading}>
              {confirmLabel}
            </Button>
          </Form>
          <Button onClick={onCancel}>Cancel</Button>
        </InlineStack>
      </BlockStack>
    </Banner>
  );
}
