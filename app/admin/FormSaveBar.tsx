import { SaveBar } from "@shopify/app-bridge-react";
import { Box, Button, InlineStack, Text } from "@shopify/polaris";
import { useEffect, useLayoutEffect, useRef, useState } from "react";

/** Whether the admin around the app provides App Bridge's save bar (the `ui-save-bar` element). */
function useBridgeSaveBar(): boolean {
  const [available, setAvailable] = useState(false);
  // After hydration only: the server cannot know, and the first render must match it.
  useEffect(() => setAvailable(typeof customElements !== "undefined" && Boolean(customElements.get("ui-save-bar"))), []);
  return available;
}

// useLayoutEffect warns on the server, where nothing is measured anyway.
const useBrowserLayoutEffect = typeof window === "undefined" ? useEffect : useLayoutEffect;

/** An element's height as it is drawn, kept up to date (the bar wraps onto more lines when narrow). */
function useHeight() {
  const ref = useRef<HTMLDivElement>(null);
  const [height, setHeight] = useState(0);
  useBrowserLayoutEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => setHeight(el.offsetHeight));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, height };
}

/**
 * Save and Discard for a form (Settings, a campaign's details): App Bridge's contextual save bar at the top of the admin
 * where the admin provides it, else a Polaris bar (tests, or an admin without App Bridge). That bar
 * sits at the end of the form while nothing is unsaved; once something is, it is fixed to the bottom
 * of the frame whatever the window's height and the scroll (Built for Shopify: the save bar is in
 * view whenever a form is dirty). `position: sticky` held only within its parent, the last layout
 * section, and so sat below a 900 px tall window. `onSave` submits the form; `onDiscard` restores
 * the saved values.
 */
export function FormSaveBar({
  id,
  dirty,
  saving,
  onSave,
  onDiscard,
  idleText,
  saveLabel = "Save",
}: {
  id: string;
  dirty: boolean;
  saving: boolean;
  onSave: () => void;
  onDiscard: () => void;
  idleText: string;
  /** the fallback bar's save button ("Save draft" for a campaign) */
  saveLabel?: string;
}) {
  const bridge = useBridgeSaveBar();
  const bar = useHeight();
  if (bridge) {
    return (
      <SaveBar id={id} open={dirty}>
        <button variant="primary" onClick={onSave} loading={saving ? "" : undefined} disabled={saving}></button>
        <button onClick={onDiscard} disabled={saving}></button>
      </SaveBar>
    );
  }
  return (
    // While the bar is fixed its place stays as tall as it is, so the end of the page can scroll out from under it.
    <div style={{ minHeight: dirty ? bar.height : undefined }}>
      <div ref={bar.ref} style={dirty ? { position: "fixed", insetInline: 0, bottom: 0, zIndex: 10, padding: "var(--p-space-200)" } : undefined} data-save-bar="polaris">
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
                {saveLabel}
              </Button>
            </InlineStack>
          </InlineStack>
        </Box>
      </div>
    </div>
  );
}
