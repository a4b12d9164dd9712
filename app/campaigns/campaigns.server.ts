/**
 * Campaigns and templates in the admin: list, create (blank or from a template), clone, edit
 * drafts, delete, test-send, schedule and send, always through the signed-in shop's own client
 * (its own key, its own account). Routes validate nothing themselves: the forms' zod schemas are here.
 */
import { z } from "zod";
import { describeLoadError, describeServiceError, handOffUrl, type ServiceProblem } from "../admin/service-errors";
import { noService, noServiceView, serviceAccess, type NoService, type ServiceAccess } from "../admin/service-access.server";
import { fieldErrors } from "../admin/forms";
import { logger } from "../logger.server";
import { isMarketingServiceError } from "../services/marketing/marketing-error";
import { campaignSortFields, campaignStatusFilters, emailSchema, type Campaign, type PaginationMeta, type Template } from "../services/marketing/schemas";
import { DETAIL_KEYS, detailChanges, type DetailKey, type DetailValues } from "./edit-conflict";
import { activityView, forgetCampaign, noteCampaign, noteCampaigns } from "./marketing-activity.server";
import { formatInZone, isValidZone } from "../admin/time-zone";
import { LOCAL_DATETIME_RE, localToIso, scheduleReadings, scheduleText, serviceRounded } from "./schedule";

const PER_PAGE = 20;

// ------------------------------------------------------------------ views (sent to the browser)

export interface CampaignView {
  id: string;
  name: string;
  status: string;
  subject: string;
  previewText: string;
  senderName: string;
  senderEmail: string;
  replyToName: string;
  replyToEmail: string;
  builderReviewed: boolean;
  createdAt: string | null;
  scheduledAt: string | null;
  sentAt: string | null;
  /** the stored schedule in the store's zone and in UTC */
  scheduled: { local: string; utc: string; zone: string } | null;
  /** created, scheduled and sent times as the pages print them, in the store's zone */
  times: { created: string | null; scheduled: string | null; sent: string | null };
  editorUrl: string | null;
  dashboardUrl: string | null;
}

/** The fields the Details form edits, as the form shows them (absent ones empty). */
function detailValues(c: Campaign): DetailValues {
  return {
    name: c.name,
    subject: c.subject ?? "",
    previewText: c.previewText ?? "",
    senderName: c.sender?.name ?? "",
    senderEmail: c.sender?.email ?? "",
    replyToName: c.replyTo?.name ?? "",
    replyToEmail: c.replyTo?.email ?? "",
  };
}

function toView(c: Campaign, baseUrl: string, zone: string): CampaignView {
  return {
    id: c.id,
    ...detailValues(c),
    status: c.status,
    builderReviewed: c.builderReviewed ?? false,
    createdAt: c.createdAt ?? null,
    scheduledAt: c.scheduledAt,
    sentAt: c.sentAt,
    scheduled: c.scheduledAt && !Number.isNaN(Date.parse(c.scheduledAt)) ? scheduleReadings(c.scheduledAt, zone) : null,
    times: {
      created: c.createdAt && !Number.isNaN(Date.parse(c.createdAt)) ? formatInZone(c.createdAt, zone) : null,
      scheduled: c.scheduledAt && !Number.isNaN(Date.parse(c.scheduledAt)) ? scheduleText(c.scheduledAt, zone) : null,
      sent: c.sentAt && !Number.isNaN(Date.parse(c.sentAt)) ? formatInZone(c.sentAt, zone) : null,
    },
    editorUrl: handOffUrl(c.links?.editorUrl, baseUrl) ?? null,
    dashboardUrl: handOffUrl(c.links?.campaignUrl, baseUrl) ?? null,
  };
}

export interface TemplateView {
  id: string;
  name: string;
  description: string;
  createdAt: string | null;
  /** a dashboard page: needs the merchant's own login, never fetched by the app (§2.5) */
  previewUrl: string | null;
}

const toTemplateView = (t: Template, baseUrl: string): TemplateView => ({
  id: t.id,
  name: t.name,
  description: t.description ?? "",
  createdAt: t.createdAt ?? null,
  previewUrl: handOffUrl(t.previewUrl ?? undefined, baseUrl) ?? null,
});

export interface PageInfo {
  page: number;
  lastPage: number;
  total: number;
  from: number | null;
  to: number | null;
}
const pageInfo = (m: PaginationMeta): PageInfo => ({ page: m.currentPage, lastPage: m.lastPage, total: m.total, from: m.from, to: m.to });

// ------------------------------------------------------------------ list

// Newest first unless another order is picked: the service's own default order is not documented
// (§4.2), so the app asks for one it can name.
const listQuerySchema = z.object({
  status: z.enum(campaignStatusFilters).catch("draft"),
  sort: z.enum(campaignSortFields).catch("createdAt"),
  order: z.enum(["asc", "desc"]).optional().catch(undefined),
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
});
export type CampaignListQuery = z.infer<typeof listQuerySchema>;

export async function campaignsPage(shop: string, params: URLSearchParams, zone: string) {
  const query = listQuerySchema.parse({
    status: params.get("status") ?? undefined,
    sort: params.get("sort") ?? undefined,
    order: params.get("order") ?? undefined,
    page: params.get("page") ?? undefined,
  });
  const access = await serviceAccess(shop);
  if (noService(access)) return { service: noServiceView(access), query, campaigns: [], page: null, problem: null };
  try {
    const result = await access.client.campaigns.list({
      status: query.status,
      page: query.page,
      perPage: PER_PAGE,
      sort: query.sort,
      order: query.order ?? (query.sort === "name" ? "asc" : "desc"),
    });
    // The state refresh of campaigns recorded in Shopify's Marketing section (pushed without waiting).
    await noteCampaigns(shop, result.data, access.baseUrl);
    return { service: null, query, campaigns: result.data.map((c) => toView(c, access.baseUrl, zone)), page: pageInfo(result.meta), problem: null };
  } catch (error) {
    return { service: null, query, campaigns: [], page: null, problem: describeLoadError(error, access.baseUrl, "Your campaigns") };
  }
}

export async function templatesPage(shop: string, params: URLSearchParams) {
  const page = z.coerce.number().int().min(1).max(100_000).catch(1).parse(params.get("page") ?? undefined);
  const access = await serviceAccess(shop);
  if (noService(access)) return { service: noServiceView(access), templates: [], page: null, problem: null };
  try {
    const result = await access.client.templates.list({ page, perPage: PER_PAGE });
    return { service: null, templates: result.data.map((t) => toTemplateView(t, access.baseUrl)), page: pageInfo(result.meta), problem: null };
  } catch (error) {
    return { service: null, templates: [], page: null, problem: describeLoadError(error, access.baseUrl, "Your templates") };
  }
}

// ------------------------------------------------------------------ one campaign

/** A campaign id from the URL: digits, kept as a string (ids may pass 2^53, where a number changes them). */
export const campaignIdParam = z.string().regex(/^[1-9]\d{0,39}$/);

/** `notFound`: an unknown id, or another account's campaign (the service says so for both). */
export async function campaignPage(shop: string, rawId: string | undefined, zone: string) {
  const id = campaignIdParam.safeParse(rawId);
  if (!id.success) return { notFound: true as const };
  const access = await serviceAccess(shop);
  if (noService(access)) return { notFound: false as const, service: noServiceView(access), campaign: null, zone, problem: null };
  try {
    const [campaign, reach] = await Promise.all([access.client.campaigns.get(id.data), confirmedCount(access.client)]);
    await noteCampaign(shop, campaign, access.baseUrl);
    const activity = await activityView(shop, campaign);
    return { notFound: false as const, service: null, campaign: toView(campaign, access.baseUrl, zone), zone, problem: null, reach, activity };
  } catch (error) {
    if (isMarketingServiceError(error) && error.kind === "campaign_not_found") return { notFound: true as const };
    return { notFound: false as const, service: null, campaign: null, zone, problem: describeLoadError(error, access.baseUrl, "This campaign") };
  }
}

/**
 * How many people a send reaches today: the service sends to every confirmed person (§4.2), so the
 * people list filtered by status `confirmed` gives the number (its total). Null when it cannot be read.
 */
async function confirmedCount(client: ServiceAccess["client"]): Promise<number | null> {
  try {
    return (await client.people.list({ status: "confirmed", page: 1, perPage: 1 })).meta.total;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------ actions

const text = (max: number) => z.string().trim().max(max, { error: `At most ${max} characters.` });
const optionalEmail = z
  .string()
  .trim()
  .transform((v) => v || undefined)
  .pipe(emailSchema.optional());
const flag = z
  .enum(["true", "false", ""])
  .optional()
  .transform((v) => v === "true");
const campaignName = text(255).min(1, { error: "Give the campaign a name." });

export const createFormSchema = z.object({
  intent: z.literal("create"),
  name: campaignName,
  templateId: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => v || undefined),
});

/** The Details card: saved by "Save draft", and with a send or schedule when it has unsaved changes. */
const detailsSchema = z.object({
  name: campaignName,
  subject: text(998),
  previewText: text(998),
  senderName: text(255),
  senderEmail: optionalEmail,
  replyToName: text(255),
  replyToEmail: optionalEmail,
});
type Details = z.infer<typeof detailsSchema>;

const STALE_FORM = "This page is out of date. Reload it and make your changes again.";
/**
 * The Details as the page loaded them (a hidden field, JSON): only the fields the merchant changed
 * since are saved, so a change made meanwhile in the email editor is not written back over.
 */
const loadedText = z.string({ error: STALE_FORM }).max(1000, { error: STALE_FORM });
const loadedSchema = z
  .string({ error: STALE_FORM })
  .transform((raw, ctx) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: STALE_FORM });
      return z.NEVER;
    }
  })
  .pipe(
    z.object(
      { name: loadedText, subject: loadedText, previewText: loadedText, senderName: loadedText, senderEmail: loadedText, replyToName: loadedText, replyToEmail: loadedText },
      { error: STALE_FORM },
    ),
  );
const detailsFormSchema = detailsSchema.extend({ loaded: loadedSchema });
type DetailsForm = z.infer<typeof detailsFormSchema>;
const updateFormSchema = detailsFormSchema.extend({ intent: z.literal("update") });

const EDITED_ELSEWHERE = "This campaign was changed in the email editor since you opened it. Reload to see the changes.";

/**
 * What the merchant changed on the page since it loaded, or a refusal when one of those fields was
 * also changed elsewhere meanwhile (the email editor, a colleague): never overwritten unseen.
 */
function changesSinceLoaded(intent: string, form: Details, loaded: DetailValues, saved: Campaign): { changed: DetailKey[] } | { problem: CampaignActionResult } {
  const { changed, clash } = detailChanges(form, loaded, detailValues(saved));
  if (clash.length) {
    return { problem: refused(intent, { kind: "edited_elsewhere", title: intent === "update" ? "Nothing was saved" : "Nothing was saved or sent", message: EDITED_ELSEWHERE }) };
  }
  return { changed };
}

const recipientsSchema = z
  .string()
  .transform((v) => v.split(/[\s,;]+/).filter(Boolean))
  .pipe(
    z
      .array(emailSchema)
      .min(1, { error: "Enter at least one email address." })
      .max(10, { error: "At most 10 addresses per test." })
      .refine((r) => new Set(r.map((x) => x.toLowerCase())).size === r.length, { error: "Each address only once." }),
  );

const ZONE_UNKNOWN = "This form did not carry a valid time zone, so the time was not scheduled. Reload the page and pick the time again.";

const detailFormSchema = z.discriminatedUnion("intent", [
  updateFormSchema,
  z.object({ intent: z.literal("clone"), name: text(255).optional().transform((v) => v || undefined) }),
  z.object({ intent: z.literal("delete") }),
  z.object({ intent: z.literal("test-send"), recipients: recipientsSchema }),
  z.object({
    intent: z.literal("schedule"),
    scheduledAt: z.string({ error: "Pick a date and time." }).trim().regex(LOCAL_DATETIME_RE, { error: "Pick a date and time." }),
    // The zone the page showed the picker in: the time is read in it, never in one looked up again.
    zone: z.string({ error: ZONE_UNKNOWN }).trim().refine(isValidZone, { error: ZONE_UNKNOWN }),
    force: flag,
  }),
  z.object({ intent: z.literal("send"), force: flag }),
  z.object({ intent: z.literal("unschedule") }),
]);

export type CampaignActionResult =
  | { ok: true; intent: string; toast: string; at: number; goTo?: string }
  | { ok: false; intent: string; problem: ServiceProblem; toast?: string; error?: boolean; at: number };

const refused = (intent: string, problem: ServiceProblem): CampaignActionResult => ({ ok: false, intent, problem, at: Date.now() });

function formProblem(intent: string, error: z.ZodError): CampaignActionResult {
  const fields = fieldErrors(error);
  // One message for the field, not one per address.
  const perAddress = Object.keys(fields).filter((k) => k.startsWith("recipients."));
  if (perAddress.length) {
    for (const k of perAddress) delete fields[k];
    fields.recipients = "Each recipient must be an email address.";
  }
  return refused(intent, { kind: "form", title: "Please check the highlighted fields", message: Object.values(fields).join(" "), fields });
}

function unavailable(intent: string, access: NoService): CampaignActionResult {
  return refused(
    intent,
    access.state === "paused"
      ? { kind: "paused", title: "Sync is paused", message: "The marketing service rejected this store's API key. Paste a valid key on the Connection page.", links: [{ label: "Open the Connection page", url: "/app/connection", external: false }] }
      : { kind: "not_connected", title: "Not connected", message: "Connect your marketing account first.", links: [{ label: "Open the Connection page", url: "/app/connection", external: false }] },
  );
}

async function withService(shop: string, intent: string, run: (access: ServiceAccess) => Promise<CampaignActionResult>): Promise<CampaignActionResult> {
  const access = await serviceAccess(shop);
  if (noService(access)) return unavailable(intent, access);
  try {
    return await run(access);
  } catch (error) {
    const problem = describeServiceError(error, access.baseUrl);
    logger().info({ shop, intent, kind: problem.kind }, "campaign action refused");
    return refused(intent, problem);
  }
}

/** Create a draft, blank or from a template (the campaigns list and the templates page). */
export async function createCampaign(shop: string, form: FormData): Promise<CampaignActionResult> {
  const parsed = createFormSchema.safeParse(Object.fromEntries(form));
  if (!parsed.success) return formProblem("create", parsed.error);
  const { name, templateId } = parsed.data;
  return withService(shop, "create", async ({ client }) => {
    const c = await client.campaigns.create({ name, ...(templateId ? { templateId } : {}) });
    return { ok: true, intent: "create", toast: `Draft “${c.name}” created`, goTo: `/app/campaigns/${c.id}`, at: Date.now() };
  });
}

/**
 * An empty sender or reply-to address on a draft that has one: §4.2 has no way to clear it (the
 * service keeps the saved one), so the field is refused rather than "saved".
 */
function clearedAddresses(saved: Campaign, form: { senderEmail?: string; replyToEmail?: string }, changed: readonly DetailKey[]): Record<string, string> {
  const fields: Record<string, string> = {};
  if (changed.includes("senderEmail") && !form.senderEmail && saved.sender?.email) {
    fields.senderEmail = `A campaign needs a sender email, so it cannot be removed; change it instead. The saved one is ${saved.sender.email}.`;
  }
  if (changed.includes("replyToEmail") && !form.replyToEmail && saved.replyTo?.email) {
    fields.replyToEmail = `The reply-to email cannot be removed, only changed. The saved one is ${saved.replyTo.email}.`;
  }
  return fields;
}

const NO_SUBJECT = "Add a subject before sending.";

/**
 * Before a draft is sent or scheduled: the Details the merchant changed on the page are saved
 * (what the merchant sees is what goes out, unless the editor changed the same field meanwhile),
 * and a draft without a subject is refused, whatever the form said. Anything else the service
 * checks itself (content, review, sender, limits).
 */
async function readyToSend(client: ServiceAccess["client"], id: string, intent: string, details: DetailsForm | null): Promise<CampaignActionResult | null> {
  const saved = await client.campaigns.get(id);
  // Not a draft: the service's own refusal says so.
  if (saved.status !== "draft") return null;
  let changed: DetailKey[] = [];
  if (details) {
    const since = changesSinceLoaded(intent, details, details.loaded, saved);
    if ("problem" in since) return since.problem;
    changed = since.changed;
  }
  const subject = details && changed.includes("subject") ? details.subject : (saved.subject ?? "").trim();
  if (!subject) {
    return refused(intent, { kind: "form", title: "This campaign has no subject", message: `${NO_SUBJECT} Nothing was sent.`, fields: { subject: NO_SUBJECT } });
  }
  if (!details || !changed.length) return null;
  const cleared = clearedAddresses(saved, details, changed);
  if (Object.keys(cleared).length) return refused(intent, { kind: "form", title: "Nothing was saved or sent", message: Object.values(cleared).join(" "), fields: cleared });
  await saveDetails(client, id, details, changed);
  return null;
}

/** Before a test: the Details the merchant changed on the page are saved (a draft only; none is refused for a missing subject). */
async function saveChangedDetails(client: ServiceAccess["client"], id: string, intent: string, details: DetailsForm): Promise<{ changed: DetailKey[] } | { problem: CampaignActionResult }> {
  const saved = await client.campaigns.get(id);
  if (saved.status !== "draft") return { changed: [] };
  const since = changesSinceLoaded(intent, details, details.loaded, saved);
  if ("problem" in since) return since;
  if (!since.changed.length) return since;
  const cleared = clearedAddresses(saved, details, since.changed);
  if (Object.keys(cleared).length) return { problem: refused(intent, { kind: "form", title: "Nothing was saved or sent", message: Object.values(cleared).join(" "), fields: cleared }) };
  await saveDetails(client, id, details, since.changed);
  return since;
}

/** Only the changed fields: the service keeps the rest as they are now. */
function saveDetails(client: ServiceAccess["client"], id: string, d: Details, changed: readonly DetailKey[]) {
  const has = (k: DetailKey) => changed.includes(k);
  const person = (name: string, email: string | undefined, nameKey: DetailKey, emailKey: DetailKey) =>
    has(nameKey) || has(emailKey) ? { ...(has(nameKey) ? { name } : {}), ...(has(emailKey) && email ? { email } : {}) } : undefined;
  return client.campaigns.update(id, {
    ...(has("name") ? { name: d.name } : {}),
    ...(has("subject") ? { subject: d.subject } : {}),
    ...(has("previewText") ? { previewText: d.previewText } : {}),
    ...(person(d.senderName, d.senderEmail, "senderName", "senderEmail") ? { sender: person(d.senderName, d.senderEmail, "senderName", "senderEmail") } : {}),
    ...(person(d.replyToName, d.replyToEmail, "replyToName", "replyToEmail") ? { replyTo: person(d.replyToName, d.replyToEmail, "replyToName", "replyToEmail") } : {}),
  });
}

/** The campaign page's actions. A schedule's time is read in the zone the form carries. */
export async function campaignAction(shop: string, rawId: string | undefined, form: FormData): Promise<CampaignActionResult> {
  const raw = Object.fromEntries(form);
  const intent = typeof raw.intent === "string" ? raw.intent : "";
  const id = campaignIdParam.safeParse(rawId);
  if (!id.success) return refused(intent, { kind: "campaign_not_found", title: "Campaign not found", message: "This campaign does not exist." });
  const parsed = detailFormSchema.safeParse(raw);
  if (!parsed.success) {
    if (!["update", "clone", "delete", "test-send", "schedule", "send", "unschedule"].includes(intent)) {
      return refused(intent, { kind: "form", title: "That action is not possible", message: "Reload the page and try again." });
    }
    return formProblem(intent, parsed.error);
  }
  const a = parsed.data;
  // A send or schedule carries the Details card only when it has unsaved changes.
  let details: DetailsForm | null = null;
  if ((a.intent === "send" || a.intent === "schedule" || a.intent === "test-send") && "name" in raw) {
    const d = detailsFormSchema.safeParse(raw);
    if (!d.success) return formProblem(a.intent, d.error);
    details = d.data;
  }
  return withService(shop, a.intent, async ({ client, baseUrl }) => {
    const done = (toast: string, goTo?: string): CampaignActionResult => ({ ok: true, intent: a.intent, toast, goTo, at: Date.now() });
    switch (a.intent) {
      case "update": {
        const saved = await client.campaigns.get(id.data);
        // Not a draft: the service's own refusal says why.
        if (saved.status !== "draft") {
          await saveDetails(client, id.data, a, DETAIL_KEYS);
          return done("Draft saved");
        }
        const since = changesSinceLoaded("update", a, a.loaded, saved);
        if ("problem" in since) return since.problem;
        if (!since.changed.length) return done("No changes to save");
        const fields = clearedAddresses(saved, a, since.changed);
        if (Object.keys(fields).length) return refused("update", { kind: "form", title: "Nothing was saved", message: Object.values(fields).join(" "), fields });
        await saveDetails(client, id.data, a, since.changed);
        return done("Draft saved");
      }
      case "clone": {
        const copy = await client.campaigns.clone(id.data, a.name ? { name: a.name } : {});
        return done(`Copied as “${copy.name}”`, `/app/campaigns/${copy.id}`);
      }
      case "delete":
        await client.campaigns.delete(id.data);
        await forgetCampaign(shop, id.data);
        return done("Campaign deleted", "/app/campaigns?status=all");
      case "test-send": {
        // A test shows what the merchant sees: Details changed on the page are saved first.
        const saved = details ? await saveChangedDetails(client, id.data, "test-send", details) : { changed: [] };
        if ("problem" in saved) return saved.problem;
        const sent = await client.campaigns.testSend(id.data, a.recipients);
        return done(`${saved.changed.length ? "Changes saved. " : ""}Test sent to ${sent.recipients.join(", ")}`);
      }
      case "schedule": {
        const zone = a.zone;
        const iso = localToIso(a.scheduledAt, zone);
        if (!iso) return refused("schedule", { kind: "form", title: "That time cannot be used", message: "Pick a date and time.", fields: { scheduledAt: "Pick a date and time." } });
        if (Date.parse(serviceRounded(iso) ?? iso) <= Date.now()) {
          return refused("schedule", { kind: "form", title: "That time cannot be used", message: "Pick a date and time in the future.", fields: { scheduledAt: "Pick a date and time in the future." } });
        }
        const notReady = await readyToSend(client, id.data, "schedule", details);
        if (notReady) return notReady;
        const c = await client.campaigns.schedule(id.data, { scheduledAt: iso, ...(a.force ? { force: true } : {}) });
        await noteCampaign(shop, c, baseUrl, { create: true });
        return done(c.scheduledAt ? `Scheduled: goes out ${scheduleText(c.scheduledAt, zone)}` : "Scheduled");
      }
      case "send": {
        const notReady = await readyToSend(client, id.data, "send", details);
        if (notReady) return notReady;
        const c = await client.campaigns.send(id.data, a.force ? { force: true } : {});
        await noteCampaign(shop, c, baseUrl, { create: true });
        return done("Sending to your whole confirmed list");
      }
      case "unschedule": {
        // The service has no unschedule (§3.1): a copy goes back to draft (same content and
        // targeting, its own id, review again), then the scheduled one is deleted so it never goes out.
        const saved = await client.campaigns.get(id.data);
        if (saved.status !== "scheduled") {
          return refused("unschedule", { kind: "form", title: "This campaign is not scheduled", message: "Only a scheduled campaign can be moved back to draft. Reload the page." });
        }
        const copy = await client.campaigns.clone(id.data, { name: saved.name });
        try {
          await client.campaigns.delete(id.data);
        } catch (error) {
          logger().warn({ shop, campaign: id.data, copy: copy.id, err: error instanceof Error ? error.message : String(error) }, "unschedule: copy made, scheduled campaign not deleted");
          return refused("unschedule", {
            kind: "unschedule_incomplete",
            title: "The scheduled campaign is still scheduled",
            message: `A draft copy was made (“${copy.name}”), but the scheduled campaign could not be deleted and will still go out. Delete it on this page, or try again.`,
          });
        }
        await forgetCampaign(shop, id.data);
        return done(`Moved back to draft as a copy: pick a new time or send it when ready`, `/app/campaigns/${copy.id}`);
      }
    }
  });
}
