import { useFetcher } from "@remix-run/react";
import { Banner, BlockStack, Button, Card, Checkbox, InlineStack, Layout, Text } from "@shopify/polaris";
import { useEffect, useMemo, useState } from "react";
import type { MirroredSegmentRow, SegmentChoices } from "~/segments/segments.server";
import { importProgress } from "~/segments/progress";
import { useRefreshWhile, useToast } from "./ui";

/** The Settings page's action intent of this section's form. */
export const SEGMENTS_INTENT = "segments";
/** "Try again" on a segment whose member import failed. */
export const SEGMENT_IMPORT_RETRY_INTENT = "segment-import-retry";

/** A tagging under way: read from Shopify, or members still on their way to the service. */
const importMoving = (p: MirroredSegmentRow) => (p.importStatus !== "done" && p.importStatus !== "failed") || p.outcome.waiting > 0;

interface SegmentActionData {
  ok: boolean;
  error?: string;
}

/**
 * Settings → Customer segments: which Shopify segments are mirrored as tags on the contacts. Its own
 * form (a fetcher, no <form> element: it sits inside the page's settings form), saved on its own.
 */
export function SegmentSettings({ choices }: { choices: SegmentChoices }) {
  const fetcher = useFetcher<SegmentActionData>();
  const savedIds = useMemo(() => choices.picked.map((p) => p.segmentId), [choices.picked]);
  const [picked, setPicked] = useState<string[]>(savedIds);
  // One toast per answer (fetcher.data is a new object per save).
  useToast(useMemo(() => (fetcher.data?.ok ? { toast: "Segment choice saved" } : undefined), [fetcher.data]));
  useEffect(() => setPicked(savedIds), [savedIds]);
  // Tagging current members moves while the worker imports them: the progress follows without a reload.
  useRefreshWhile(choices.picked.some(importMoving), 2_000);
  const savedOf = new Map(choices.picked.map((p) => [p.segmentId, p]));
  const retry = useFetcher<SegmentActionData>();
  const tryAgain = (id: string) => {
    const form = new FormData();
    form.set("intent", SEGMENT_IMPORT_RETRY_INTENT);
    form.set("segment", id);
    retry.submit(form, { method: "post" });
  };
  // Picked segments Shopify no longer lists (deleted) stay visible, so they can be un-picked.
  const rows = [
    ...(choices.available ?? []),
    ...choices.picked.filter((p) => !(choices.available ?? []).some((s) => s.id === p.segmentId)).map((p) => ({ id: p.segmentId, name: p.name })),
  ];
  const dirty = JSON.stringify([...picked].sort()) !== JSON.stringify([...savedIds].sort());
  const saving = fetcher.state !== "idle";
  const toggle = (id: string) => (on: boolean) => setPicked((prev) => (on ? [...prev, id] : prev.filter((x) => x !== id)));
  const save = () => {
    const form = new FormData();
    form.set("intent", SEGMENTS_INTENT);
    for (const id of picked) form.append("segment", id);
    fetcher.submit(form, { method: "post" });
  };

  return (
    <Layout.AnnotatedSection
      title="Customer segments"
      description="Mirror your Shopify customer segments as tags on the contacts, so your marketing account's workflows can use them."
    >
      <Card>
        <BlockStack gap="300">
          <Text as="p" tone="subdued">
            A customer who joins a picked segment gets the tag shown (for example “shopify-segment:VIP”); one who leaves it loses
            the tag. The tag keeps the name the segment had when you picked it, so renaming the segment in Shopify does not break
            your workflows. The customers already in a segment when you pick it are read from Shopify and tagged in the
            background, behind the live updates; the progress shows below the segment. Un-picking a segment stops the updates;
            contacts keep the tags they have.
          </Text>
          {choices.problem && (
            <Banner tone="warning">
              <p>{choices.problem}</p>
            </Banner>
          )}
          {fetcher.data && !fetcher.data.ok && (
            <Banner tone="critical" title="Segments were not saved">
              <p>{fetcher.data.error}</p>
            </Banner>
          )}
          {rows.length === 0 && !choices.problem && <Text as="p">Your store has no customer segments yet.</Text>}
          {retry.data && !retry.data.ok && (
            <Banner tone="critical" title="The import was not restarted">
              <p>{retry.data.error}</p>
            </Banner>
          )}
          {rows.map((s) => {
            const saved = savedOf.get(s.id);
            return (
              <BlockStack key={s.id} gap="100">
                <Checkbox
                  label={s.name}
                  helpText={saved ? `Tag: ${saved.tag}. ${importProgress(saved)}.` : undefined}
                  checked={picked.includes(s.id)}
                  onChange={toggle(s.id)}
                />
                {saved?.importStatus === "failed" && (
                  <Banner tone="critical" title={`Current members of ${s.name} were not all tagged`}>
                    <BlockStack gap="200">
                      <p>
                        Shopify did not answer with the segment&apos;s members ({saved.importError ?? "no reason given"}). Customers who
                        join or leave it from now on are still tagged. Check that the app may read customers, then try again: it
                        continues where it stopped.
                      </p>
                      <InlineStack>
                        <Button onClick={() => tryAgain(s.id)} loading={retry.state !== "idle"}>
                          Try again
                        </Button>
                      </InlineStack>
                    </BlockStack>
                  </Banner>
                )}
              </BlockStack>
            );
          })}
          {choices.truncated && <Text as="p" tone="subdued">Only your first 1,000 segments are listed.</Text>}
          <InlineStack align="end">
            <Button onClick={save} disabled={!dirty} loading={saving}>
              Update segment tags
            </Button>
          </InlineStack>
        </BlockStack>
      </Card>
    </Layout.AnnotatedSection>
  );
}
