/**
 * Typed client for the marketing service — the one entry point the app uses.
 *
 * Every request is validated locally with ./schemas before it is sent (a bad
 * call throws MarketingServiceError kind "validation", status 0, local true,
 * with the field named). Every response is parsed with the lenient response
 * schemas. Errors follow ./errors; the transport choices where the spec is
 * silent live in ./policy (README.md lists every spec gap and the choice made).
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import { isInteger, LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from "lossless-json";
import { request as sendHttp, type Dispatcher } from "undici";
import type { z } from "zod";
import {
  MarketingServiceError,
  PERSON_UPSERT_OPERATION,
  classifyHttpError,
  isMarketingServiceError,
  localValidationError,
  notAcceptedError,
} from "./marketing-error";
import {
  DEFAULT_RETRIES,
  DEFAULT_TIMEOUT_MS,
  MAX_ITERATE_PAGES,
  MAX_RETRY_AFTER_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  RETRY_ON_TRANSIENT,
  isSuccessStatus,
  type RetryClass,
} from "./transport";
import {
  accountResponseSchema,
  authenticatedResponseSchema,
  campaignCloneSchema,
  campaignCreateSchema,
  campaignIdSchema,
  campaignListQuerySchema,
  campaignListResponseSchema,
  campaignResponseSchema,
  campaignScheduleSchema,
  campaignSendSchema,
  campaignUpdateSchema,
  customEventSchema,
  emailSchema,
  eventActions,
  eventBodySchemas,
  eventResponseSchema,
  idOrEmailSchema,
  peopleListFiltersSchema,
  peopleListResponseSchema,
  personCheckResponseSchema,
  personEventsFiltersSchema,
  personEventsResponseSchema,
  personResponseSchema,
  personUpsertSchema,
  serviceCallSchema,
  templateListResponseSchema,
  templatesListQuerySchema,
  testSendResponseSchema,
  testSendSchema,
  websiteTrackerModeSchema,
  websiteTrackerResponseSchema,
  type Account,
  type Campaign,
  type CampaignClone,
  type CampaignCreate,
  type CampaignListQuery,
  type CampaignUpdate,
  type CustomEvent,
  type EventActionsByType,
  type EventBodies,
  type EventResult,
  type EventType,
  type IdOrEmail,
  type Page,
  type PeopleListFilters,
  type Person,
  type PersonCheck,
  type ServiceId,
  type PersonEventRecord,
  type PersonEventsFilters,
  type PersonUpsert,
  type ServiceCall,
  type Template,
  type TemplatesListQuery,
  type TestSendResult,
  type WebsiteTracker,
  type WebsiteTrackerMode,
} from "./schemas";

export { MarketingServiceError, isMarketingServiceError } from "./marketing-error";
export type * from "./schemas";

export interface RequestLogInfo {
  /** logical operation, e.g. "people.upsert" */
  operation: string;
  method: string;
  /** path without query string (ids and emails may appear, never the key or a body) */
  path: string;
  status?: number;
  durationMs: number;
  /** 1-based attempt number */
  attempt: number;
  /** error kind when the attempt failed */
  error?: string;
  /** true when another attempt follows */
  willRetry?: boolean;
}

export interface MarketingClientOptions {
  baseUrl: string;
  apiKey: string;
  /** per attempt; default transport.ts DEFAULT_TIMEOUT_MS */
  timeoutMs?: number;
  /** extra attempts; default transport.ts DEFAULT_RETRIES; 0 disables retrying */
  retries?: number;
  /** undici dispatcher for the calls (tests); default: undici's global agent (keep-alive). */
  dispatcher?: Dispatcher;
  /** Logging hook, called once per attempt. Never receives the key or bodies. */
  onRequest?: (info: RequestLogInfo) => void;
  /** Backoff base (full jitter); default transport.ts RETRY_BASE_DELAY_MS. */
  retryBaseDelayMs?: number;
  /** Injected clock for waiting between attempts (tests). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RawRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** path relative to baseUrl, may include a query string */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  retryClass?: RetryClass;
  operation?: string;
  /** the body holds LosslessNumbers (exact integer ids): serialised with lossless-json */
  exactNumbers?: boolean;
}

export interface CampaignScheduleInput {
  scheduledAt: Date | string;
  force?: boolean;
}

export type PerformResult = Person | EventResult | undefined;

const defaultSleep = (ms: number): Promise<void> => sleepFor(ms);

function validate<S extends z.ZodType>(operation: string, schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw localValidationError(operation, r.error);
  return r.data;
}

const enc = (v: string | number) => encodeURIComponent(String(v));

export function createMarketingClient(options: MarketingClientOptions) {
  if (!options.baseUrl) throw new TypeError("createMarketingClient: baseUrl is required");
  if (!options.apiKey) throw new TypeError("createMarketingClient: apiKey is required");
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = Math.max(0, options.retries ?? DEFAULT_RETRIES);
  const sleep = options.sleep ?? defaultSleep;
  const baseDelay = options.retryBaseDelayMs ?? RETRY_BASE_DELAY_MS;
  const headers = {
    Authorization: `Bearer ${options.apiKey}`,
    Accept: "application/json",
    "Content-Type": "application/json",
  };

  /** The base URL's own path (e.g. "/v1"): the service's paths are relative to it. */
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, "");

  /**
   * Keeps only path+query of a link so the key never goes to another host. A link that already
   * carries the base URL's path (an absolute URL, or a service that writes its mount point into
   * links) has it taken off, so it is not appended twice.
   */
  function toRelative(link: string): string {
    let rel = link;
    if (/^https?:\/\//i.test(link)) {
      const u = new URL(link);
      rel = u.pathname + u.search;
    }
    if (!rel.startsWith("/")) rel = `/${rel}`;
    if (basePath && rel.startsWith(`${basePath}/api/`)) rel = rel.slice(basePath.length);
    return rel;
  }

  function buildUrl(path: string, query?: RawRequest["query"]): string {
    const url = new URL(baseUrl + toRelative(path));
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** One attempt. Returns parsed JSON (undefined for an empty body) or throws MarketingServiceError. */
  async function attempt(method: string, url: string, logPath: string, body: string | undefined, operation?: string): Promise<{ status: number; json: unknown }> {
    // undici's request() rather than fetch(): the same connection pool without WHATWG streams,
    // about a third of the CPU per call (bench/http-client.ts). Redirects are not followed, so
    // the key never travels to another host.
    let res: Dispatcher.ResponseData;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      res = await sendHttp(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        signal,
        dispatcher: options.dispatcher,
      });
    } catch (e) {
      throw transportError(e, method, logPath, operation);
    }
    let text: string;
    try {
      text = await readBody(res.body, signal);
    } catch (e) {
      throw transportError(e, method, logPath, operation);
    }
    const status = res.statusCode;
    const header = (name: string) => {
      const value = res.headers[name];
      return (Array.isArray(value) ? value[0] : value) ?? null;
    };
    if (status >= 300 && status < 400) {
      throw new MarketingServiceError({
        kind: "network",
        status: 0,
        message: `${method} ${logPath} answered a redirect (HTTP ${status}), which is not followed`,
        method,
        path: logPath,
        operation,
      });
    }
    let json: unknown = undefined;
    let notJson = false;
    if (text.trim() !== "") {
      try {
        json = parseResponse(text);
      } catch {
        notJson = true;
      }
    }
    if (isSuccessStatus(status)) {
      if (notJson) {
        throw new MarketingServiceError({
          kind: "server_error",
          status,
          message: `Expected a JSON body from ${method} ${logPath}, got ${header("content-type") ?? "unknown content"}`,
          body: text.slice(0, 500),
          // the call may have taken effect: do not repeat it blindly
          retryable: false,
          method,
          path: logPath,
          operation,
        });
      }
      return { status, json };
    }
    if (notJson && status >= 500) {
      throw new MarketingServiceError({
        kind: "server_error",
        status,
        message: `HTTP ${status} with a non-JSON body from ${method} ${logPath}`,
        body: text.slice(0, 500),
        method,
        path: logPath,
        operation,
      });
    }
    throw classifyHttpError({
      status,
      body: notJson ? text.slice(0, 500) : json,
      retryAfter: header("retry-after"),
      method,
      path: logPath,
      operation,
    });
  }

  function transportError(e: unknown, method: string, path: string, operation?: string): MarketingServiceError {
    const name = (e as { name?: string } | null)?.name;
    if (name === "TimeoutError" || name === "AbortError") {
      return new MarketingServiceError({
        kind: "timeout",
        status: 0,
        message: `${method} ${path} timed out after ${timeoutMs} ms`,
        method,
        path,
        operation,
        cause: e,
      });
    }
    const err = e as { code?: string; message?: string; cause?: { code?: string; message?: string } } | null;
    const detail = err?.cause?.code ?? err?.code ?? err?.cause?.message ?? err?.message ?? "unknown";
    return new MarketingServiceError({
      kind: "network",
      status: 0,
      message: `${method} ${path} failed: ${detail}`,
      method,
      path,
      operation,
      cause: e,
    });
  }

  function shouldRetry(err: MarketingServiceError, retryClass: RetryClass): boolean {
    if (err.kind === "rate_limited") return err.retryAfterMs === undefined || err.retryAfterMs <= MAX_RETRY_AFTER_MS;
    if (err.kind === "server_error" || err.kind === "timeout" || err.kind === "network" || err.kind === "not_accepted") {
      return err.retryable && RETRY_ON_TRANSIENT[retryClass];
    }
    return false;
  }

  function backoff(attemptIndex: number): number {
    return Math.random() * Math.min(RETRY_MAX_DELAY_MS, baseDelay * 2 ** attemptIndex);
  }

  /**
   * Transport with retries. A hand-written loop rather than p-retry because
   * the wait must come from the response (Retry-After) on 429 and the retry
   * decision depends on both the error kind and the request's retry class.
   */
  async function request(req: RawRequest): Promise<unknown> {
    return (await send(req)).json;
  }

  async function send(req: RawRequest): Promise<{ status: number; json: unknown }> {
    const operation = req.operation ?? `${req.method} ${req.path}`;
    const retryClass = req.retryClass ?? (req.method === "GET" ? "read" : "mutation");
    const url = buildUrl(req.path, req.query);
    const logPath = new URL(url).pathname;
    const body = req.body === undefined ? undefined : req.exactNumbers ? stringifyLossless(req.body) : JSON.stringify(req.body);
    for (let n = 0; ; n++) {
      const started = performance.now();
      try {
        const out = await attempt(req.method, url, logPath, body, req.operation);
        if (retryClass === "event" && saysNotAccepted(out.json)) throw notAcceptedError(out.status, out.json, req.method, logPath, req.operation);
        options.onRequest?.({ operation, method: req.method, path: logPath, status: out.status, durationMs: performance.now() - started, attempt: n + 1 });
        return out;
      } catch (e) {
        const err = isMarketingServiceError(e) ? e : transportError(e, req.method, logPath, req.operation);
        const willRetry = n < retries && shouldRetry(err, retryClass);
        options.onRequest?.({
          operation,
          method: req.method,
          path: logPath,
          status: err.status || undefined,
          durationMs: performance.now() - started,
          attempt: n + 1,
          error: err.kind,
          willRetry,
        });
        if (!willRetry) throw err;
        await sleep(err.kind === "rate_limited" && err.retryAfterMs !== undefined ? err.retryAfterMs : backoff(n));
      }
    }
  }

  async function call<S extends z.ZodType>(req: RawRequest, schema: S): Promise<z.infer<S>> {
    const { status, json } = await send(req);
    const r = schema.safeParse(json);
    if (!r.success) {
      throw new MarketingServiceError({
        kind: "server_error",
        status,
        retryable: false,
        message: `Unexpected response shape for ${req.operation ?? req.path}: ${r.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join(".") || "(root)"} ${i.message}`)
          .join("; ")}`,
        body: json,
        method: req.method,
        path: req.path,
        operation: req.operation,
      });
    }
    return r.data;
  }

  /** Follows links.next to the last page, yielding items. */
  async function* iterate<T>(first: () => Promise<Page<T>>, fetchNext: (link: string) => Promise<Page<T>>): AsyncGenerator<T> {
    let page = await first();
    const seen = new Set<string>();
    for (let i = 0; i < MAX_ITERATE_PAGES; i++) {
      yield* page.data;
      const next = page.links.next;
      if (!next || page.data.length === 0 || seen.has(next)) return;
      seen.add(next);
      page = await fetchNext(next);
    }
  }

  // ----------------------------------------------------------------- people

  function peopleQuery(f: PeopleListFilters): RawRequest["query"] {
    const q: Record<string, string | number | undefined> = {
      "filter[segments]": f.segments?.length ? f.segments.join(",") : undefined,
      "filter[tags]": f.tags?.length ? f.tags.join(",") : undefined,
      "filter[email]": f.email,
      "filter[status]": f.status,
      page: f.page,
      perPage: f.perPage,
    };
    for (const [name, value] of Object.entries(f.fields ?? {})) q[`filter[field-${name}]`] = String(value);
    return q;
  }

  function eventsQuery(f: PersonEventsFilters): RawRequest["query"] {
    return {
      "filter[event]": f.event,
      "filter[search]": f.search,
      "filter[date_from]": f.dateFrom,
      "filter[date_to]": f.dateTo,
      page: f.page,
      per_page: f.perPage,
    };
  }

  /** POST /api/people with a body already validated. The id (§4.1 integer) goes out as a JSON integer with its exact digits. */
  const sendUpsert = async (body: PersonUpsert): Promise<Person> => {
    const exactNumbers = body.id !== undefined;
    const sent = exactNumbers ? { ...body, id: new LosslessNumber(String(body.id)) } : body;
    return (await call({ method: "POST", path: "/api/people", body: sent, exactNumbers, retryClass: "mutation", operation: PERSON_UPSERT_OPERATION }, personResponseSchema)).data;
  };

  const people = {
    async list(filters: PeopleListFilters = {}): Promise<Page<Person>> {
      const f = validate("people.list", peopleListFiltersSchema, filters);
      return call({ method: "GET", path: "/api/people", query: peopleQuery(f), operation: "people.list" }, peopleListResponseSchema);
    },
    iterate(filters: PeopleListFilters = {}): AsyncGenerator<Person> {
      return iterate(
        () => people.list(filters),
        (link) => call({ method: "GET", path: link, operation: "people.list" }, peopleListResponseSchema),
      );
    },
    async check(email: string): Promise<PersonCheck> {
      const e = validate("people.check", emailSchema, email);
      return call({ method: "GET", path: `/api/people/check/${enc(e)}`, operation: "people.check" }, personCheckResponseSchema);
    },
    async get(idOrEmail: IdOrEmail): Promise<Person> {
      const k = validate("people.get", idOrEmailSchema, idOrEmail);
      return (await call({ method: "GET", path: `/api/people/${enc(k)}`, operation: "people.get" }, personResponseSchema)).data;
    },
    async upsert(body: PersonUpsert): Promise<Person> {
      return sendUpsert(validate("people.upsert", personUpsertSchema, body));
    },
    async delete(idOrEmail: IdOrEmail): Promise<void> {
      const k = validate("people.delete", idOrEmailSchema, idOrEmail);
      await request({ method: "DELETE", path: `/api/people/${enc(k)}`, retryClass: "mutation", operation: "people.delete" });
    },
    async events(idOrEmail: IdOrEmail, filters: PersonEventsFilters = {}): Promise<Page<PersonEventRecord>> {
      const k = validate("people.events", idOrEmailSchema, idOrEmail);
      const f = validate("people.events", personEventsFiltersSchema, filters);
      return call(
        { method: "GET", path: `/api/people/${enc(k)}/events`, query: eventsQuery(f), operation: "people.events" },
        personEventsResponseSchema,
      );
    },
    iterateEvents(idOrEmail: IdOrEmail, filters: PersonEventsFilters = {}): AsyncGenerator<PersonEventRecord> {
      return iterate(
        () => people.events(idOrEmail, filters),
        (link) => call({ method: "GET", path: link, operation: "people.events" }, personEventsResponseSchema),
      );
    },
  };

  // -------------------------------------------------------------- campaigns

  const campaignPath = (operation: string, id: ServiceId, suffix = "") =>
    `/api/campaigns/${enc(validate(operation, campaignIdSchema, id))}${suffix}`;
  const mutation = (operation: string, method: RawRequest["method"], path: string, body?: unknown): RawRequest => ({
    method,
    path,
    body,
    retryClass: "mutation",
    operation,
  });

  const campaigns = {
    async list(query: CampaignListQuery = {}): Promise<Page<Campaign>> {
      const q = validate("campaigns.list", campaignListQuerySchema, query);
      return call(
        { method: "GET", path: "/api/campaigns", query: { ...q }, operation: "campaigns.list" },
        campaignListResponseSchema,
      );
    },
    iterate(query: CampaignListQuery = {}): AsyncGenerator<Campaign> {
      return iterate(
        () => campaigns.list(query),
        (link) => call({ method: "GET", path: link, operation: "campaigns.list" }, campaignListResponseSchema),
      );
    },
    async create(body: CampaignCreate): Promise<Campaign> {
      const b = validate("campaigns.create", campaignCreateSchema, body);
      return (await call(mutation("campaigns.create", "POST", "/api/campaigns", b), campaignResponseSchema)).data;
    },
    async clone(id: ServiceId, body: CampaignClone = {}): Promise<Campaign> {
      const path = campaignPath("campaigns.clone", id, "/clone");
      const b = validate("campaigns.clone", campaignCloneSchema, body);
      return (await call(mutation("campaigns.clone", "POST", path, b), campaignResponseSchema)).data;
    },
    async get(id: ServiceId): Promise<Campaign> {
      const path = campaignPath("campaigns.get", id);
      return (await call({ method: "GET", path, operation: "campaigns.get" }, campaignResponseSchema)).data;
    },
    async update(id: ServiceId, body: CampaignUpdate): Promise<Campaign> {
      const path = campaignPath("campaigns.update", id);
      const b = validate("campaigns.update", campaignUpdateSchema, body);
      return (await call(mutation("campaigns.update", "PUT", path, b), campaignResponseSchema)).data;
    },
    async delete(id: ServiceId): Promise<void> {
      await request(mutation("campaigns.delete", "DELETE", campaignPath("campaigns.delete", id)));
    },
    async send(id: ServiceId, body: { force?: boolean } = {}): Promise<Campaign> {
      const path = campaignPath("campaigns.send", id, "/send");
      const b = validate("campaigns.send", campaignSendSchema, body);
      return (await call(mutation("campaigns.send", "POST", path, b), campaignResponseSchema)).data;
    },
    async schedule(id: ServiceId, input: CampaignScheduleInput): Promise<Campaign> {
      const path = campaignPath("campaigns.schedule", id, "/schedule");
      const scheduledAt =
        input.scheduledAt instanceof Date
          ? Number.isNaN(input.scheduledAt.getTime())
            ? "Invalid Date"
            : input.scheduledAt.toISOString()
          : input.scheduledAt;
      const b = validate("campaigns.schedule", campaignScheduleSchema, { ...input, scheduledAt });
      return (await call(mutation("campaigns.schedule", "POST", path, b), campaignResponseSchema)).data;
    },
    async testSend(id: ServiceId, recipients: string[]): Promise<TestSendResult> {
      const path = campaignPath("campaigns.testSend", id, "/test-send");
      const b = validate("campaigns.testSend", testSendSchema, { recipients });
      return (await call(mutation("campaigns.testSend", "POST", path, b), testSendResponseSchema)).data;
    },
  };

  // -------------------------------------------------------------- templates

  const templates = {
    async list(query: TemplatesListQuery = {}): Promise<Page<Template>> {
      const q = validate("templates.list", templatesListQuerySchema, query);
      return call({ method: "GET", path: "/api/templates", query: { ...q }, operation: "templates.list" }, templateListResponseSchema);
    },
    iterate(query: TemplatesListQuery = {}): AsyncGenerator<Template> {
      return iterate(
        () => templates.list(query),
        (link) => call({ method: "GET", path: link, operation: "templates.list" }, templateListResponseSchema),
      );
    },
  };

  // ---------------------------------------------------------------- account

  const account = {
    async get(): Promise<Account> {
      return (await call({ method: "GET", path: "/api/account", operation: "account.get" }, accountResponseSchema)).data;
    },
  };

  /** true when the key is valid; false when the service answers `Unauthenticated`. Other failures throw. */
  async function authenticated(): Promise<boolean> {
    try {
      const r = await call({ method: "GET", path: "/api/authenticated", operation: "authenticated" }, authenticatedResponseSchema);
      return r.data.authenticated;
    } catch (e) {
      if (isMarketingServiceError(e) && e.kind === "unauthenticated") return false;
      throw e;
    }
  }

  async function websiteTracker(mode?: WebsiteTrackerMode): Promise<WebsiteTracker> {
    const m = mode === undefined ? undefined : validate("websiteTracker", websiteTrackerModeSchema, mode);
    const path = m ? `/api/account/website-tracker/${enc(m)}` : "/api/account/website-tracker";
    return (await call({ method: "GET", path, operation: "websiteTracker" }, websiteTrackerResponseSchema)).data;
  }

  // ----------------------------------------------------------------- events

  /** A 2xx whose body says `success: false` is a failure (not_accepted), retried like a 5xx. */
  const postEvent = (operation: string, path: string, body: unknown) =>
    call({ method: "POST", path, body, retryClass: "event", operation }, eventResponseSchema);

  function typedEvent<T extends EventType>(type: T) {
    return async (action: EventActionsByType[T], body: EventBodies[T]): Promise<EventResult> => {
      const operation = `events.${type}`;
      const actionSchema = { options: eventActions[type] as readonly string[] };
      if (!actionSchema.options.includes(action as string)) {
        throw new MarketingServiceError({
          kind: "validation",
          status: 0,
          local: true,
          message: `Invalid ${operation} request — action: expected one of ${actionSchema.options.join(", ")}`,
          errors: { action: [`Expected one of ${actionSchema.options.join(", ")}`] },
        });
      }
      return sendTypedEvent(type, action as string, validate(operation, eventBodySchemas[type] as z.ZodType, body));
    };
  }

  // The senders below take bodies already validated (by the public methods or by perform).
  const sendTypedEvent = (type: EventType, action: string, body: unknown) =>
    postEvent(`events.${type}`, `/api/events/${type}/${enc(action)}`, body);
  const sendCustomEvent = (body: unknown) => postEvent("events.custom", "/api/events", body);

  const events = {
    async custom(body: CustomEvent): Promise<EventResult> {
      return sendCustomEvent(validate("events.custom", customEventSchema, body));
    },
    cart: typedEvent("cart"),
    product: typedEvent("product"),
    order: typedEvent("order"),
    customer: typedEvent("customer"),
    user: typedEvent("user"),
    subscription: typedEvent("subscription"),
  };

  /** Dispatches one queued call, validated once as a whole (the union checks each body and action). */
  async function perform(serviceCall: ServiceCall): Promise<PerformResult> {
    const c = validate("perform", serviceCallSchema, serviceCall);
    switch (c.op) {
      case "person.upsert":
        return sendUpsert(c.body);
      case "person.delete":
        await people.delete(c.idOrEmail);
        return undefined;
      case "event.custom":
        return sendCustomEvent(c.body);
      case "event":
        return sendTypedEvent(c.type, c.action, c.body);
    }
  }

  return {
    people,
    campaigns,
    templates,
    account,
    authenticated,
    websiteTracker,
    events,
    perform,
    /** Low-level escape hatch: no local validation, same transport/retry/error rules. */
    request,
  };
}

export type MarketingClient = ReturnType<typeof createMarketingClient>;

/**
 * Response JSON. An integer of 16+ digits may pass 2^53 (§2 ids): such a text is parsed with
 * lossless-json, unsafe integers kept as their exact decimal string; other texts take JSON.parse.
 */
function parseResponse(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return parseLossless(text, null, (value) => {
    if (!isInteger(value)) return Number(value);
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : BigInt(value).toString();
  });
}

/** §4.5 event answer `{success: false, …}`. */
const saysNotAccepted = (json: unknown): boolean =>
  typeof json === "object" && json !== null && (json as { success?: unknown }).success === false;

/**
 * The body read ends at the deadline whatever the transport does with the signal: a read left
 * pending (as fetch's can be, nodejs/node#56917) would stall a worker's whole batch.
 */
function readBody(body: Dispatcher.ResponseData["body"], signal: AbortSignal): Promise<string> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<string>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    body.text().then(
      (text) => {
        signal.removeEventListener("abort", onAbort);
        resolve(text);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      }
    );
  });
}
