import { SaveBar } from "@shopify/app-bridge-react";
import { Box, Button, InlineStack, Text } from "@shopify/polaris";
import { useEffect, useState } from "react";

/** Whether the admin around the app provides App Bridge's save bar (the `ui-save-bar` element). */
function useBridgeSaveBar(): boolean {
  const [available, setAvailable] = useState(false);
  // After hydration only: the server cannot know, and the first render must match it.
  useEffect(() => setAvailable(typeof customElements !== "undefined" && Boolean(customElements.get("ui-save-bar"))), []);
  return available;
}

/**
 * Save and Discard for a settings form: App Bridge's contextual save bar at the top of the admin
 * where the admin provides it, else a Polaris bar stuck to the bottom of the page (tests, or an
 * admin without App Bridge). `onSave` submits the form; `onDiscard` restores the saved values.
 */
export function FormSaveBar({ id, dirty, saving, onSave, onDiscard, idleText }: { id: string; dirty: boolean; saving: boolean; onSave: () => void; onDiscard: () => void; idleText: string }) {
  const bridge = useBridgeSaveBar();
  if (bridge) {
    return (
      <SaveBar id={id} open={dirty}>
        <button variant="primary" onClick={onSave} loading={saving ? "" : undefined} disabled={saving}></button>
        <button onClick={onDiscard} disabled={saving}></button>
      </SaveBar>
    );
  }
  return (
    // Sticks to the bottom of the frame while the page scrolls: what is unsaved, and Save, stay in view.
    <div style={{ position: "sticky", bottom: 0, zIndex: 10 }} data-save-bar="polaris">
      <Box background={dirty ? "bg-fill-inverse" : "bg-surface"} padding="300" borderRadius="200" shadow="400">
        <InlineStack align="space-between" gap="300" blockAlign="center">
          {dirty ? (
            <Text as="p" fontWeight="semibold" tone="text-inverse">
              Unsaved changes
            </Text>
          ) : (
            <Text as="p" variant="bodySm" tone="subdued">
              {idleText}
            </Text>
          )}
          <InlineStack gap="200">
            {dirty && (
              <Button onClick={onDiscard} disabled={saving}>
                Discard
              </Button>
            )}
            <Button variant="primary" onClick={onSave} loading={saving} disabled={!dirty && !saving}>
              Save
            </Button>
          </InlineStack>
        </InlineStack>
      </Box>
    </div>
  );
}
