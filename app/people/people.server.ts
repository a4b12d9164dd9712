/**
 * People in the admin: search the signed-in shop's marketing contacts, one person's fields, tags,
 * series, consent and tracked events (so support can answer "did this order reach the service?"),
 * and the way from a Shopify customer to their person page.
 */
import { z } from "zod";
import { fieldErrors } from "../admin/forms";
import { describeLoadError, describeServiceError, type ServiceProblem } from "../admin/service-errors";
import { noService, noServiceView, serviceAccess } from "../admin/service-access.server";
import { logger } from "../logger.server";
import { isMarketingServiceError } from "../services/marketing/marketing-error";
import { emailSchema, personStatusFilters, type PaginationMeta, type PeopleListFilters, type Person, type PersonEventRecord } from "../services/marketing/schemas";
import { messageOf } from "../errors";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import { eventFilterName, eventLabel, eventSummary, fieldLabel } from "../admin/event-words";

const PER_PAGE = 25;

export interface PageInfo {
  page: number;
  lastPage: number;
  total: number;
}
const pageInfo = (m: PaginationMeta): PageInfo => ({ page: m.currentPage, lastPage: m.lastPage, total: m.total });

export interface PersonRow {
  id: string;
  email: string;
  status: string;
  statusDetails: string | null;
  tags: string[];
  createdAt: string | null;
}

export interface PersonView extends PersonRow {
  /** `label`: the field's name in words ("First name") */
  customFields: { name: string; label: string; value: string }[];
  series: { id: string; name: string }[];
}

export interface EventRow {
  at: string;
  /** the service's name, as the event filter takes it */
  event: string;
  /** the name in words: "Order completed" */
  label: string;
  /** the data in one line: "Order #1001 · €42.50" */
  summary: string;
  /** the data as the service stored it (JSON), for support */
  properties: string;
}

const when = (unix: number | undefined) => (unix ? new Date(unix * 1000).toISOString() : null);
const display = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));

const toRow = (p: Person): PersonRow => ({
  id: p.id,
  email: p.email,
  status: p.status,
  statusDetails: p.statusDetails ?? null,
  tags: p.tags,
  createdAt: when(p.timestamp),
});

const toView = (p: Person): PersonView => ({
  ...toRow(p),
  customFields: Object.entries(p.customFields).map(([name, value]) => ({ name, label: fieldLabel(name), value: display(value) })),
  series: (p.series ?? []).map((s) => ({ id: s.id, name: s.name ?? s.id })),
});

const toEvent = (e: PersonEventRecord): EventRow => ({
  at: new Date(e.timestamp * 1000).toISOString(),
  event: e.event,
  label: eventLabel(e.event),
  summary: eventSummary(e.event, e.properties),
  properties: JSON.stringify(e.properties),
});

// ------------------------------------------------------------------ search

const list = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .optional()
    .transform((v) => (v ? [...new Set(v.split(",").map((x) => x.trim()).filter(Boolean))] : []));

/** The search form (a GET query string). Tags and segments: comma-separated, included or excluded. */
export const peopleSearchSchema = z
  .object({
    q: z.string().trim().max(254, { error: "At most 254 characters." }).optional().transform((v) => v || undefined),
    status: z.enum(personStatusFilters, { error: "Pick a status from the list." }).optional(),
    tags: list(1000),
    notTags: list(1000),
    segments: list(500).pipe(z.array(z.string().regex(/^\d+$/, { error: "Segment numbers only, separated by commas (for example 12, 15)." }))),
    notSegments: list(500).pipe(z.array(z.string().regex(/^\d+$/, { error: "Segment numbers only, separated by commas (for example 12, 15)." }))),
    field: z
      .string()
      .trim()
      .max(100)
      .regex(/^[A-Za-z0-9_-]*$/, { error: "A custom field name has only letters, digits, - and _." })
      .optional()
      .transform((v) => v || undefined),
    value: z.string().trim().max(255).optional(),
    page: z.coerce.number().int().min(1).max(100_000).catch(1),
  })
  .refine((v) => !v.field || (v.value ?? "") !== "", { path: ["value"], error: "Enter the value the custom field must have." });

export type PeopleSearchForm = Record<string, string>;

/** The search page: the form as typed (to show it back), field errors, or a page of people. */
export async function peoplePage(shop: string, params: URLSearchParams) {
  const raw: PeopleSearchForm = {};
  for (const key of ["q", "status", "tags", "notTags", "segments", "notSegments", "field", "value", "page"]) {
    const v = params.get(key);
    if (v !== null && v !== "") raw[key] = v;
  }
  const access = await serviceAccess(shop);
  if (noService(access)) return { service: noServiceView(access), form: raw, errors: {}, people: [], page: null, problem: null, consent: null };
  const parsed = peopleSearchSchema.safeParse(raw);
  if (!parsed.success) return { service: null, form: raw, errors: listFieldErrors(parsed.error), people: [], page: null, problem: null, consent: null };
  const f = parsed.data;
  const filters: PeopleListFilters = {
    email: f.q,
    status: f.status,
    tags: [...f.tags, ...f.notTags.map((t) => `-${t.replace(/^-/, "")}`)],
    segments: [...f.segments, ...f.notSegments.map((s) => `-${s}`)],
    fields: f.field ? { [f.field]: f.value ?? "" } : undefined,
    page: f.page,
    perPage: PER_PAGE,
  };
  try {
    const [result, byName, consent] = await Promise.all([
      access.client.people.list(filters),
      // The service searches e-mails by keyword and custom fields by exact value only: a name typed
      // in the search box is looked up as a first name, a last name or both, on the first page.
      f.q && f.page === 1 ? nameMatches(access.client, f.q, { ...filters, email: undefined, fields: filters.fields }) : Promise.resolve([]),
      f.page === 1 ? consentCounts(access.client).catch(() => null) : Promise.resolve(null),
    ]);
    const seen = new Set(result.data.map((p) => p.id));
    const people = [...byName.filter((p) => !seen.has(p.id) && seen.add(p.id)), ...result.data].map(toRow);
    return { service: null, form: raw, errors: {}, people, page: pageInfo(result.meta), problem: null, consent };
  } catch (error) {
    return { service: null, form: raw, errors: {}, people: [], page: null, problem: describeLoadError(error, access.baseUrl, "Your contacts"), consent: null };
  }
}

type PeopleClient = NonNullable<Extract<Awaited<ReturnType<typeof serviceAccess>>, { client: unknown }>["client"]>;

const titleCase = (w: string) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();

/** People whose first name, last name or both ("Ada Lovelace") are what was typed, as typed or capitalised. */
async function nameMatches(client: PeopleClient, q: string, base: PeopleListFilters): Promise<Person[]> {
  if (q.includes("@")) return [];
  const words = q.split(/\s+/).filter(Boolean);
  if (!words.length || words.length > 3) return [];
  const variants = (w: string) => [...new Set([w, titleCase(w)])];
  const queries: Record<string, string>[] =
    words.length === 1
      ? variants(words[0]).flatMap((w): Record<string, string>[] => [{ firstName: w }, { lastName: w }])
      : variants(words[0]).flatMap((first) => variants(words.slice(1).join(" ")).map((last) => ({ firstName: first, lastName: last })));
  const lists = await Promise.all(
    queries.map((fields) => client.people.list({ ...base, fields: { ...base.fields, ...fields }, page: 1, perPage: 10 }).then((r) => r.data).catch(() => [])),
  );
  return lists.flat();
}

export interface ConsentCounts {
  subscribed: number;
  waiting: number;
  unsubscribed: number;
  /** blocked by the service (bounces, suppression) */
  blocked: number;
}

/** How many contacts are subscribed, waiting for confirmation, unsubscribed and blocked: the list filtered by status, its total. */
export async function consentCounts(client: PeopleClient): Promise<ConsentCounts> {
  const total = (status: "confirmed" | "unconfirmed" | "unsubscribed" | "blocked") => client.people.list({ status, page: 1, perPage: 1 }).then((r) => r.meta.total);
  const [subscribed, waiting, unsubscribed, blocked] = await Promise.all([total("confirmed"), total("unconfirmed"), total("unsubscribed"), total("blocked")]);
  return { subscribed, waiting, unsubscribed, blocked };
}

/** One message per form field: `segments.2` is the `segments` box. */
function listFieldErrors(error: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, message] of Object.entries(fieldErrors(error))) out[key.replace(/\.\d+$/, "")] ??= message;
  return out;
}

// ------------------------------------------------------------------ one person

// A person id is passed on as the digits typed, never as a JS number: ids past 2^53 would be rounded.
const idOrEmailParam = z.union([z.string().regex(/^\d{1,20}$/), emailSchema]);

export const eventFiltersSchema = z
  .object({
    event: z.string().trim().max(100, { error: "At most 100 characters." }).optional().transform((v) => v || undefined),
    search: z.string().trim().max(255, { error: "At most 255 characters." }).optional().transform((v) => v || undefined),
    from: z.iso.date({ error: "Use a date like 2026-05-01." }).optional(),
    to: z.iso.date({ error: "Use a date like 2026-05-31." }).optional(),
    page: z.coerce.number().int().min(1).max(100_000).catch(1),
  })
  .refine((v) => !v.from || !v.to || v.from <= v.to, { path: ["to"], error: "The end date is before the start date." });

/** `notFound`: not a person id or address, or nobody by that in this shop's account. */
export async function personPage(shop: string, rawIdOrEmail: string | undefined, params: URLSearchParams) {
  const key = idOrEmailParam.safeParse(rawIdOrEmail ?? "");
  if (!key.success) return { notFound: true as const };
  const filtersRaw: Record<string, string> = {};
  for (const k of ["event", "search", "from", "to", "page"]) {
    const v = params.get(k);
    if (v !== null && v !== "") filtersRaw[k] = v;
  }
  const access = await serviceAccess(shop);
  if (noService(access)) return { notFound: false as const, service: noServiceView(access), person: null, filters: filtersRaw, errors: {}, events: [], page: null, problem: null };
  const filters = eventFiltersSchema.safeParse(filtersRaw);
  try {
    const person = toView(await access.client.people.get(key.data));
    if (!filters.success) {
      return { notFound: false as const, service: null, person, filters: filtersRaw, errors: fieldErrors(filters.error), events: [], page: null, problem: null };
    }
    const f = filters.data;
    let events: EventRow[] = [];
    let page: PageInfo | null = null;
    let problem: ServiceProblem | null = null;
    try {
      const result = await access.client.people.events(key.data, { event: f.event ? eventFilterName(f.event) : undefined, search: f.search, dateFrom: f.from, dateTo: f.to, page: f.page, perPage: PER_PAGE });
      events = result.data.map(toEvent);
      page = pageInfo(result.meta);
    } catch (error) {
      problem = describeLoadError(error, access.baseUrl, "Their tracked events");
    }
    return { notFound: false as const, service: null, person, filters: filtersRaw, errors: problem?.fields ?? {}, events, page, problem };
  } catch (error) {
    if (isMarketingServiceError(error) && error.kind === "person_not_found") return { notFound: true as const };
    return { notFound: false as const, service: null, person: null, filters: filtersRaw, errors: {}, events: [], page: null, problem: describeLoadError(error, access.baseUrl, "This person") };
  }
}

// ------------------------------------------------------------------ from a Shopify customer

const CUSTOMER_EMAIL_QUERY = `#graphql
  query CustomerEmail($id: ID!) { customer(id: $id) { defaultEmailAddress { emailAddress } } }`;
const customerEmailAnswer = z.object({
  customer: z.object({ defaultEmailAddress: z.object({ emailAddress: z.string().nullish() }).nullish() }).nullable(),
});

/** The admin link passes the customer's numeric id (or its GraphQL id). */
const customerIdSchema = z.union([z.string().regex(/^\d{1,20}$/), z.string().regex(/^gid:\/\/shopify\/Customer\/\d{1,20}$/)]);

export type CustomerLookup =
  | { kind: "person"; to: string }
  | { kind: "bad_id" | "no_customer" | "no_email" | "not_in_service" | "unavailable"; email?: string; service?: ReturnType<typeof noServiceView>; problem?: ServiceProblem };

/** Finds the person page of a Shopify customer: their email through the Admin API, then the service. */
export async function personForCustomer(shop: string, rawId: string | null | undefined): Promise<CustomerLookup> {
  const id = customerIdSchema.safeParse(rawId ?? "");
  if (!id.success) return { kind: "bad_id" };
  const gid = id.data.startsWith("gid://") ? id.data : `gid://shopify/Customer/${id.data}`;
  const access = await serviceAccess(shop);
  if (noService(access)) return { kind: "unavailable", service: noServiceView(access) };
  let email: string | null | undefined;
  try {
    const { customer } = await adminData(shop, customerEmailAnswer, CUSTOMER_EMAIL_QUERY, { id: gid }, MERCHANT_WAITING);
    if (!customer) return { kind: "no_customer" };
    email = customer.defaultEmailAddress?.emailAddress;
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "customer email lookup failed");
    return { kind: "unavailable", problem: { kind: "shopify", title: "Shopify did not answer", message: "The customer could not be read from Shopify. Please try again." } };
  }
  if (!email) return { kind: "no_email" };
  try {
    const check = await access.client.people.check(email);
    return check.exists ? { kind: "person", to: `/app/people/${encodeURIComponent(email)}` } : { kind: "not_in_service", email };
  } catch (error) {
    if (isMarketingServiceError(error) && error.kind === "validation" && error.local) return { kind: "not_in_service", email };
    return { kind: "unavailable", problem: describeServiceError(error, access.baseUrl) };
  }
}
