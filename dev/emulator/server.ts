/**
 * HTTP emulator of the marketing service: node:http, in-memory, per account.
 * Domain behaviour is in ./service.ts; this file adds transport faults,
 * request recording and the /__emulator control endpoints.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { appendFileSync } from "node:fs";
import { isInteger, parse as parseLossless, stringify as stringifyLossless } from "lossless-json";
import {
  ServiceState,
  type AccountRec,
  type BehaviourFaults,
  type CampaignState,
  type CreateAccountOptions,
  type PersonRec,
  type StoredEvent,
} from "./service";
import { trackerRoute, type TrackerHit } from "./tracker";

export type { CreateAccountOptions, PersonRec, StoredEvent, CampaignState } from "./service";

export interface Faults extends BehaviourFaults {
  /** delay before every matching answer */
  latencyMs?: number;
  /** a latency tail: this share (0..1) of matching requests waits `ms` more (a remote service's slow answers) */
  slow?: { share: number; ms: number };
  /** share (0..1) of matching requests answered 500 */
  errorRate?: number;
  /** the next N matching requests are answered with a 5xx (status default 500) */
  serverErrors?: number | { count: number; status?: number };
  /**
   * The next `count` matching requests get 429 (with `accountId`, only that account's), with
   * Retry-After unless `withoutRetryAfter` (§7/§8 promise no header): true for none of them, a
   * share 0..1 for some.
   */
  burst429?: { count: number; retryAfterSeconds?: number; retryAfterHttpDate?: boolean; withoutRetryAfter?: boolean | number; accountId?: number };
  /** wait this long before handling (combine with a short client timeout) */
  stallMs?: number;
  /** in-process only: matching requests wait until this settles (a slow answer the test ends itself) */
  hold?: Promise<unknown>;
  /** never answer matching requests (the socket stays open until the client gives up or close()) */
  stall?: boolean;
  /**
   * Destroy the socket without answering. A number below 1 is a share of
   * matching requests; 1 or more is a count of the next matching requests.
   */
  dropConnections?: number | { share?: number; count?: number };
  /** transport faults apply only to paths starting with this (e.g. "/api/people") */
  pathPrefix?: string;
  /** ...and only to requests whose API key belongs to this account (one account's trouble) */
  accountId?: number;
  /** ...and only to this method */
  method?: string;
}

export interface RecordedRequest {
  id: number;
  at: string;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  status: number | null;
  responseBody: unknown;
  /** headers the emulator added to the answer (e.g. Retry-After) */
  responseHeaders?: Record<string, string>;
  accountId: number | null;
  /** transport fault applied, if any */
  fault?: "drop" | "stall" | "5xx" | "429";
}

export interface Emulator {
  url: string;
  /** ready key of the default account (active, double opt-in ON) */
  apiKey: string;
  defaultAccountId: number;
  createAccount(opts?: CreateAccountOptions): { apiKey: string; accountId: number };
  createApiKey(accountId: number, opts?: { plugin?: boolean }): string;
  /** The key stays known but no longer valid: `GET /api/authenticated` answers `{authenticated: false}`, every other call `Unauthenticated`. */
  revokeApiKey(apiKey: string): void;
  readonly requests: RecordedRequest[];
  reset(): void;
  faults: Faults;
  setFaults(f: Faults): void;
  clearFaults(): void;
  readonly state: ServiceState;
  /** Stored events of a person (newest last). */
  personEvents(email: string, accountId?: number): StoredEvent[];
  person(email: string, accountId?: number): PersonRec | undefined;
  readonly sentEmails: ServiceState["sentEmails"];
  readonly automations: ServiceState["automations"];
  markBlocked(email: string, accountId?: number): void;
  /** The person follows the unsubscribe link of an email (§3.2: `unsubscribed`; a blocked person stays blocked). */
  markUnsubscribed(email: string, accountId?: number): void;
  markHardBounced(email: string, accountId?: number): void;
  /** campaign ids as the client got them (with `idBase`, they differ from the records' own) */
  markReviewed(campaignId: CampaignId): void;
  setCampaignContent(campaignId: CampaignId, content: string | null): void;
  advanceCampaign(campaignId: CampaignId, to: CampaignState): void;
  updateAccount(accountId: number, patch: Partial<Pick<AccountRec, "status" | "doubleOptIn" | "sendingLimitRemaining" | "upgradeRequired" | "verifiedDomains" | "company">>): void;
  defineSegment(name: string, emails: string[], accountId?: number, id?: string): string;
  /** Page events the tracker script posted (only with `trackerScripts: true`). */
  readonly trackerHits: TrackerHit[];
  close(): Promise<void>;
}

type CampaignId = number | string | bigint;

const MAX_BODY_BYTES = 1_000_000;

/** JSON text → value; integers a double cannot hold become bigints (ids sent above 2^53). */
function parseJson(raw: string): unknown {
  if (!/\d{16}/.test(raw)) return JSON.parse(raw);
  return parseLossless(raw, null, (v) => (isInteger(v) && !Number.isSafeInteger(Number(v)) ? BigInt(v) : Number(v)));
}

/** value → JSON text; bigints (ids above 2^53) are written as JSON integers. */
function toJson(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (e) {
    if (e instanceof TypeError && /BigInt/i.test(e.message)) return stringifyLossless(body) ?? "null";
    throw e;
  }
}
const DEFAULT_KEY = "mk_live_default_emulator_key_0001";

export async function startEmulator(
  options: {
    port?: number;
    host?: string;
    /** Serve the tracker script at /tracker/*.js and point the snippet there (browser tests, no CDN). */
    trackerScripts?: boolean;
    /** Person and campaign ids handed out start above this (e.g. 2n ** 53n: ids a JS number cannot hold). */
    idBase?: bigint | number | string;
    /**
     * Serve the API under this path prefix (e.g. "/v1": {base_url} is http://host:port/v1, and
     * /v1/api/people is the service's /api/people). `url` then ends with it; /api without the
     * prefix is not found. Recorded paths and list links stay relative to {base_url} (no prefix).
     */
    basePath?: string;
  } = {},
): Promise<Emulator> {
  const host = options.host ?? "127.0.0.1";
  const refusalLog = process.env.EMULATOR_LOG_REFUSALS;
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  if (basePath && !/^\/[^?#]*$/.test(basePath)) throw new TypeError(`startEmulator: basePath must start with "/": ${basePath}`);
  const newState = () => new ServiceState({ idBase: options.idBase });
  let state = newState();
  let defaultAccountId = state.createAccount({ doubleOptIn: true, company: "Default Shop", email: "owner@default-shop.example" }, DEFAULT_KEY).accountId;
  let requests: RecordedRequest[] = [];
  let faults: Faults = {};
  let seq = 1;
  let baseUrl = "";
  const trackerHits: TrackerHit[] = [];
  const recordHit = (hit: Omit<TrackerHit, "at">) => {
    if (!state.accounts.has(hit.accountId)) return false;
    trackerHits.push({ at: new Date().toISOString(), ...hit });
    state.account(hit.accountId).lastEventTrackedAt = Math.floor(Date.now() / 1000);
    return true;
  };

  const applyBehaviour = () => {
    state.behaviour = {
      inactiveAccount: faults.inactiveAccount,
      pluginKey: faults.pluginKey,
      eligibilityCheckFails: faults.eligibilityCheckFails,
      sendFails: faults.sendFails,
      testSendUndeliverable: faults.testSendUndeliverable,
      eventsNotAccepted: faults.eventsNotAccepted,
    };
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(res, 500, { message: `emulator failure: ${(e as Error).message}` });
    });
  });
  server.keepAliveTimeout = 5_000;

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
    if (res.destroyed) return;
    const text = body === undefined ? "" : toJson(body);
    res.writeHead(status, {
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      "Content-Length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  async function readBody(req: IncomingMessage): Promise<{ raw: string; tooLarge: boolean }> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY_BYTES) return { raw: "", tooLarge: true };
      chunks.push(c as Buffer);
    }
    return { raw: Buffer.concat(chunks).toString("utf8"), tooLarge: false };
  }

  /** Decrements a count-based fault; returns true when it fires. */
  function takeCount(get: () => number | undefined, set: (n: number) => void): boolean {
    const n = get();
    if (!n || n <= 0) return false;
    set(n - 1);
    return true;
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://emulator.local");
    if (basePath) {
      // the API lives under the prefix only; control and tracker routes answer with or without it
      const p = url.pathname;
      if (p === basePath || p.startsWith(`${basePath}/`)) url.pathname = p.slice(basePath.length) || "/";
      else if (p === "/api" || p.startsWith("/api/")) return send(res, 404, { message: "Not Found" });
    }
    const generation = state; // a reset() while this request waits must not let it touch the new state
    const { raw, tooLarge } = await readBody(req);
    if (url.pathname.startsWith("/__emulator/")) return control(url, req.method ?? "GET", raw, res);
    if (options.trackerScripts && trackerRoute(url.pathname, req.method ?? "GET", raw, res, recordHit)) return;
    if (!url.pathname.startsWith("/api/") && url.pathname !== "/api") return send(res, 404, { message: "Not Found" });

    let body: unknown = undefined;
    let badJson = false;
    if (raw.trim() !== "") {
      try {
        body = parseJson(raw);
      } catch {
        badJson = true;
        body = raw;
      }
    }
    const auth = req.headers.authorization;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : (v ?? "");
    if (auth) headers.authorization = redact(auth);
    const rec: RecordedRequest = {
      id: seq++,
      at: new Date().toISOString(),
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      status: null,
      responseBody: undefined,
      accountId: null,
    };
    requests.push(rec);
    const reply = (status: number, resBody?: unknown, extra: Record<string, string> = {}) => {
      rec.status = status;
      rec.responseBody = resBody;
      rec.responseHeaders = extra;
      // Which bodies the service refused, across a whole test run (the key is never written).
      if (status === 422 && refusalLog) appendFileSync(refusalLog, `${toJson({ at: rec.at, method: rec.method, path: rec.path, errors: (resBody as { errors?: unknown } | undefined)?.errors, body })}\n`);
      send(res, status, resBody, extra);
    };

    // ---- transport faults
    const keyAccount = () => state.keys.get(/^Bearer\s+(.+)$/i.exec(auth ?? "")?.[1]?.trim() ?? "")?.accountId;
    const matches =
      (!faults.pathPrefix || url.pathname.startsWith(faults.pathPrefix)) &&
      (!faults.method || faults.method.toUpperCase() === rec.method) &&
      (faults.accountId === undefined || keyAccount() === faults.accountId);
    if (matches) {
      const drop = faults.dropConnections;
      const dropNow =
        typeof drop === "number"
          ? drop < 1
            ? Math.random() < drop
            : takeCount(() => faults.dropConnections as number, (n) => (faults.dropConnections = n))
          : drop
            ? (drop.share !== undefined && Math.random() < drop.share) || takeCount(() => drop.count, (n) => (drop.count = n))
            : false;
      if (dropNow) {
        rec.fault = "drop";
        req.socket.destroy();
        return;
      }
      if (faults.stall) {
        rec.fault = "stall";
        return; // never answered; close() destroys the socket
      }
      if (faults.hold) await faults.hold;
      if (faults.stallMs) await sleep(faults.stallMs);
      if (faults.latencyMs) await sleep(faults.latencyMs);
      if (faults.slow && Math.random() < faults.slow.share) await sleep(faults.slow.ms);
      if (state !== generation) {
        req.socket.destroy();
        return;
      }
      // a client that gave up meanwhile does not stop processing: a real server would carry on too
      const burst = faults.burst429;
      if (burst && (burst.accountId === undefined || keyAccount() === burst.accountId) && takeCount(() => burst.count, (n) => (burst.count = n))) {
        rec.fault = "429";
        const secs = burst.retryAfterSeconds ?? 1;
        const retryAfter = burst.retryAfterHttpDate ? new Date(Date.now() + secs * 1000).toUTCString() : String(secs);
        const bare = burst.withoutRetryAfter === true || (typeof burst.withoutRetryAfter === "number" && Math.random() < burst.withoutRetryAfter);
        return reply(429, { message: "Too Many Attempts.", status_code: 429 }, bare ? {} : { "Retry-After": retryAfter });
      }
      const se = faults.serverErrors;
      const seStatus = typeof se === "object" ? (se.status ?? 500) : 500;
      const seFires =
        typeof se === "number"
          ? takeCount(() => faults.serverErrors as number, (n) => (faults.serverErrors = n))
          : se
            ? takeCount(() => se.count, (n) => (se.count = n))
            : false;
      if (seFires || (faults.errorRate && Math.random() < faults.errorRate)) {
        rec.fault = "5xx";
        return reply(seFires ? seStatus : 500, { message: "Server Error", status_code: seFires ? seStatus : 500 });
      }
    }

    if (tooLarge) return reply(413, { message: "Payload Too Large", status_code: 413 });
    if (badJson) return reply(400, { message: "Malformed JSON body.", status_code: 400 });
    let segments: string[];
    try {
      segments = url.pathname.split("/").slice(2).filter((s) => s !== "").map(decodeURIComponent);
    } catch {
      return reply(400, { message: "Malformed path.", status_code: 400 });
    }
    const out = state.handle({
      method: rec.method,
      segments,
      path: url.pathname,
      query: url.searchParams,
      body,
      authorization: auth,
      baseUrl,
    });
    rec.accountId = out.accountId;
    reply(out.status, out.body, out.headers);
  }

  function summary() {
    return {
      accounts: [...state.accounts.values()].map((a) => ({
        ...state.serializeAccount(a),
        doubleOptIn: a.doubleOptIn,
        sendingLimitRemaining: a.sendingLimitRemaining,
        upgradeRequired: a.upgradeRequired,
        verifiedDomains: a.verifiedDomains,
        people: state.people.filter((p) => p.accountId === a.id).length,
        campaigns: state.campaigns.filter((c) => c.accountId === a.id).length,
      })),
      people: state.people.map((p) => ({ ...state.serializePerson(p, "full"), accountId: p.accountId, hardBounced: p.hardBounced })),
      campaigns: state.campaigns.map((c) => ({ ...state.serializeCampaign(c, "full", baseUrl), accountId: c.accountId, hasContent: c.content !== null })),
      events: state.events.length,
      unattachedEvents: state.unattachedEvents,
      sentEmails: state.sentEmails,
      automations: state.automations,
      faults,
      requests: requests.length,
    };
  }

  function control(url: URL, method: string, raw: string, res: ServerResponse) {
    const route = `${method} ${url.pathname}`;
    let body: Record<string, unknown>;
    try {
      body = raw.trim() ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { message: "Malformed JSON body." });
    }
    switch (route) {
      case "GET /__emulator/requests": {
        const p = url.searchParams.get("path");
        const m = url.searchParams.get("method");
        return send(res, 200, { data: requests.filter((r) => (!p || r.path.startsWith(p)) && (!m || r.method === m.toUpperCase())) });
      }
      case "POST /__emulator/reset":
        emulator.reset();
        return send(res, 200, { ok: true, apiKey: DEFAULT_KEY, accountId: defaultAccountId });
      case "POST /__emulator/faults":
        emulator.setFaults(body as Faults);
        return send(res, 200, { faults });
      case "GET /__emulator/state":
        return send(res, 200, summary());
      case "POST /__emulator/people/status": {
        // What a recipient or the service does to a person outside the API: unsubscribe link, block.
        const email = String(body.email ?? "");
        const accountId = typeof body.accountId === "number" ? body.accountId : undefined;
        if (!findPerson(email, accountId)) return send(res, 404, { message: "Person not found" });
        if (body.statusDetails === "unsubscribed") emulator.markUnsubscribed(email, accountId);
        else if (body.statusDetails === "blocked") emulator.markBlocked(email, accountId);
        else return send(res, 422, { message: "statusDetails must be unsubscribed or blocked" });
        return send(res, 200, { data: state.serializePerson(findPerson(email, accountId)!, "full") });
      }
      case "POST /__emulator/people/signup": {
        // A signup through the service's own form, and its confirmation link (outside the API).
        const email = String(body.email ?? "");
        const accountId = typeof body.accountId === "number" ? body.accountId : defaultAccountId;
        if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) return send(res, 422, { message: "email must be an email address" });
        const source = typeof body.source === "string" && body.source !== "" ? body.source : "form";
        const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
        const p = state.signUp(accountId, email, { source, firstName: str(body.firstName), lastName: str(body.lastName), confirm: body.confirm !== false });
        if (!p) return send(res, 422, { message: "The email is already a person of the account" });
        return send(res, 200, { data: state.serializePerson(p, "full") });
      }
      case "POST /__emulator/keys/revoke":
        emulator.revokeApiKey(String(body.apiKey ?? ""));
        return send(res, 200, { ok: true });
      case "POST /__emulator/accounts":
        return send(res, 201, emulator.createAccount(body as CreateAccountOptions));
      default:
        return send(res, 404, { message: "Unknown emulator control route" });
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  const apiUrl = baseUrl + basePath;
  const useOwnTracker = () => {
    if (options.trackerScripts) state.trackerBase = `${baseUrl}/tracker`;
  };
  useOwnTracker();

  const findPerson = (email: string, accountId?: number) => {
    const p = state.findPerson(accountId ?? defaultAccountId, email);
    return p;
  };
  const mustPerson = (email: string, accountId?: number) => {
    const p = findPerson(email, accountId);
    if (!p) throw new Error(`emulator: no person ${email}`);
    return p;
  };

  const emulator: Emulator = {
    get url() {
      return apiUrl;
    },
    apiKey: DEFAULT_KEY,
    get defaultAccountId() {
      return defaultAccountId;
    },
    createAccount: (opts) => state.createAccount(opts),
    createApiKey: (accountId, opts) => state.createApiKey(accountId, opts),
    revokeApiKey: (apiKey) => state.revokeApiKey(apiKey),
    get requests() {
      return requests;
    },
    reset() {
      state = newState();
      defaultAccountId = state.createAccount({ doubleOptIn: true, company: "Default Shop", email: "owner@default-shop.example" }, DEFAULT_KEY).accountId;
      requests = [];
      faults = {};
      applyBehaviour();
      useOwnTracker();
      trackerHits.length = 0;
    },
    get faults() {
      return faults;
    },
    set faults(f: Faults) {
      faults = { ...f };
      applyBehaviour();
    },
    setFaults(f) {
      faults = { ...f };
      applyBehaviour();
    },
    clearFaults() {
      faults = {};
      applyBehaviour();
    },
    get state() {
      return state;
    },
    personEvents: (email, accountId) => state.eventsOf(mustPerson(email, accountId).id),
    person: findPerson,
    get sentEmails() {
      return state.sentEmails;
    },
    get automations() {
      return state.automations;
    },
    markBlocked: (email, accountId) => {
      mustPerson(email, accountId).statusDetails = "blocked";
    },
    markUnsubscribed: (email, accountId) => {
      const p = mustPerson(email, accountId);
      if (p.statusDetails !== "blocked") p.statusDetails = "unsubscribed";
    },
    markHardBounced: (email, accountId) => {
      mustPerson(email, accountId).hardBounced = true;
    },
    markReviewed: (id) => {
      state.campaignById(id).builderReviewed = true;
    },
    setCampaignContent: (id, content) => {
      state.campaignById(id).content = content;
    },
    advanceCampaign: (id, to) => state.advanceCampaign(id, to),
    updateAccount: (accountId, patch) => {
      Object.assign(state.account(accountId), patch);
    },
    defineSegment: (name, emails, accountId, id) => {
      const acc = state.account(accountId ?? defaultAccountId);
      const segId = id ?? String(acc.segments.size + 1);
      acc.segments.set(segId, { id: segId, name, emails: new Set(emails.map((e) => e.toLowerCase())) });
      return segId;
    },
    get trackerHits() {
      return trackerHits;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return emulator;
}

function redact(auth: string): string {
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  const token = m?.[1]?.trim() ?? auth;
  return `Bearer ***${token.slice(-4)}`;
}
