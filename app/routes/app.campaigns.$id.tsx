import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigate, useNavigation } from "@remix-run/react";
import { Banner, BlockStack, Button, FormLayout, InlineGrid, InlineStack, Layout, List, Page, Text, TextField } from "@shopify/polaris";
import { useEffect, useRef, useState } from "react";
import { ConfirmAction } from "~/admin/ConfirmAction";
import { FormSaveBar } from "~/admin/FormSaveBar";
import { ScheduleField } from "~/admin/ScheduleField";
import { HandOffLink, LoadFailed, ProblemBanner, ServiceUnavailable } from "~/admin/ServiceUi";
import { serviceAccess } from "~/admin/service-access.server";
import { storeTimeZone } from "~/admin/store-zone.server";
import { PageError, SectionCard, formatWhen, useToast } from "~/admin/ui";
import { campaignAction, campaignPage } from "~/campaigns/campaigns.server";
import type { DetailValues } from "~/campaigns/edit-conflict";
import { localToIso, scheduleText, serviceRounded } from "~/campaigns/schedule";
import { StatusBadge } from "~/campaigns/ui";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Campaign · Marketing Sync" }];

export const loader = async ({ request, params }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const access = await serviceAccess(session.shop);
  // Schedules are picked and shown in the store's zone, as dates on every other admin page (the
  // marketing account's zone only when Shopify cannot say); the form carries the zone it showed.
  const zone = await storeTimeZone(session.shop, access.state === "connected" ? access.accountTimezone : null);
  const page = await campaignPage(session.shop, params.id, zone);
  if (page.notFound) throw new Response("Campaign not found", { status: 404 });
  return page;
};

// A schedule is read in the zone its form carries (the one the page showed), not looked up again.
export const action = async ({ request, params }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return campaignAction(session.shop, params.id, await request.formData());
};

const DETAILS_FIELDS = new Set(["name", "subject", "senderEmail", "sender.email", "replyToEmail", "replyTo.email"]);
const INLINE_FIELDS = new Set([...DETAILS_FIELDS, "recipients", "scheduledAt", "zone"]);

/** What the recipients will see: sender, subject and the preview line, as the form holds them now. */
function SendingSummary({ c }: { c: DetailValues }) {
  return (
    <div data-sending-summary>
      <BlockStack gap="050">
        <Text as="p" variant="bodySm">
          From: {c.senderName || c.senderEmail ? `${c.senderName}${c.senderEmail ? ` <${c.senderEmail}>` : ""}`.trim() : "—"}
        </Text>
        <Text as="p" variant="bodySm">
          Subject: {c.subject || "—"}
        </Text>
        <Text as="p" variant="bodySm" tone="subdued">
          Preview: {c.previewText || "—"}
        </Text>
      </BlockStack>
    </div>
  );
}

function Hidden({ fields }: { fields: Record<string, string> }) {
  return (
    <>
      {Object.entries(fields).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
    </>
  );
}

export default function CampaignPage() {
  const data = useLoaderData<typeof loader>();
  // A fresh form per campaign (a copy opens on the same route).
  return <CampaignScreen key={data.campaign?.id ?? "none"} />;
}

function CampaignScreen() {
  const data = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const navigate = useNavigate();
  useToast(result);
  useEffect(() => {
    if (result?.ok && result.goTo) navigate(result.goTo);
  }, [result, navigate]);

  const c = data.campaign;
  const loadedNow = (): DetailValues => ({
    name: c?.name ?? "",
    subject: c?.subject ?? "",
    previewText: c?.previewText ?? "",
    senderName: c?.senderName ?? "",
    senderEmail: c?.senderEmail ?? "",
    replyToName: c?.replyToName ?? "",
    replyToEmail: c?.replyToEmail ?? "",
  });
  // `base`: the values the merchant's form started from, posted with it so that only the fields
  // the merchant changed are saved (the email editor may change others meanwhile).
  const [{ form, base }, setDetails] = useState(() => ({ form: loadedNow(), base: loadedNow() }));
  const fresh = loadedNow();
  const freshKey = JSON.stringify(fresh);
  useEffect(() => {
    // Newer values from the service (after a save, or changed in the editor): fields the merchant
    // has not changed, or that now match what they typed, follow; their other edits stay.
    const now = JSON.parse(freshKey) as DetailValues;
    setDetails(({ form: f, base: b }) => {
      const next = { form: { ...f }, base: { ...b } };
      for (const k of Object.keys(now) as (keyof DetailValues)[]) {
        if (f[k] === b[k] || f[k] === now[k]) {
          next.form[k] = now[k];
          next.base[k] = now[k];
        }
      }
      return next;
    });
  }, [freshKey]);
  const detailsForm = useRef<HTMLFormElement>(null);
  const [recipients, setRecipients] = useState("");
  const [scheduledAt, setScheduledAt] = useState("");
  const [confirm, setConfirm] = useState<"send" | "delete" | "unschedule" | null>(null);
  useEffect(() => setConfirm(null), [result]);

  const busy = (intent: string) => navigation.state !== "idle" && navigation.formData?.get("intent") === intent;
  const problem = result && !result.ok ? result.problem : null;
  const fieldError = (name: string) => (problem?.fields ? problem.fields[name] : undefined);
  // Field refusals are shown beside their fields; anything else in the banner at the top.
  // A send or schedule refused over a Details field: the field is far up, so the banner says it too.
  const sendRefusedOverDetails = (result?.intent === "send" || result?.intent === "schedule") && Object.keys(problem?.fields ?? {}).some((k) => DETAILS_FIELDS.has(k));
  const inlineOnly = !sendRefusedOverDetails && Boolean(problem?.fields && Object.keys(problem.fields).length && Object.keys(problem.fields).every((k) => INLINE_FIELDS.has(k)));

  if (!c) {
    return (
      <Page title="Campaign" backAction={{ content: "Campaigns", url: "/app/campaigns" }}>
        <Layout>
          {data.service ? <ServiceUnavailable service={data.service} what="Campaigns" /> : null}
          {data.problem && <LoadFailed problem={data.problem} />}
        </Layout>
      </Page>
    );
  }

  const draft = c.status === "draft";
  const zone = data.zone;
  const pickedIso = scheduledAt ? localToIso(scheduledAt, zone) : null;
  const pickedRounded = pickedIso ? serviceRounded(pickedIso) : null;
  const preview = pickedRounded ? scheduleText(pickedRounded, zone) : null;
  // Rendered on the server and in the browser alike only after a pick: "now" is the browser's.
  const pickedPast = pickedRounded ? Date.parse(pickedRounded) <= Date.now() : false;
  const reach = data.reach ?? null;
  const reachText = reach === null ? "your whole confirmed list" : `${reach.toLocaleString("en-US")} confirmed ${reach === 1 ? "person" : "people"}`;
  const scheduledPast = c.scheduledAt ? Date.parse(c.scheduledAt) <= Date.now() : false;
  const set = (k: keyof DetailValues) => (v: string) => setDetails((d) => ({ ...d, form: { ...d.form, [k]: v } }));
  const loaded = JSON.stringify(base);
  // Unsaved Details go out with a send or schedule: what the merchant sees is what is sent.
  const unsaved = draft && (Object.keys(form) as (keyof DetailValues)[]).some((k) => form[k] !== base[k]);
  const withDetails = unsaved ? { ...form, loaded } : {};

  return (
    <Page title={c.name} titleMetadata={<StatusBadge status={c.status} />} backAction={{ content: "Campaigns", url: "/app/campaigns" }}>
      <Layout>
        {problem && !inlineOnly && (
          <Layout.Section>
            <ProblemBanner problem={problem}>
              {problem.canForce && (result?.intent === "send" || result?.intent === "schedule") && (
                <Form method="post">
                  <Hidden fields={{ intent: result.intent, force: "true", ...(result.intent === "schedule" ? { scheduledAt, zone } : {}), ...withDetails }} />
                  <Button submit tone="critical" loading={busy(result.intent)}>
                    {result.intent === "schedule" ? "Schedule anyway" : "Send anyway"}
                  </Button>
                </Form>
              )}
            </ProblemBanner>
          </Layout.Section>
        )}
        {draft && !c.builderReviewed && (
          // The service says nothing of a draft's email content (spec §2.4) but refuses a send, a
          // schedule or a test without it: said here, before the merchant tries.
          <Layout.Section>
            <Banner tone="warning" title="Design the email before you send it">
              <BlockStack gap="200">
                <p data-no-content-warning>
                  This draft has not been opened in the email editor yet. A campaign created blank has no email until you design it there, and until then
                  your marketing service refuses to send it, schedule it or send a test.
                </p>
                {c.editorUrl && (
                  <span>
                    <HandOffLink url={c.editorUrl}>Open in the email editor ↗</HandOffLink>
                  </span>
                )}
              </BlockStack>
            </Banner>
          </Layout.Section>
        )}
        <SectionCard gap="200">
          <InlineStack gap="400" blockAlign="center" wrap>
            {c.editorUrl && <HandOffLink url={c.editorUrl}>Open in the email editor ↗</HandOffLink>}
            {c.dashboardUrl && <HandOffLink url={c.dashboardUrl}>Open in your marketing dashboard ↗</HandOffLink>}
          </InlineStack>
          <List type="bullet">
            <List.Item>Created {formatWhen(c.createdAt, zone)}</List.Item>
            <List.Item>{c.builderReviewed ? "Reviewed in the email editor" : "Not yet reviewed in the email editor"}</List.Item>
            {c.scheduledAt && c.scheduled && (
              <List.Item>
                <span data-scheduled>
                  {c.status === "scheduled" && !scheduledPast ? "Goes out" : "Was due"} {scheduleText(c.scheduledAt, zone)}
                </span>
              </List.Item>
            )}
            {c.sentAt && <List.Item>Sent {formatWhen(c.sentAt, zone)}</List.Item>}
            {data.activity?.state && (
              <List.Item>
                <span data-shopify-activity>
                  {data.activity.state === "recorded" ? "Shown in Shopify's Marketing section" : "Being added to Shopify's Marketing section (retried until Shopify has it)"}
                </span>
              </List.Item>
            )}
          </List>
          {data.activity && (
            // The service offers no way to set the campaign's links (spec §4.2), so the merchant adds the UTM parameters.
            <Text as="p" variant="bodySm" tone="subdued">
              <span data-utm>
                So that Shopify credits visits and orders to this campaign, end each link to your store in the email with ?{data.activity.utmQuery} (or &amp;… after an existing
                query).
              </span>
            </Text>
          )}
        </SectionCard>

        <SectionCard title="Details">
          {draft ? (
            <Form method="post" ref={detailsForm}>
              <input type="hidden" name="intent" value="update" />
              <input type="hidden" name="loaded" value={loaded} />
              <FormLayout>
                <TextField label="Campaign name" name="name" value={form.name} onChange={set("name")} autoComplete="off" error={fieldError("name")} />
                <TextField label="Subject" name="subject" value={form.subject} onChange={set("subject")} autoComplete="off" error={fieldError("subject")} />
                <TextField label="Preview text" name="previewText" value={form.previewText} onChange={set("previewText")} autoComplete="off" helpText="Shown after the subject in most inboxes." />
                <FormLayout.Group>
                  <TextField label="Sender name" name="senderName" value={form.senderName} onChange={set("senderName")} autoComplete="off" />
                  <TextField label="Sender email" name="senderEmail" type="email" value={form.senderEmail} onChange={set("senderEmail")} autoComplete="off" error={fieldError("senderEmail") ?? fieldError("sender.email")} />
                </FormLayout.Group>
                <FormLayout.Group>
                  <TextField label="Reply-to name" name="replyToName" value={form.replyToName} onChange={set("replyToName")} autoComplete="off" />
                  <TextField label="Reply-to email" name="replyToEmail" type="email" value={form.replyToEmail} onChange={set("replyToEmail")} autoComplete="off" error={fieldError("replyToEmail") ?? fieldError("replyTo.email")} />
                </FormLayout.Group>
                {/* Built for Shopify: while the details are unsaved, the save bar is in view. */}
                <FormSaveBar
                  id="campaign-details"
                  dirty={unsaved}
                  saving={busy("update")}
                  onSave={() => detailsForm.current?.requestSubmit()}
                  onDiscard={() => setDetails((d) => ({ ...d, form: d.base }))}
                  idleText="Details saved."
                  saveLabel="Save draft"
                />
              </FormLayout>
            </Form>
          ) : (
            <BlockStack gap="100">
              <Text as="p">Subject: {c.subject || "—"}</Text>
              <Text as="p">Preview text: {c.previewText || "—"}</Text>
              <Text as="p">Sender: {c.senderName || c.senderEmail ? `${c.senderName} <${c.senderEmail}>` : "—"}</Text>
              <Text as="p">Reply-to: {c.replyToName || c.replyToEmail ? `${c.replyToName} <${c.replyToEmail}>` : "—"}</Text>
              <Text as="p" tone="subdued">
                Only drafts can be edited. Duplicate this campaign to change and send it again.
              </Text>
            </BlockStack>
          )}
        </SectionCard>

        <Layout.Section>
          <InlineGrid columns={{ xs: 1, md: 2 }} gap="400">
            <SectionCard title="Send a test" section={false}>
              <Form method="post">
                <Hidden fields={{ intent: "test-send", ...withDetails }} />
                <BlockStack gap="300">
                  <TextField
                    label="Test recipients"
                    name="recipients"
                    value={recipients}
                    onChange={setRecipients}
                    autoComplete="off"
                    multiline={2}
                    error={fieldError("recipients")}
                    helpText="Up to 10 addresses, separated by commas. They must be on your verified sending domain or your account's address."
                  />
                  {unsaved && (
                    <Text as="p" tone="subdued">
                      <span data-test-saves-first>Your changes to the details are saved first, so the test shows them.</span>
                    </Text>
                  )}
                  <InlineStack align="end">
                    <Button submit loading={busy("test-send")}>
                      Send test
                    </Button>
                  </InlineStack>
                </BlockStack>
              </Form>
            </SectionCard>
            {draft && (
              <SectionCard title="Schedule" section={false}>
                <Form method="post">
                  <Hidden fields={{ intent: "schedule", zone, ...withDetails }} />
                  <BlockStack gap="300">
                    <input type="hidden" name="scheduledAt" value={scheduledAt} />
                    <ScheduleField value={scheduledAt} onChange={setScheduledAt} zone={zone} error={fieldError("scheduledAt") ?? fieldError("zone")} />
                    {preview && (
                      <Text as="p" tone={pickedPast ? "critical" : "subdued"}>
                        <span data-schedule-preview>
                          {pickedPast ? `${preview} has passed: pick a later time.` : `Goes out ${preview} to the people confirmed then (${reachText} today).`}
                        </span>
                      </Text>
                    )}
                    <SendingSummary c={form} />
                    {unsaved && (
                      <Text as="p" tone="subdued">
                        Your changes to the details are saved with it.
                      </Text>
                    )}
                    <InlineStack align="end">
                      <Button submit loading={busy("schedule")}>
                        Schedule
                      </Button>
                    </InlineStack>
                  </BlockStack>
                </Form>
              </SectionCard>
            )}
          </InlineGrid>
        </Layout.Section>

        {draft && (
          <SectionCard title="Send now">
            {confirm === "send" ? (
              <ConfirmAction
                title={`Send this campaign to ${reachText} now?`}
                fields={{ intent: "send", ...withDetails }}
                confirmLabel="Send to the whole list"
                critical
                loading={busy("send")}
                onCancel={() => setConfirm(null)}
              >
                <SendingSummary c={form} />
                <p>The service sends a campaign to every confirmed person on your list; it cannot be limited to some of them, and it cannot be undone.</p>
                {unsaved && <p>Your changes to the details are saved first.</p>}
              </ConfirmAction>
            ) : (
              <BlockStack gap="200">
                <Text as="p" tone="subdued">
                  <span data-reach>It goes to {reachText}.</span>
                </Text>
                <InlineStack>
                  <Button onClick={() => setConfirm("send")}>Send now…</Button>
                </InlineStack>
              </BlockStack>
            )}
          </SectionCard>
        )}

        {c.status === "scheduled" && (
          <SectionCard title="Change the schedule">
            {confirm === "unschedule" ? (
              <ConfirmAction
                title="Move this campaign back to draft?"
                fields={{ intent: "unschedule" }}
                confirmLabel="Move back to draft"
                loading={busy("unschedule")}
                onCancel={() => setConfirm(null)}
              >
                <p>
                  Your marketing service cannot unschedule a campaign. The app makes a draft copy with the same content and recipients, then deletes this
                  scheduled one so it does not go out. The copy opens here: review it in the email editor again, then pick a new time or send it.
                </p>
              </ConfirmAction>
            ) : (
              <BlockStack gap="200">
                <Text as="p" tone="subdued">
                  To stop it or to pick another time, move it back to draft.
                </Text>
                <InlineStack>
                  <Button onClick={() => setConfirm("unschedule")}>Unschedule or change the time…</Button>
                </InlineStack>
              </BlockStack>
            )}
          </SectionCard>
        )}

        <SectionCard title="Copy or delete">
          {confirm === "delete" ? (
            <ConfirmAction
              title={`Delete “${c.name}”?`}
              tone="critical"
              fields={{ intent: "delete" }}
              confirmLabel="Delete campaign"
              critical
              loading={busy("delete")}
              onCancel={() => setConfirm(null)}
            >
              <p>The campaign is removed from your marketing account. This cannot be undone.</p>
            </ConfirmAction>
          ) : (
            <InlineStack gap="200">
              <Form method="post">
                <input type="hidden" name="intent" value="clone" />
                <Button submit loading={busy("clone")}>
                  Duplicate
                </Button>
              </Form>
              <Button tone="critical" onClick={() => setConfirm("delete")}>
                Delete…
              </Button>
            </InlineStack>
          )}
        </SectionCard>
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return (
    <PageError
      title="Campaign"
      notFound={{
        title: "Campaign not found",
        banner: "This campaign is not in your marketing account",
        hint: "It may have been deleted, or the link is wrong.",
        back: { content: "Campaigns", url: "/app/campaigns" },
      }}
    />
  );
}
