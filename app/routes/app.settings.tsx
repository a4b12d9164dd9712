import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useBlocker, useLoaderData, useNavigation } from "@remix-run/react";
import { Banner, BlockStack, Button, Checkbox, FormLayout, InlineStack, Layout, Page, Select, TextField } from "@shopify/polaris";
import { useEffect, useRef, useState } from "react";
import { ConsentChoice } from "~/admin/ConsentChoice";
import { shopifyConsentCounts } from "~/admin/consent-counts.server";
import { FormSaveBar } from "~/admin/FormSaveBar";
import { SignupsChoice } from "~/admin/SignupsChoice";
import { SEGMENT_IMPORT_RETRY_INTENT, SEGMENTS_INTENT, SegmentSettings } from "~/admin/SegmentSettings";
import { loadSettings, saveSettings, type SaveSettingsResult } from "~/admin/settings.server";
import { TRACKER_MODES } from "~/admin/tracker-modes";
import { PageError, SectionCard, useToast } from "~/admin/ui";
import { retryMemberImport, saveSegmentChoice, segmentChoices } from "~/segments/segments.server";
import { signupStatus } from "~/signups/signups.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Settings · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [settings, consentCounts, segments, signups] = await Promise.all([
    loadSettings(session.shop),
    shopifyConsentCounts(session.shop),
    segmentChoices(session.shop),
    signupStatus(session.shop),
  ]);
  return { settings, consentCounts, segments, signups };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const form = await request.formData();
  // The segments section posts on its own (a fetcher): SegmentSettings shows its answer.
  if (form.get("intent") === SEGMENTS_INTENT) return saveSegmentChoice(session.shop, form);
  if (form.get("intent") === SEGMENT_IMPORT_RETRY_INTENT) return retryMemberImport(session.shop, form);
  return settingsAnswer(await saveSettings(session.shop, form));
};

/** The settings form's answer (what useActionData sees: fetcher answers never reach it). */
const settingsAnswer = (result: SaveSettingsResult) =>
  result.ok
    ? { ok: true as const, settings: result.settings, errors: {} as Record<string, string>, toast: "Settings saved", at: Date.now() }
    : { ok: false as const, errors: result.errors, toast: "Check the highlighted fields", error: true, at: Date.now() };

/** The form's values: the delay as typed text. */
const asForm = (stored: Awaited<ReturnType<typeof loadSettings>>) => ({ ...stored, abandonmentDelayMinutes: String(stored.abandonmentDelayMinutes) });

export default function Settings() {
  const { settings, consentCounts, segments, signups } = useLoaderData<typeof loader>();
  const formRef = useRef<HTMLFormElement>(null);
  const result = useActionData<typeof settingsAnswer>();
  const navigation = useNavigation();
  useToast(result);
  const errors = result?.errors ?? {};
  const [saved, setSaved] = useState(() => asForm(settings));
  const [s, setS] = useState(saved);
  // After a save, show what was stored.
  useEffect(() => {
    if (result?.ok) {
      setSaved(asForm(result.settings));
      setS(asForm(result.settings));
    }
  }, [result]);
  const set = <K extends keyof typeof s>(key: K) => (value: (typeof s)[K]) => setS((prev) => ({ ...prev, [key]: value }));
  const dirty = JSON.stringify(s) !== JSON.stringify(saved);
  const saving = navigation.state === "submitting";

  // Unsaved changes are not lost without a word: closing or reloading the page asks (the browser's
  // own prompt), and going to another page of the app asks here.
  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && !saving && currentLocation.pathname !== nextLocation.pathname);

  return (
    <Page title="Settings" subtitle="How your store's data reaches your marketing account">
      <Form method="post" ref={formRef}>
        <Layout>
          {blocker.state === "blocked" && (
            <Layout.Section>
              <Banner tone="warning" title="Leave without saving?">
                <BlockStack gap="200">
                  <p>Your changes to these settings are not saved yet.</p>
                  <InlineStack gap="200">
                    <Button onClick={() => blocker.proceed()}>Leave without saving</Button>
                    <Button variant="primary" onClick={() => blocker.reset()}>
                      Stay on this page
                    </Button>
                  </InlineStack>
                </BlockStack>
              </Banner>
            </Layout.Section>
          )}
          {result && !result.ok && (
            <Layout.Section>
              <Banner tone="critical" title="Settings were not saved">
                <p>Fix the highlighted fields and save again.</p>
              </Banner>
            </Layout.Section>
          )}
          <Layout.AnnotatedSection title="Consent" description="Who becomes a contact, and how their consent is confirmed.">
            <SectionCard section={false}>
              <FormLayout>
                <ConsentChoice value={s.optInMode} onChange={set("optInMode")} counts={consentCounts} error={errors.optInMode} />
                <SignupsChoice checked={s.signupsToShopify} onChange={set("signupsToShopify")} counts={signups} error={errors.signupsToShopify} />
                <Checkbox
                  value="true"
                  label="Sync customers who have not subscribed (as inactive contacts)"
                  name="syncNonSubscribers"
                  checked={s.syncNonSubscribers}
                  onChange={set("syncNonSubscribers")}
                  error={errors.syncNonSubscribers}
                />
                <Checkbox
                  value="true"
                  label="Let customer events create or update contacts"
                  name="customerEventsCreateContacts"
                  checked={s.customerEventsCreateContacts}
                  onChange={set("customerEventsCreateContacts")}
                  error={errors.customerEventsCreateContacts}
                />
                <Checkbox
                  value="true"
                  label="Delete the contact when the Shopify customer is deleted"
                  helpText="Otherwise the contact stays and a “customer deleted” event is recorded."
                  name="deleteContactOnCustomerDelete"
                  checked={s.deleteContactOnCustomerDelete}
                  onChange={set("deleteContactOnCustomerDelete")}
                  error={errors.deleteContactOnCustomerDelete}
                />
              </FormLayout>
            </SectionCard>
          </Layout.AnnotatedSection>
          <Layout.AnnotatedSection title="Orders and carts" description="When orders count as completed and carts as abandoned.">
            <SectionCard section={false}>
              <FormLayout>
                <Select
                  label="An order is completed when it is"
                  name="orderCompletedOn"
                  value={s.orderCompletedOn}
                  onChange={set("orderCompletedOn")}
                  error={errors.orderCompletedOn}
                  options={[
                    { label: "Paid and fulfilled (recommended)", value: "paid_and_fulfilled" },
                    { label: "Paid", value: "paid" },
                    { label: "Fulfilled", value: "fulfilled" },
                  ]}
                />
                <TextField
                  label="Abandoned cart delay"
                  name="abandonmentDelayMinutes"
                  type="number"
                  suffix="minutes"
                  autoComplete="off"
                  value={s.abandonmentDelayMinutes}
                  onChange={set("abandonmentDelayMinutes")}
                  error={errors.abandonmentDelayMinutes}
                  helpText="How long after the last change a checkout counts as abandoned: 15 minutes to 3 days."
                />
              </FormLayout>
            </SectionCard>
          </Layout.AnnotatedSection>
          <Layout.AnnotatedSection title="Storefront" description="Tracking on your online store.">
            <SectionCard section={false}>
              <FormLayout>
                <Select
                  label="Tracker"
                  name="trackerMode"
                  value={s.trackerMode}
                  onChange={set("trackerMode")}
                  error={errors.trackerMode}
                  options={TRACKER_MODES.map(({ label, value }) => ({ label, value }))}
                />
                <Checkbox
                  value="true"
                  label="Send storefront browsing events (product and cart views)"
                  name="storefrontEvents"
                  checked={s.storefrontEvents}
                  onChange={set("storefrontEvents")}
                  error={errors.storefrontEvents}
                />
                <TextField
                  label="Source name"
                  name="source"
                  autoComplete="off"
                  value={s.source}
                  onChange={set("source")}
                  error={errors.source}
                  helpText="Shown in your marketing account as where contacts came from."
                />
              </FormLayout>
            </SectionCard>
          </Layout.AnnotatedSection>
          <SegmentSettings choices={segments} />
          <Layout.Section>
            <FormSaveBar
              id="settings-save-bar"
              dirty={dirty}
              saving={saving}
              onSave={() => formRef.current?.requestSubmit()}
              onDiscard={() => setS(saved)}
              idleText="Changes apply to everything synced from now on."
            />
          </Layout.Section>
        </Layout>
      </Form>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Settings" />;
}
