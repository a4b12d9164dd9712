/**
 * In-memory, per-account implementation of the marketing service interface
 * (docs/marketing-service-interface.md). Transport, faults and
 * request recording live in server.ts; this file is pure state + handlers.
 *
 * Written from the spec alone: nothing is imported from app/ (no shared schemas,
 * messages or policy), so the contract tests compare the client with the spec's
 * reading here, not with itself. Where the spec is silent the emulator is
 * permissive; its choices are in ./decisions.ts.
 */
import { randomUUID } from "node:crypto";
import {
  DEFAULT_SENDING_LIMIT,
  ELIGIBILITY_FAILURE_STATUS,
  EMAIL_RE,
  INACTIVE_DEFAULT_DETAILS,
  MESSAGES,
  NOT_FOUND_STATUS,
  RATE_LIMITED_STATUS,
  SKIP_DOI_WITHOUT_STATUS,
  SUCCESS_STATUS,
  TEST_SEND_PER_MINUTE,
  UNAUTHENTICATED_STATUS,
  UNDELETABLE_CAMPAIGN_STATUSES,
  typedEventName,
  verifiedDomainsFor,
} from "./decisions";
import { actionErrors, EVENT_ACTIONS, occurredAtSeconds, validateEventBody } from "./events";

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

export type AccountStatus = "active" | "suspended" | "cancelled";
export type StatusDetails = "confirmed" | "unconfirmed" | "unsubscribed" | "blocked";
export type CampaignState = "draft" | "scheduled" | "preparing" | "sending" | "sent" | "paused" | "failed";

export interface AccountRec {
  id: number;
  company: string;
  email: string;
  phone: string;
  status: AccountStatus;
  createdAt: string;
  timezone: string;
  plan: { marketing: string };
  logoUrl: string;
  doubleOptIn: boolean;
  /** remaining campaign sends this period */
  sendingLimitRemaining: number;
  sendingLimitResetsAt: string;
  /** when true, send/schedule fail with errors.send + upgrade */
  upgradeRequired: boolean;
  verifiedDomains: string[];
  lastEventTrackedAt: number | null;
  segments: Map<string, { id: string; name: string; emails: Set<string> }>;
  series: Map<string, string>;
  testSendLog: number[];
}

export interface PersonRec {
  id: number;
  accountId: number;
  email: string;
  statusDetails: StatusDetails;
  hardBounced: boolean;
  customFields: Record<string, unknown>;
  tags: string[];
  series: string[];
  timestamp: number;
}

export interface StoredEvent {
  id: string;
  accountId: number;
  personId: number | null;
  event: string;
  properties: Record<string, unknown>;
  /** §2.3: Unix time the event occurred (from the body, see events.ts occurredAtSeconds; else receipt) */
  timestamp: number;
  /** Unix time the service received it */
  receivedAt: number;
  silent: boolean;
  /** the request's top-level `source` (kept beside the properties, not inside them) */
  source?: string;
  handle: { email?: string; referenceId?: string; uuid?: string };
}

export interface CampaignRec {
  id: number;
  accountId: number;
  name: string;
  status: CampaignState;
  subject: string;
  previewText: string;
  sender: { name: string; email: string };
  replyTo: { name: string; email: string };
  builderReviewed: boolean;
  createdAt: string;
  scheduledAt: string | null;
  sentAt: string | null;
  /** email content; null = the campaign has no email yet */
  content: string | null;
  sendRecorded: boolean;
}

export interface TemplateRec {
  id: string;
  /** null for shared templates */
  accountId: number | null;
  published: boolean;
  name: string;
  description: string;
  createdAt: string;
  /** the email content a campaign created from it starts with (§3.1 "template content copied") */
  content: string;
}

export interface SentEmail {
  id: number;
  at: string;
  accountId: number;
  kind: "confirmation" | "campaign" | "test";
  to: string[];
  campaignId?: number;
  personId?: number;
}

export interface AutomationRun {
  at: string;
  accountId: number;
  event: string;
  personId: number | null;
  email: string | null;
}

export interface ApiKeyRec {
  accountId: number;
  plugin: boolean;
  /** revoked: known to the service, no longer valid credentials */
  revoked?: boolean;
}

export interface BehaviourFaults {
  /** treat every account as not active */
  inactiveAccount?: boolean;
  /** treat every key as a content-site plugin key */
  pluginKey?: boolean;
  /** send/schedule eligibility check fails: message asks to retry; status 422 unless given (§7 shows none) */
  eligibilityCheckFails?: boolean | { status?: number };
  /** send/schedule fails for an unspecified reason (422 errors.campaign) */
  sendFails?: boolean;
  /** test-send could not be delivered (422 errors.testSend) */
  testSendUndeliverable?: boolean;
  /**
   * Event endpoints answer 200 `{success: false, timestamp}` (§4.5's response with success false) and
   * store nothing; `message` adds a `message` field to that body; `count` limits it to the next n events.
   */
  eventsNotAccepted?: boolean | { message?: string; count?: number };
}

export interface ApiRequest {
  method: string;
  /** decoded path segments after /api */
  segments: string[];
  path: string;
  query: URLSearchParams;
  body: unknown;
  authorization: string | undefined;
  baseUrl: string;
}

export interface ApiResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  accountId: number | null;
}

export interface CreateAccountOptions {
  doubleOptIn?: boolean;
  status?: AccountStatus;
  pluginKey?: boolean;
  company?: string;
  email?: string;
  sendingLimitRemaining?: number;
  upgradeRequired?: boolean;
  verifiedDomains?: string[];
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const ISO_OFFSET_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const YMD_RE = /^\d{4}-\d{2}-\d{2}$/;

const nowSec = () => Math.floor(Date.now() / 1000);
const isoNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, "+00:00");
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

type Errors = Record<string, string[]>;
const addErr = (e: Errors, key: string, msg: string) => (e[key] ??= []).push(msg);

const ok = (status: number, body: unknown, accountId: number | null): ApiResponse => ({ status, body, accountId });
const invalid = (errors: Errors, accountId: number | null, extra: Record<string, unknown> = {}, message: string = MESSAGES.invalid): ApiResponse => ({
  status: 422,
  body: { message, errors, status_code: 422, ...extra },
  accountId,
});
const notFound = (message: string, accountId: number | null): ApiResponse => ({ status: NOT_FOUND_STATUS, body: { message }, accountId });

function validYmd(s: string): boolean {
  if (!YMD_RE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

function parseIntParam(q: URLSearchParams, key: string, def: number, min: number, max: number, errors: Errors): number {
  const raw = q.get(key);
  if (raw === null || raw === "") return def;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    addErr(errors, key, `The ${key} must be an integer between ${min} and ${max}.`);
    return def;
  }
  return Number(raw);
}

/** Laravel-style page envelope with relative links that keep the other query params. */
function paginate<T>(items: T[], page: number, perPage: number, path: string, query: URLSearchParams, perPageKey: string) {
  const total = items.length;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const data = items.slice((page - 1) * perPage, page * perPage);
  // §2.1 types from/to as integers: an empty page has 0 for both (not null)
  const from = data.length ? (page - 1) * perPage + 1 : 0;
  const to = data.length ? from + data.length - 1 : 0;
  const link = (n: number) => {
    const q = new URLSearchParams(query);
    q.set(perPageKey, String(perPage));
    q.set("page", String(n));
    return `${path}?${q.toString()}`;
  };
  return {
    data,
    meta: { currentPage: page, lastPage, from, to, total, perPage, path },
    links: {
      first: link(1),
      last: link(lastPage),
      prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
      next: page < lastPage ? link(page + 1) : null,
    },
  };
}

function roundUpToMinuteUtc(ms: number): string {
  const d = new Date(ms);
  if (d.getUTCSeconds() !== 0 || d.getUTCMilliseconds() !== 0) {
    d.setUTCSeconds(0, 0);
    d.setUTCMinutes(d.getUTCMinutes() + 1);
  }
  return d.toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

function firstOfNextMonth(): string {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------

const emailKey = (accountId: number, email: string) => `${accountId} ${email.toLowerCase()}`;
const referenceKey = (accountId: number, ref: string) => `${accountId} ${ref}`;

export class ServiceState {
  accounts = new Map<number, AccountRec>();
  keys = new Map<string, ApiKeyRec>();
  people: PersonRec[] = [];
  // Lookups by id and by account + email: a scan per request made a 100k-person import quadratic.
  // Kept in step where people are added, re-addressed (emailChange) and deleted.
  private peopleById = new Map<number, PersonRec>();
  private peopleByEmail = new Map<string, PersonRec>();
  // People by account + customFields.referenceId (events name their person by it when the email is
  // unknown, e.g. guest orders: a scan there made a 100k import quadratic). Kept in step by
  // setCustomField and deletePerson, the only writers of customFields after creation.
  private peopleByReference = new Map<string, PersonRec[]>();
  events: StoredEvent[] = [];
  unattachedEvents: StoredEvent[] = [];
  campaigns: CampaignRec[] = [];
  templates: TemplateRec[] = [];
  sentEmails: SentEmail[] = [];
  automations: AutomationRun[] = [];
  /** eventUuid from POST /api/people → person */
  eventUuids = new Map<string, { accountId: number; personId: number }>();
  behaviour: BehaviourFaults = {};
  /** Where the snippet's scripts come from (the emulator's own /tracker when it serves them). */
  trackerBase = "https://cdn.marketing.example/tracker";
  private seq = { account: 100, person: 1000, campaign: 1, template: 1, email: 1 };

  /**
   * Person and campaign ids are rendered as `idBase + n` (`startEmulator({ idBase })`): a base above
   * 2^53 hands out ids a JS number cannot hold, as a real service with large ids would (§2: integers).
   * Records keep their small internal `n`; ids are translated where they enter and leave.
   */
  readonly idBase: bigint;

  constructor(options: { idBase?: bigint | number | string } = {}) {
    this.idBase = BigInt(options.idBase ?? 0);
    this.seedSharedTemplates();
  }

  /** The id a client sees: a number while exact, else a bigint (written as a JSON integer). */
  externalId(n: number): number | bigint {
    if (this.idBase === 0n) return n;
    const v = this.idBase + BigInt(n);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }

  /** A client's id (digits, number or bigint) → the record's internal id; undefined when it cannot be one. */
  internalId(raw: string | number | bigint): number | undefined {
    if (typeof raw === "string" && !/^\d+$/.test(raw)) return undefined;
    if (typeof raw === "number" && !Number.isInteger(raw)) return undefined;
    const v = BigInt(raw) - this.idBase;
    return v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
  }

  // ------------------------------------------------------------ accounts

  createAccount(opts: CreateAccountOptions = {}, apiKey?: string): { apiKey: string; accountId: number } {
    const id = ++this.seq.account;
    const email = opts.email ?? `owner@account${id}.example`;
    const acc: AccountRec = {
      id,
      company: opts.company ?? `Account ${id} Ltd`,
      email,
      phone: "+15555550100",
      status: opts.status ?? "active",
      createdAt: isoNow(),
      timezone: "UTC",
      plan: { marketing: "Growth" },
      logoUrl: "",
      doubleOptIn: opts.doubleOptIn ?? true,
      sendingLimitRemaining: opts.sendingLimitRemaining ?? DEFAULT_SENDING_LIMIT,
      sendingLimitResetsAt: firstOfNextMonth(),
      upgradeRequired: opts.upgradeRequired ?? false,
      verifiedDomains: opts.verifiedDomains ?? verifiedDomainsFor(email),
      lastEventTrackedAt: null,
      segments: new Map(),
      series: new Map([
        ["1", "Welcome series"],
        ["2", "Win-back series"],
      ]),
      testSendLog: [],
    };
    this.accounts.set(id, acc);
    this.seedOwnTemplates(id);
    const key = this.createApiKey(id, { plugin: opts.pluginKey ?? false }, apiKey);
    return { apiKey: key, accountId: id };
  }

  createApiKey(accountId: number, opts: { plugin?: boolean } = {}, key?: string): string {
    const k = key ?? `mk_${opts.plugin ? "plugin" : "live"}_${randomUUID().replace(/-/g, "")}`;
    this.keys.set(k, { accountId, plugin: opts.plugin ?? false });
    return k;
  }

  revokeApiKey(key: string): void {
    const k = this.keys.get(key);
    if (!k) throw new Error("emulator: no such API key");
    k.revoked = true;
  }

  account(id: number): AccountRec {
    const a = this.accounts.get(id);
    if (!a) throw new Error(`emulator: no account ${id}`);
    return a;
  }

  private seedOwnTemplates(accountId: number) {
    for (const [name, description] of [
      ["Welcome email", "A warm hello for new subscribers"],
      ["Monthly newsletter", "Three stories and a call to action"],
    ] as const) {
      const id = `tpl-${this.seq.template++}`;
      this.templates.push({ id, accountId, published: false, name, description, createdAt: isoNow(), content: `<h1>${name}</h1>` });
    }
  }

  private seedSharedTemplates() {
    for (const [name, published] of [
      ["Shared: Product launch", true],
      ["Shared: Seasonal sale", true],
      ["Shared: Abandoned cart", true],
      ["Shared: Draft (unpublished)", false],
    ] as const) {
      const id = `tpl-${this.seq.template++}`;
      this.templates.push({ id, accountId: null, published, name, description: `${name} template`, createdAt: isoNow(), content: `<h1>${name}</h1>` });
    }
  }

  // -------------------------------------------------------------- people

  /**
   * A signup through the service's own form (outside the API): a new person whose `source` is the
   * form's, with the account's double opt-in applied as for any new person (§3.2: unconfirmed and a
   * confirmation email, or confirmed); `confirm` then follows the confirmation link. An address
   * that is already a person is refused (the form's handling of it: not shown).
   */
  signUp(accountId: number, email: string, opts: { source: string; firstName?: string; lastName?: string; confirm: boolean }): PersonRec | undefined {
    const acc = this.account(accountId);
    if (this.findPerson(accountId, email)) return undefined;
    const p = this.newPerson(accountId, email);
    p.customFields.source = opts.source;
    if (opts.firstName) this.setCustomField(p, "firstName", opts.firstName);
    if (opts.lastName) this.setCustomField(p, "lastName", opts.lastName);
    this.applyDefaultOptIn(acc, p);
    if (opts.confirm && p.statusDetails === "unconfirmed") p.statusDetails = "confirmed";
    return p;
  }

  findPerson(accountId: number, idOrEmail: string): PersonRec | undefined {
    if (/^\d+$/.test(idOrEmail)) {
      const id = this.internalId(idOrEmail);
      const p = id === undefined ? undefined : this.peopleById.get(id);
      return p?.accountId === accountId ? p : undefined;
    }
    return this.peopleByEmail.get(emailKey(accountId, idOrEmail));
  }

  /** The earliest-created person of the account whose customFields.referenceId is `ref`. */
  private personByReference(accountId: number, ref: string): PersonRec | undefined {
    return this.peopleByReference.get(referenceKey(accountId, ref))?.[0];
  }

  private setCustomField(person: PersonRec, key: string, value: unknown) {
    if (key === "referenceId") this.unindexReference(person);
    if (value === undefined) delete person.customFields[key];
    else person.customFields[key] = value;
    if (key === "referenceId" && value !== undefined) {
      const k = referenceKey(person.accountId, String(value));
      const list = [...(this.peopleByReference.get(k) ?? []), person].sort((a, b) => a.id - b.id);
      this.peopleByReference.set(k, list);
    }
  }

  private unindexReference(person: PersonRec) {
    const old = person.customFields.referenceId;
    if (old === undefined) return;
    const k = referenceKey(person.accountId, String(old));
    const rest = (this.peopleByReference.get(k) ?? []).filter((p) => p !== person);
    if (rest.length) this.peopleByReference.set(k, rest);
    else this.peopleByReference.delete(k);
  }

  personStatus(p: PersonRec): "active" | "inactive" {
    return p.statusDetails === "confirmed" && !p.hardBounced ? "active" : "inactive";
  }

  eventsOf(personId: number): StoredEvent[] {
    return this.events.filter((e) => e.personId === personId);
  }

  private recordEmail(e: Omit<SentEmail, "id" | "at">) {
    this.sentEmails.push({ id: this.seq.email++, at: new Date().toISOString(), ...e });
  }

  private newPerson(accountId: number, email: string): PersonRec {
    const p: PersonRec = {
      id: ++this.seq.person,
      accountId,
      email,
      statusDetails: "unconfirmed",
      hardBounced: false,
      customFields: {},
      tags: [],
      series: [],
      timestamp: nowSec(),
    };
    this.people.push(p);
    this.peopleById.set(p.id, p);
    this.peopleByEmail.set(emailKey(accountId, email), p);
    return p;
  }

  /** New person status from the account's double opt-in (no explicit status given). */
  private applyDefaultOptIn(acc: AccountRec, p: PersonRec) {
    if (acc.doubleOptIn) {
      p.statusDetails = "unconfirmed";
      this.recordEmail({ accountId: acc.id, kind: "confirmation", to: [p.email], personId: p.id });
    } else {
      p.statusDetails = "confirmed";
    }
  }

  private storeEvent(acc: AccountRec, person: PersonRec | null, event: string, properties: Record<string, unknown>, silent: boolean, handle: StoredEvent["handle"], source: string | undefined, occurredAt: number) {
    const rec: StoredEvent = {
      id: randomUUID(),
      accountId: acc.id,
      personId: person?.id ?? null,
      event,
      properties,
      timestamp: occurredAt,
      receivedAt: nowSec(),
      silent,
      source,
      handle,
    };
    (person ? this.events : this.unattachedEvents).push(rec);
    acc.lastEventTrackedAt = rec.receivedAt;
    if (!silent) this.automations.push({ at: new Date().toISOString(), accountId: acc.id, event, personId: person?.id ?? null, email: person?.email ?? handle.email ?? null });
    return rec;
  }

  serializePerson(p: PersonRec, form: "list" | "full", eventUuid?: string) {
    const base: Record<string, unknown> = {
      id: String(this.externalId(p.id)), // sample payloads render the id as a string
      email: p.email,
      status: this.personStatus(p),
      statusDetails: p.statusDetails,
      customFields: { ...p.customFields },
      tags: form === "list" && p.tags.length === 0 ? null : [...p.tags],
      timestamp: p.timestamp,
    };
    if (form === "full") base.series = p.series.map((id) => ({ id, name: this.account(p.accountId).series.get(id) ?? `Series ${id}` }));
    if (eventUuid) base.eventUuid = eventUuid;
    return base;
  }

  // ----------------------------------------------------------- campaigns

  campaign(accountId: number, rawId: string): CampaignRec | undefined {
    const id = this.internalId(rawId);
    return id === undefined ? undefined : this.campaigns.find((c) => c.accountId === accountId && c.id === id);
  }

  /** Test hook: a campaign by the id the client was given. */
  campaignById(externalId: number | string | bigint): CampaignRec {
    const id = this.internalId(externalId);
    const c = this.campaigns.find((x) => x.id === id);
    if (!c) throw new Error(`emulator: no campaign ${externalId}`);
    return c;
  }

  /** Test hook: move a campaign along (preparing → sending → sent, or to paused/failed). */
  advanceCampaign(id: number | string | bigint, to: CampaignState) {
    const c = this.campaignById(id);
    c.status = to;
    if ((to === "sending" || to === "sent") && !c.sendRecorded) this.recordCampaignSend(c);
    if (to === "sent") c.sentAt = isoNow();
  }

  private recordCampaignSend(c: CampaignRec) {
    c.sendRecorded = true;
    const to = this.people.filter((p) => p.accountId === c.accountId && this.personStatus(p) === "active").map((p) => p.email);
    this.recordEmail({ accountId: c.accountId, kind: "campaign", to, campaignId: c.id });
  }

  serializeCampaign(c: CampaignRec, form: "list" | "full", baseUrl: string) {
    const id = this.externalId(c.id);
    const links = {
      campaignUrl: `${baseUrl}/dashboard/campaigns/${id}`,
      editorUrl: `${baseUrl}/dashboard/campaigns/${id}/editor`,
    };
    const list = {
      id,
      name: c.name,
      status: c.status,
      builderReviewed: c.builderReviewed,
      createdAt: c.createdAt,
      scheduledAt: c.scheduledAt,
      sentAt: c.sentAt,
      links,
    };
    if (form === "list") return list;
    return { ...list, subject: c.subject, previewText: c.previewText, sender: { ...c.sender }, replyTo: { ...c.replyTo } };
  }

  // ------------------------------------------------------------ dispatch

  handle(req: ApiRequest): ApiResponse {
    const auth = /^Bearer\s+(.+)$/i.exec(req.authorization ?? "")?.[1]?.trim();
    const key = auth ? this.keys.get(auth) : undefined;
    const acc = key ? this.accounts.get(key.accountId) : undefined;
    // §4.4: GET /api/authenticated verifies the credentials and says false for a key the service
    // knows but no longer accepts (revoked). Any other call without valid credentials, and any call
    // with a key it does not know at all, is answered `Unauthenticated` (§5.2).
    if (key?.revoked && req.method === "GET" && req.segments.length === 1 && req.segments[0] === "authenticated") {
      return ok(SUCCESS_STATUS.read, { data: { authenticated: false } }, key.accountId);
    }
    if (!key || !acc || key.revoked) return { status: UNAUTHENTICATED_STATUS, body: { message: MESSAGES.unauthenticated }, accountId: null };
    const ctx: Ctx = {
      req,
      acc,
      plugin: key.plugin || !!this.behaviour.pluginKey,
      active: acc.status === "active" && !this.behaviour.inactiveAccount,
    };
    const [a, b, c, d] = req.segments;
    const n = req.segments.length;
    const m = req.method;
    try {
      if (a === "people") {
        if (n === 1 && m === "GET") return this.listPeople(ctx);
        if (n === 1 && m === "POST") return this.upsertPerson(ctx);
        if (n === 3 && b === "check" && m === "GET") return this.checkPerson(ctx, c!);
        if (n === 2 && m === "GET") return this.getPerson(ctx, b!);
        if (n === 2 && m === "DELETE") return this.deletePerson(ctx, b!);
        if (n === 3 && c === "events" && m === "GET") return this.personEvents(ctx, b!);
      }
      if (a === "campaigns") {
        if (n === 1 && m === "GET") return this.listCampaigns(ctx);
        if (n === 1 && m === "POST") return this.createCampaign(ctx);
        if (n === 2 && m === "GET") return this.getCampaign(ctx, b!);
        if (n === 2 && m === "PUT") return this.updateCampaign(ctx, b!);
        if (n === 2 && m === "DELETE") return this.deleteCampaign(ctx, b!);
        if (n === 3 && m === "POST" && c === "clone") return this.cloneCampaign(ctx, b!);
        if (n === 3 && m === "POST" && c === "send") return this.sendOrSchedule(ctx, b!, "send");
        if (n === 3 && m === "POST" && c === "schedule") return this.sendOrSchedule(ctx, b!, "schedule");
        if (n === 3 && m === "POST" && c === "test-send") return this.testSend(ctx, b!);
      }
      if (a === "templates" && n === 1 && m === "GET") return this.listTemplates(ctx);
      if (a === "account" && n === 1 && m === "GET") return ok(SUCCESS_STATUS.read, { data: this.serializeAccount(acc) }, acc.id);
      if (a === "account" && b === "website-tracker" && (n === 2 || n === 3) && m === "GET") return this.websiteTracker(ctx, c);
      if (a === "authenticated" && n === 1 && m === "GET") return ok(SUCCESS_STATUS.read, { data: { authenticated: true } }, acc.id);
      if (a === "events" && m === "POST") {
        if (n === 1) return this.trackEvent(ctx, null, null);
        // §4.5 lists the actions of each type: another action is an invalid request (422, §7).
        if (n === 3 && EVENT_ACTIONS[b!]) return this.trackEvent(ctx, b!, c!);
      }
      void d;
      return { status: 404, body: { message: "Not Found", status_code: 404 }, accountId: acc.id };
    } catch (e) {
      return { status: 500, body: { message: `Server Error: ${(e as Error).message}`, status_code: 500 }, accountId: acc.id };
    }
  }

  // --------------------------------------------------------------- people

  private listPeople({ req, acc }: Ctx): ApiResponse {
    const q = req.query;
    const errors: Errors = {};
    const page = parseIntParam(q, "page", 1, 1, Number.MAX_SAFE_INTEGER, errors);
    const perPage = parseIntParam(q, "perPage", 10, 1, 100, errors);
    const status = q.get("filter[status]");
    const statusSets: Record<string, StatusDetails[]> = {
      confirmed: ["confirmed"],
      unconfirmed: ["unconfirmed"],
      unsubscribed: ["unsubscribed"],
      blocked: ["blocked"],
      active: ["confirmed"],
      inactive: ["unconfirmed", "unsubscribed", "blocked"],
    };
    if (Object.keys(errors).length) return invalid(errors, acc.id);

    let items = this.people.filter((p) => p.accountId === acc.id);
    // §4.1: `active` and `inactive` are aliases of statusDetails values, so `active` lists exactly
    // what `confirmed` lists. A value the spec does not list is not refused (not stated): it matches no one.
    if (status) items = items.filter((p) => statusSets[status]?.includes(p.statusDetails) ?? false);
    const email = q.get("filter[email]");
    if (email) items = items.filter((p) => p.email.toLowerCase().includes(email.toLowerCase()));
    const { include: tagIn, exclude: tagOut } = splitList(q.get("filter[tags]"));
    if (tagIn.length) items = items.filter((p) => p.tags.some((t) => tagIn.includes(t)));
    if (tagOut.length) items = items.filter((p) => !p.tags.some((t) => tagOut.includes(t)));
    const { include: segIn, exclude: segOut } = splitList(q.get("filter[segments]"));
    const inSeg = (p: PersonRec, id: string) => acc.segments.get(id)?.emails.has(p.email.toLowerCase()) ?? false;
    if (segIn.length) items = items.filter((p) => segIn.some((s) => inSeg(p, s)));
    if (segOut.length) items = items.filter((p) => !segOut.some((s) => inSeg(p, s)));
    for (const [k, v] of q) {
      const m = /^filter\[field-(.+)\]$/.exec(k);
      if (m) items = items.filter((p) => p.customFields[m[1]!] !== undefined && p.customFields[m[1]!] !== null && String(p.customFields[m[1]!]) === v);
    }
    items.sort((x, y) => x.id - y.id);
    const env = paginate(items, page, perPage, "/api/people", q, "perPage");
    return ok(SUCCESS_STATUS.read, { ...env, data: env.data.map((p) => this.serializePerson(p, "list")) }, acc.id);
  }

  private checkPerson({ acc }: Ctx, email: string): ApiResponse {
    return ok(SUCCESS_STATUS.read, { exists: !!this.findPerson(acc.id, email) && email.includes("@"), email }, acc.id);
  }

  private getPerson({ acc }: Ctx, idOrEmail: string): ApiResponse {
    const p = this.findPerson(acc.id, idOrEmail);
    if (!p) return notFound(MESSAGES.personNotFound, acc.id);
    return ok(SUCCESS_STATUS.read, { data: this.serializePerson(p, "full") }, acc.id);
  }

  private deletePerson({ acc }: Ctx, idOrEmail: string): ApiResponse {
    const p = this.findPerson(acc.id, idOrEmail);
    if (!p) return notFound(MESSAGES.personNotFound, acc.id);
    this.people = this.people.filter((x) => x !== p);
    this.peopleById.delete(p.id);
    this.peopleByEmail.delete(emailKey(p.accountId, p.email));
    this.unindexReference(p);
    this.events = this.events.filter((e) => e.personId !== p.id);
    return { status: SUCCESS_STATUS.deleted, accountId: acc.id };
  }

  private personEvents({ req, acc }: Ctx, idOrEmail: string): ApiResponse {
    const q = req.query;
    const errors: Errors = {};
    const page = parseIntParam(q, "page", 1, 1, Number.MAX_SAFE_INTEGER, errors);
    const perPage = parseIntParam(q, "per_page", 10, 1, 100, errors);
    const ev = q.get("filter[event]");
    const search = q.get("filter[search]");
    const from = q.get("filter[date_from]");
    const to = q.get("filter[date_to]");
    if (ev !== null && ev.length > 100) addErr(errors, "filter.event", "The filter.event may not be greater than 100 characters.");
    if (search !== null && search.length > 255) addErr(errors, "filter.search", "The filter.search may not be greater than 255 characters.");
    if (from !== null && !validYmd(from)) addErr(errors, "filter.date_from", "The filter.date_from does not match the format Y-m-d.");
    if (to !== null && !validYmd(to)) addErr(errors, "filter.date_to", "The filter.date_to does not match the format Y-m-d.");
    const p = this.findPerson(acc.id, idOrEmail);
    if (!p) return notFound(MESSAGES.personNotFound, acc.id);
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    let items = this.eventsOf(p.id);
    if (ev) items = items.filter((e) => e.event === ev);
    if (search) items = items.filter((e) => JSON.stringify(e.properties).toLowerCase().includes(search.toLowerCase()));
    if (from) items = items.filter((e) => e.timestamp >= Date.parse(`${from}T00:00:00Z`) / 1000);
    if (to) items = items.filter((e) => e.timestamp < Date.parse(`${to}T00:00:00Z`) / 1000 + 86_400);
    // newest first; stable on insertion order for equal timestamps
    items = items.map((e, i) => [e, i] as const).sort((x, y) => y[0].timestamp - x[0].timestamp || y[1] - x[1]).map(([e]) => e);
    const env = paginate(items, page, perPage, `/api/people/${encodeURIComponent(idOrEmail)}/events`, q, "per_page");
    return ok(SUCCESS_STATUS.read, { ...env, data: env.data.map((e) => ({ timestamp: e.timestamp, event: e.event, properties: e.properties })) }, acc.id);
  }

  private upsertPerson({ req, acc }: Ctx): ApiResponse {
    const body = isObj(req.body) ? req.body : {};
    const errors: Errors = {};
    const { id, email, emailChange, source, customFields, tags, series, events, skipDoubleOptIn, status, statusDetails } = body;
    if (id === undefined && (email === undefined || email === "")) {
      addErr(errors, "email", "The email field is required when id is not present.");
      addErr(errors, "id", "The id field is required when email is not present.");
    }
    if (id !== undefined && !(typeof id === "number" && Number.isInteger(id)) && typeof id !== "bigint" && !(typeof id === "string" && /^\d+$/.test(id))) addErr(errors, "id", "The id must be an integer.");
    if (email !== undefined && (typeof email !== "string" || !EMAIL_RE.test(email))) addErr(errors, "email", "The email must be a valid email address.");
    if (emailChange !== undefined && (typeof emailChange !== "string" || !EMAIL_RE.test(emailChange))) addErr(errors, "emailChange", "The email change must be a valid email address.");
    if (typeof source !== "string" || source === "") addErr(errors, "source", "The source field is required.");
    if (customFields !== undefined && !isObj(customFields)) addErr(errors, "customFields", "The custom fields must be an object.");
    if (tags !== undefined && (!isObj(tags) || Object.values(tags).some((v) => typeof v !== "boolean"))) addErr(errors, "tags", "The tags must map names to booleans.");
    if (series !== undefined && (!isObj(series) || Object.values(series).some((v) => typeof v !== "boolean"))) addErr(errors, "series", "The series must map ids to booleans.");
    // An unknown series id: the spec states no refusal, so it is accepted (enrolled under that id).
    if (events !== undefined) {
      if (!Array.isArray(events)) addErr(errors, "events", "The events must be an array.");
      else events.forEach((e, i) => {
        if (!isObj(e) || typeof e.eventName !== "string" || e.eventName === "") addErr(errors, `events.${i}.eventName`, "The event name field is required.");
      });
    }
    if (skipDoubleOptIn !== undefined && typeof skipDoubleOptIn !== "boolean") addErr(errors, "skipDoubleOptIn", "The skip double opt in field must be true or false.");
    if (status !== undefined && status !== "active" && status !== "inactive") addErr(errors, "status", "The selected status is invalid.");
    if (statusDetails !== undefined && !["confirmed", "unconfirmed", "unsubscribed"].includes(statusDetails as string)) addErr(errors, "statusDetails", "The selected status details is invalid.");
    if (Object.keys(errors).length) return invalid(errors, acc.id);

    // An unknown id with an email: not shown; permissive: the email identifies (update or create).
    // An unknown id alone leaves nothing to create a person from.
    let person =
      (id !== undefined ? this.findPerson(acc.id, String(id)) : undefined) ??
      (typeof email === "string" && email !== "" ? this.findPerson(acc.id, email) : undefined);
    if (!person && (emailChange !== undefined || typeof email !== "string" || email === "")) return notFound(MESSAGES.personNotFound, acc.id);
    if (emailChange !== undefined) {
      const clash = this.findPerson(acc.id, emailChange as string);
      if (clash && clash !== person) return invalid({ emailChange: ["The email change has already been taken."] }, acc.id);
    }

    // requested status: statusDetails wins, else status maps
    const requested: StatusDetails | undefined =
      (statusDetails as StatusDetails | undefined) ??
      (status === "active" ? "confirmed" : status === "inactive" ? INACTIVE_DEFAULT_DETAILS : undefined);

    // §3.2: `active` cannot be set on a blocked or hard-bounced person. Other values on a blocked
    // person: not shown; permissive: accepted, and the person stays blocked (only the service sets
    // or lifts `blocked`).
    if (person && requested === "confirmed" && (person.statusDetails === "blocked" || person.hardBounced)) {
      const why = person.statusDetails === "blocked" ? "blocked" : "hard-bounced";
      return invalid({ status: [`A ${why} person cannot be set to active.`] }, acc.id);
    }

    const created = !person;
    if (!person) {
      person = this.newPerson(acc.id, email as string);
      if (skipDoubleOptIn === true) person.statusDetails = requested ?? SKIP_DOI_WITHOUT_STATUS;
      else if (requested === "unsubscribed") person.statusDetails = "unsubscribed";
      else this.applyDefaultOptIn(acc, person); // double opt-in applies: a requested "confirmed" is not honoured
      if (!acc.doubleOptIn && skipDoubleOptIn !== true && requested) person.statusDetails = requested;
    } else if (requested !== undefined && person.statusDetails !== "blocked") {
      person.statusDetails = requested;
    }
    if (emailChange !== undefined) {
      this.peopleByEmail.delete(emailKey(person.accountId, person.email));
      person.email = emailChange as string;
      this.peopleByEmail.set(emailKey(person.accountId, person.email), person);
    }
    if (isObj(customFields)) {
      // §2.2: `source` is reserved and filled from the top-level field; §4.1: the two collide.
      // Permissive: the request is accepted and customFields.source is ignored.
      for (const [k, v] of Object.entries(customFields)) {
        if (k === "source") continue;
        this.setCustomField(person, k, v === null ? undefined : v);
      }
    }
    if (person.customFields.source === undefined) person.customFields.source = source; // first write wins
    if (isObj(tags)) {
      for (const [t, on] of Object.entries(tags)) {
        if (on && !person.tags.includes(t)) person.tags.push(t);
        if (!on) person.tags = person.tags.filter((x) => x !== t);
      }
    }
    if (isObj(series)) {
      for (const [s, on] of Object.entries(series)) {
        if (on && !person.series.includes(s)) person.series.push(s);
        if (!on) person.series = person.series.filter((x) => x !== s);
      }
    }
    let eventUuid: string | undefined;
    if (Array.isArray(events) && events.length) {
      eventUuid = randomUUID();
      this.eventUuids.set(eventUuid, { accountId: acc.id, personId: person.id });
      for (const e of events as Record<string, unknown>[]) {
        const { eventName, ...properties } = e;
        this.storeEvent(acc, person, eventName as string, properties, false, { email: person.email }, source as string, occurredAtSeconds(null, null, properties, nowSec()));
      }
    }
    return ok(created ? SUCCESS_STATUS.personCreated : SUCCESS_STATUS.personUpdated, { data: this.serializePerson(person, "full", eventUuid) }, acc.id);
  }

  // ---------------------------------------------------------------- events

  private trackEvent({ req, acc }: Ctx, type: string | null, action: string | null): ApiResponse {
    const body = isObj(req.body) ? req.body : {};
    const errors = (type && actionErrors(type, action!)) || validateEventBody(type, body);
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    const timestamp = nowSec();
    if (body.test === true) return ok(SUCCESS_STATUS.event, { success: true, timestamp }, acc.id);
    const refusal = this.behaviour.eventsNotAccepted;
    if (refusal && (typeof refusal !== "object" || refusal.count === undefined || refusal.count-- > 0)) {
      const message = typeof refusal === "object" && refusal.message ? { message: refusal.message } : {};
      return ok(SUCCESS_STATUS.event, { success: false, timestamp, ...message }, acc.id);
    }

    const handle: StoredEvent["handle"] = {};
    if (typeof body.email === "string") handle.email = body.email;
    if (body.referenceId !== undefined) handle.referenceId = String(body.referenceId);
    if (typeof body.uuid === "string") handle.uuid = body.uuid;

    let person =
      (handle.email ? this.findPerson(acc.id, handle.email) : undefined) ??
      (handle.referenceId ? this.personByReference(acc.id, handle.referenceId) : undefined);
    if (!person && handle.uuid) {
      const ref = this.eventUuids.get(handle.uuid);
      if (ref && ref.accountId === acc.id) person = this.peopleById.get(ref.personId);
    }
    if ((type === "customer" || type === "user") && body.is_contact === true) {
      person = this.syncContact(acc, type, body, person);
    }
    // Stored properties are the event's own data: the common fields of §4.5 (source included) are not
    // added to them; `source` is kept on the stored record.
    const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !["email", "referenceId", "uuid", "source", "silent", "test"].includes(k)));
    const name = type ? typedEventName(type, action!) : (body.eventName as string);
    const properties = type ? rest : isObj(body.properties) ? { ...body.properties } : {};
    const occurred = occurredAtSeconds(type, action, type ? body : properties, timestamp);
    this.storeEvent(acc, person ?? null, name, properties, body.silent === true, handle, body.source as string, occurred);
    return ok(SUCCESS_STATUS.event, { success: true, timestamp }, acc.id);
  }

  /** is_contact: create or update a contact; only provided fields change, source is first-write-wins. */
  private syncContact(acc: AccountRec, type: string, body: Record<string, unknown>, existing: PersonRec | undefined): PersonRec | undefined {
    const email =
      (typeof body.email === "string" && body.email) ||
      (type === "customer" && typeof body.customer_email === "string" && EMAIL_RE.test(body.customer_email) ? body.customer_email : undefined);
    let person = existing ?? (email ? this.findPerson(acc.id, email) : undefined);
    if (!person) {
      if (!email) return undefined;
      person = this.newPerson(acc.id, email);
      this.applyDefaultOptIn(acc, person);
    }
    const map: [string, string][] = [
      ["first_name", "firstName"],
      ["last_name", "lastName"],
      ["phone", "phoneNumber"],
    ];
    for (const [from, to] of map) if (typeof body[from] === "string") person.customFields[to] = body[from];
    if (body.referenceId !== undefined) this.setCustomField(person, "referenceId", String(body.referenceId));
    if (person.customFields.source === undefined) person.customFields.source = body.source;
    return person;
  }

  // ------------------------------------------------------------- campaigns

  private listCampaigns({ req, acc }: Ctx): ApiResponse {
    const q = req.query;
    const errors: Errors = {};
    const page = parseIntParam(q, "page", 1, 1, Number.MAX_SAFE_INTEGER, errors);
    const perPage = parseIntParam(q, "perPage", 10, 1, 100, errors);
    const status = q.get("status") ?? "draft";
    const sort = q.get("sort");
    const order = q.get("order");
    // §3.1 says `preparing` is not an accepted filter value, and §4.2 that order requires sort: refused.
    // Other unknown status, sort or order values: no refusal is stated, so they are accepted — an
    // unknown status matches no campaign, an unknown sort or order falls back to the default.
    if (status === "preparing") addErr(errors, "status", "The selected status is invalid.");
    if (order !== null && sort === null) addErr(errors, "order", "The order field requires sort.");
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    let items = this.campaigns.filter((c) => c.accountId === acc.id);
    if (status === "sending") items = items.filter((c) => c.status === "sending" || c.status === "preparing");
    else if (status !== "all") items = items.filter((c) => c.status === status);
    const field = (sort !== null && ["name", "status", "createdAt"].includes(sort) ? sort : "createdAt") as "name" | "status" | "createdAt";
    const dir = order === "asc" ? 1 : -1;
    items.sort((x, y) => {
      const a = field === "createdAt" ? x.id : x[field];
      const b = field === "createdAt" ? y.id : y[field];
      return (a < b ? -1 : a > b ? 1 : x.id - y.id) * dir;
    });
    const env = paginate(items, page, perPage, "/api/campaigns", q, "perPage");
    return ok(SUCCESS_STATUS.read, { ...env, data: env.data.map((c) => this.serializeCampaign(c, "list", req.baseUrl)) }, acc.id);
  }

  private forbiddenInactive(acc: AccountRec): ApiResponse {
    return { status: 403, body: { message: MESSAGES.accountInactive, status_code: 403 }, accountId: acc.id };
  }
  private forbiddenPlugin(acc: AccountRec): ApiResponse {
    return { status: 403, body: { message: MESSAGES.pluginKey, status_code: 403 }, accountId: acc.id };
  }

  private createCampaign({ req, acc, active }: Ctx): ApiResponse {
    if (!active) return this.forbiddenInactive(acc);
    const body = isObj(req.body) ? req.body : {};
    const errors: Errors = {};
    if (typeof body.name !== "string" || body.name.trim() === "") addErr(errors, "name", "The name field is required.");
    let template: TemplateRec | undefined;
    if (body.templateId !== undefined) {
      template = this.visibleTemplates(acc.id).find((t) => t.id === String(body.templateId));
      if (!template) addErr(errors, "templateId", "The selected template id is invalid.");
    }
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    const c: CampaignRec = {
      id: this.seq.campaign++,
      accountId: acc.id,
      name: (body.name as string).trim(),
      status: "draft",
      subject: "", // §2.5: a template has no subject; §3.1 copies its content only
      previewText: "",
      sender: { name: acc.company, email: acc.email },
      replyTo: { name: acc.company, email: acc.email },
      builderReviewed: false,
      createdAt: isoNow(),
      scheduledAt: null,
      sentAt: null,
      content: template?.content ?? null,
      sendRecorded: false,
    };
    this.campaigns.push(c);
    return ok(SUCCESS_STATUS.campaignCreated, { data: this.serializeCampaign(c, "full", req.baseUrl) }, acc.id);
  }

  private cloneCampaign({ req, acc, active }: Ctx, rawId: string): ApiResponse {
    if (!active) return this.forbiddenInactive(acc);
    const src = this.campaign(acc.id, rawId);
    if (!src) return notFound(MESSAGES.campaignNotFound, acc.id);
    const body = isObj(req.body) ? req.body : {};
    if (body.name !== undefined && (typeof body.name !== "string" || body.name.trim() === "")) return invalid({ name: ["The name must be a non-empty string."] }, acc.id);
    const c: CampaignRec = {
      ...src,
      sender: { ...src.sender },
      replyTo: { ...src.replyTo },
      id: this.seq.campaign++,
      name: typeof body.name === "string" ? body.name.trim() : `Copy of ${src.name}`,
      status: "draft",
      builderReviewed: false,
      createdAt: isoNow(),
      scheduledAt: null,
      sentAt: null,
      sendRecorded: false,
    };
    this.campaigns.push(c);
    return ok(SUCCESS_STATUS.campaignCreated, { data: this.serializeCampaign(c, "full", req.baseUrl) }, acc.id);
  }

  private getCampaign({ req, acc }: Ctx, rawId: string): ApiResponse {
    const c = this.campaign(acc.id, rawId);
    if (!c) return notFound(MESSAGES.campaignNotFound, acc.id);
    return ok(SUCCESS_STATUS.read, { data: this.serializeCampaign(c, "full", req.baseUrl) }, acc.id);
  }

  private updateCampaign({ req, acc, active }: Ctx, rawId: string): ApiResponse {
    if (!active) return this.forbiddenInactive(acc);
    const c = this.campaign(acc.id, rawId);
    if (!c) return notFound(MESSAGES.campaignNotFound, acc.id);
    const body = isObj(req.body) ? req.body : {};
    const fields = ["name", "subject", "previewText", "sender", "replyTo"] as const;
    const given = fields.filter((f) => body[f] !== undefined);
    if (given.length === 0) return invalid({ _body: ["At least one field must be given."] }, acc.id);
    const errors: Errors = {};
    if (body.name !== undefined && (typeof body.name !== "string" || body.name.trim() === "")) addErr(errors, "name", "The name must be a non-empty string.");
    for (const f of ["subject", "previewText"] as const) if (body[f] !== undefined && typeof body[f] !== "string") addErr(errors, f, `The ${f} must be a string.`);
    for (const f of ["sender", "replyTo"] as const) {
      const v = body[f];
      if (v === undefined) continue;
      if (!isObj(v)) addErr(errors, f, `The ${f} must be an object.`);
      else {
        if (v.name !== undefined && typeof v.name !== "string") addErr(errors, `${f}.name`, `The ${f}.name must be a string.`);
        if (v.email !== undefined && (typeof v.email !== "string" || !EMAIL_RE.test(v.email))) addErr(errors, `${f}.email`, `The ${f}.email must be a valid email address.`);
      }
    }
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    if (c.status !== "draft") return invalid({ status: ["Only draft campaigns can be updated."] }, acc.id);
    if (typeof body.name === "string") c.name = body.name.trim();
    if (typeof body.subject === "string") c.subject = body.subject;
    if (typeof body.previewText === "string") c.previewText = body.previewText;
    for (const f of ["sender", "replyTo"] as const) if (isObj(body[f])) Object.assign(c[f], body[f]);
    return ok(SUCCESS_STATUS.campaignUpdated, { data: this.serializeCampaign(c, "full", req.baseUrl) }, acc.id);
  }

  private deleteCampaign({ acc }: Ctx, rawId: string): ApiResponse {
    const c = this.campaign(acc.id, rawId);
    if (!c) return notFound(MESSAGES.campaignNotFound, acc.id);
    if ((UNDELETABLE_CAMPAIGN_STATUSES as readonly string[]).includes(c.status)) {
      return invalid({ status: ["A campaign that is currently sending cannot be deleted."] }, acc.id);
    }
    this.campaigns = this.campaigns.filter((x) => x !== c);
    return { status: SUCCESS_STATUS.deleted, accountId: acc.id };
  }

  private sendOrSchedule({ req, acc, active, plugin }: Ctx, rawId: string, mode: "send" | "schedule"): ApiResponse {
    if (plugin) return this.forbiddenPlugin(acc);
    if (!active) return this.forbiddenInactive(acc);
    const c = this.campaign(acc.id, rawId);
    if (!c) return notFound(MESSAGES.campaignNotFoundAction, acc.id);
    const body = isObj(req.body) ? req.body : {};
    if (body.force !== undefined && typeof body.force !== "boolean") return invalid({ force: ["The force field must be true or false."] }, acc.id);
    let scheduledAt: string | null = null;
    if (mode === "schedule") {
      const raw = body.scheduledAt;
      if (typeof raw !== "string" || raw === "") return invalid({ scheduledAt: ["The scheduled at field is required."] }, acc.id);
      const ms = Date.parse(raw);
      if (!ISO_OFFSET_RE.test(raw) || Number.isNaN(ms)) return invalid({ scheduledAt: ["The scheduled at must be an ISO 8601 datetime with an explicit offset."] }, acc.id);
      if (ms <= Date.now()) return invalid({ scheduledAt: ["The scheduled at must be a date after now."] }, acc.id);
      scheduledAt = roundUpToMinuteUtc(ms);
    }
    const verb = mode === "send" ? "sent" : "scheduled";
    if (c.status !== "draft") return invalid({ status: [`Only draft campaigns can be ${verb}.`] }, acc.id);
    if (!c.content) return invalid({ campaign: ["The campaign has no email content."] }, acc.id);
    const links = this.serializeCampaign(c, "list", req.baseUrl).links;
    if (!c.builderReviewed && body.force !== true) {
      return invalid({ review: ["The campaign has not been reviewed in the email builder. Review it or pass force: true."] }, acc.id, { links });
    }
    const eligibility = this.behaviour.eligibilityCheckFails;
    if (eligibility) {
      const status = (typeof eligibility === "object" && eligibility.status) || ELIGIBILITY_FAILURE_STATUS;
      return { status, body: { message: MESSAGES.eligibility, status_code: status }, accountId: acc.id };
    }
    if (acc.upgradeRequired) {
      return invalid({ send: ["Your plan must be upgraded to send this campaign."] }, acc.id, {
        links,
        upgrade: { level: "pro", levelName: "Pro", monthlyAmount: 49, proratedAmount: 21.5 },
      });
    }
    if (acc.sendingLimitRemaining <= 0) {
      return invalid(
        { send: [`You have ${acc.sendingLimitRemaining} sends remaining; your sending limit resets on ${acc.sendingLimitResetsAt}.`] },
        acc.id,
        { links },
      );
    }
    if (this.behaviour.sendFails) return invalid({ campaign: [MESSAGES.sendFailed] }, acc.id, {}, MESSAGES.sendFailed);
    acc.sendingLimitRemaining -= 1;
    if (mode === "send") {
      c.status = "preparing";
      this.recordCampaignSend(c);
    } else {
      c.status = "scheduled";
      c.scheduledAt = scheduledAt;
    }
    return ok(SUCCESS_STATUS.campaignSent, { data: this.serializeCampaign(c, "full", req.baseUrl) }, acc.id);
  }

  private testSend({ req, acc, active, plugin }: Ctx, rawId: string): ApiResponse {
    if (plugin) return this.forbiddenPlugin(acc);
    if (!active) return this.forbiddenInactive(acc);
    const now = Date.now();
    acc.testSendLog = acc.testSendLog.filter((t) => now - t < 60_000);
    if (acc.testSendLog.length >= TEST_SEND_PER_MINUTE) {
      const retryAfter = Math.max(1, Math.ceil((acc.testSendLog[0]! + 60_000 - now) / 1000));
      return {
        status: RATE_LIMITED_STATUS,
        body: { message: MESSAGES.testSendThrottled, status_code: RATE_LIMITED_STATUS },
        headers: { "Retry-After": String(retryAfter) },
        accountId: acc.id,
      };
    }
    const c = this.campaign(acc.id, rawId);
    if (!c) return notFound(MESSAGES.campaignNotFoundAction, acc.id);
    const body = isObj(req.body) ? req.body : {};
    const r = body.recipients;
    if (!Array.isArray(r) || r.length === 0) return invalid({ recipients: ["The recipients field is required."] }, acc.id);
    const errors: Errors = {};
    if (r.length > 10) addErr(errors, "recipients", "The recipients may not have more than 10 items.");
    r.forEach((x, i) => {
      if (typeof x !== "string" || !EMAIL_RE.test(x)) addErr(errors, `recipients.${i}`, "Each recipient must be a valid email address.");
      else if (x.length > 254) addErr(errors, `recipients.${i}`, "Each recipient may not be greater than 254 characters.");
    });
    if (new Set(r.map((x) => String(x).toLowerCase())).size !== r.length) addErr(errors, "recipients", "The recipients must be unique.");
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    const rejected = (r as string[]).filter((x) => x.toLowerCase() !== acc.email.toLowerCase() && !acc.verifiedDomains.includes(x.split("@")[1]!.toLowerCase()));
    if (rejected.length) {
      return invalid({ recipients: rejected.map((x) => `The recipient ${x} is not on a verified sending domain or an address of the account.`) }, acc.id);
    }
    if (!c.content) return invalid({ campaign: ["The campaign has no email content."] }, acc.id);
    if (this.behaviour.testSendUndeliverable) return invalid({ testSend: ["The test email could not be delivered."] }, acc.id);
    // Only a test that went out uses the per-minute quota (§8 does not say a refused one does).
    acc.testSendLog.push(now);
    this.recordEmail({ accountId: acc.id, kind: "test", to: [...(r as string[])], campaignId: c.id });
    return ok(SUCCESS_STATUS.testSent, { data: { recipients: [...(r as string[])] } }, acc.id);
  }

  // ------------------------------------------------- templates / account

  visibleTemplates(accountId: number): TemplateRec[] {
    // the account's own templates first, then published shared ones
    const own = this.templates.filter((t) => t.accountId === accountId);
    return [...own, ...this.templates.filter((t) => t.accountId === null && t.published)];
  }

  private listTemplates({ req, acc }: Ctx): ApiResponse {
    const errors: Errors = {};
    const page = parseIntParam(req.query, "page", 1, 1, Number.MAX_SAFE_INTEGER, errors);
    const perPage = parseIntParam(req.query, "perPage", 10, 1, 100, errors);
    if (Object.keys(errors).length) return invalid(errors, acc.id);
    const items = this.visibleTemplates(acc.id).map((t) => ({
      id: t.id,
      name: t.name,
      description: t.description,
      previewUrl: `/templates/${t.id}/preview`,
      createdAt: t.createdAt,
    }));
    return ok(SUCCESS_STATUS.read, paginate(items, page, perPage, "/api/templates", req.query, "perPage"), acc.id);
  }

  serializeAccount(acc: AccountRec) {
    return {
      id: String(acc.id), // a sample renders the account id as a string
      company: acc.company,
      email: acc.email,
      phone: acc.phone,
      status: this.behaviour.inactiveAccount && acc.status === "active" ? "suspended" : acc.status,
      createdAt: acc.createdAt,
      timezone: acc.timezone,
      plan: { ...acc.plan },
      logoUrl: acc.logoUrl,
    };
  }

  private websiteTracker({ acc }: Ctx, mode: string | undefined): ApiResponse {
    const m = mode ?? "modern";
    if (!["modern", "legacy", "compat"].includes(m)) return invalid({ mode: ["The selected mode is invalid."] }, acc.id);
    const cdn = this.trackerBase;
    const modern = `<script type="module" src="${cdn}/modern.js" data-account="${acc.id}" async></script>`;
    const legacy = `<script src="${cdn}/legacy.js" data-account="${acc.id}" async></script>`;
    const snippet =
      m === "modern" ? modern : m === "legacy" ? legacy : `${modern}\n<script nomodule src="${cdn}/legacy.js" data-account="${acc.id}" async></script>`;
    // §2.7 types lastEventTrackedAt as an integer: 0 before any event (not null)
    return ok(SUCCESS_STATUS.read, { data: { mode: m, snippet, lastEventTrackedAt: acc.lastEventTrackedAt ?? 0 } }, acc.id);
  }
}

interface Ctx {
  req: ApiRequest;
  acc: AccountRec;
  plugin: boolean;
  active: boolean;
}

function splitList(raw: string | null): { include: string[]; exclude: string[] } {
  const parts = (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  return {
    include: parts.filter((p) => !p.startsWith("-")),
    exclude: parts.filter((p) => p.startsWith("-")).map((p) => p.slice(1)),
  };
}
