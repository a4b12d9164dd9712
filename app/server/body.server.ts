import type { IncomingMessage } from "node:http";
import ipaddr from "ipaddr.js";
import { config } from "../config.server";

/**
 * Request bodies are read into memory before anything authenticates them (a webhook's HMAC, an app
 * proxy signature, the login form), so no secret must be needed to exhaust the server. Each body is
 * bounded by its own limit; all bodies being read together by one global budget of bytes and of
 * readers; each client (its address) by a share of that budget, so that one client cannot hold it
 * all; and each body by two deadlines: its first byte, and its last. Bytes count as they arrive:
 * a declared Content-Length reserves nothing (a sender that declares 2 MiB and sends nothing holds
 * no memory, only a reader, until its first-byte deadline). Past a budget: "busy", answered 503 so
 * that Shopify retries later; past a deadline: 408.
 */
export const BODY_BUDGET = {
  /** Bytes of all bodies being read at once, counted as they arrive. */
  maxBufferedBytes: 32 * 1024 * 1024,
  /** Bodies being read at once. */
  maxReaders: 256,
  /** One client's share of the bytes: at least the largest body a route accepts (a webhook's 2 MiB). */
  perClientBytes: 4 * 1024 * 1024,
  /** One client's share of the readers. Shopify delivers from many addresses, a few at a time each. */
  perClientReaders: 8,
  /** From the start of reading to the first byte of the body: Shopify sends it with the headers. */
  firstByteTimeoutMs: 2_000,
  /** From the start of reading to the last byte: Shopify's deliveries arrive in far less. */
  bodyTimeoutMs: 10_000,
};

/** Why a body was not read: past its own limit, a budget, or a deadline. */
export type BodyRefusal = "too-large" | "busy" | "too-slow";

export type LimitedBody = { ok: true; body: Buffer } | { ok: false; refusal: BodyRefusal };

interface Usage {
  bytes: number;
  readers: number;
}

const total: Usage = { bytes: 0, readers: 0 };
const byClient = new Map<string, Usage>();

/** What is being read now (tests and the benchmark watch the budget drain). */
export function bodyBudgetInUse(): { bytes: number; readers: number; clients: number } {
  return { ...total, clients: byClient.size };
}

/**
 * Who sends a request, for its share of the budget: the address that connected to the first
 * proxy of ours (with TRUSTED_PROXY_HOPS proxies in front, the entry the outermost one appended to
 * X-Forwarded-For; entries further left are written by the client and prove nothing), else the
 * socket's peer. IPv6 clients are counted by /64, what one host is usually given. For Shopify's
 * webhooks and app proxy that is one of Shopify's many addresses, never the storefront visitor.
 */
export function clientOf(req: Pick<IncomingMessage, "headers" | "socket">): string {
  const hops = config().trustedProxyHops;
  let address = req.socket.remoteAddress ?? "";
  if (hops > 0) {
    const forwarded = req.headers["x-forwarded-for"];
    const entries = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? "")).split(",").map((e) => e.trim());
    const entry = entries.length >= hops ? entries[entries.length - hops] : "";
    // A port is no part of the address: `[v6]:port`, `v4:port`.
    const bare = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)?.[1] ?? /^([\d.]+):\d+$/.exec(entry)?.[1] ?? entry;
    if (ipaddr.isValid(bare)) address = bare;
  }
  if (!ipaddr.isValid(address)) return address || "unknown";
  const parsed = ipaddr.process(address); // ::ffff:1.2.3.4 is 1.2.3.4
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}

/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed. Reading stops at
 * a refusal; the caller answers with `connection: close`, which ends the upload. Cancelling the
 * stream (or destroying the socket) instead would reset the connection before that answer goes
 * out — hence `preventCancel` and `destroyOnReturn: false` below. `client` (see clientOf) gives
 * the read a client's share; without it only the global budget applies (a body the production
 * server has already read within the client's share, then handed on in memory).
 */
export async function readBodyLimited(request: Request, limit: number, client?: string): Promise<LimitedBody> {
  return collectLimited(request.headers.get("content-length"), () => request.body?.values({ preventCancel: true }) ?? [], limit, client);
}

/** The same for a Node request stream (the production server), counted against its client's share. */
export async function readNodeBodyLimited(stream: IncomingMessage, limit: number): Promise<LimitedBody> {
  const body = () => stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>;
  return collectLimited(stream.headers["content-length"], body, limit, clientOf(stream));
}

/** `body` is opened only once the declared length is within the limits: a body refused unread stays unlocked. */
async function collectLimited(
  declaredLength: string | null | undefined,
  body: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limit: number,
  client: string | undefined,
): Promise<LimitedBody> {
  if (Number(declaredLength ?? 0) > limit) return { ok: false, refusal: "too-large" };
  const own = client === undefined ? undefined : (byClient.get(client) ?? { bytes: 0, readers: 0 });
  if (total.readers >= BODY_BUDGET.maxReaders || (own && own.readers >= BODY_BUDGET.perClientReaders)) {
    return { ok: false, refusal: "busy" };
  }
  total.readers += 1;
  if (own && client !== undefined) {
    own.readers += 1;
    byClient.set(client, own);
  }
  let held = 0; // bytes received and counted against the budgets
  const timers: NodeJS.Timeout[] = [];
  let iterator: AsyncIterator<Uint8Array> | undefined;
  try {
    const deadline = (ms: number) =>
      new Promise<"too-slow">((resolve) => {
        timers.push(setTimeout(() => resolve("too-slow"), ms));
      });
    const firstByte = deadline(BODY_BUDGET.firstByteTimeoutMs);
    const lastByte = deadline(BODY_BUDGET.bodyTimeoutMs);
    iterator = toAsyncIterator(body());
    const chunks: Uint8Array[] = [];
    for (;;) {
      const pending = iterator.next();
      pending.catch(() => undefined); // left behind at a deadline: its later failure is no one's
      const next = await Promise.race(held === 0 ? [pending, firstByte, lastByte] : [pending, lastByte]);
      if (next === "too-slow") return { ok: false, refusal: "too-slow" };
      if (next.done) {
        iterator = undefined;
        break;
      }
      const size = next.value.byteLength;
      if (held + size > limit) return { ok: false, refusal: "too-large" };
      if (total.bytes + size > BODY_BUDGET.maxBufferedBytes || (own && own.bytes + size > BODY_BUDGET.perClientBytes)) {
        return { ok: false, refusal: "busy" };
      }
      total.bytes += size;
      if (own) own.bytes += size;
      held += size;
      chunks.push(next.value);
    }
    // One chunk (a small body, as Shopify's usually are) is returned as it is; more are joined once.
    const only = chunks.length === 1 ? chunks[0] : undefined;
    return { ok: true, body: only ? Buffer.from(only.buffer, only.byteOffset, only.byteLength) : Buffer.concat(chunks, held) };
  } finally {
    for (const t of timers) clearTimeout(t);
    // Stopped early: the stream is released (not cancelled: see above), the rest left unread.
    iterator?.return?.()?.catch(() => undefined);
    total.bytes -= held;
    total.readers -= 1;
    if (own && client !== undefined) {
      own.bytes -= held;
      own.readers -= 1;
      if (own.readers === 0) byClient.delete(client);
    }
  }
}

function toAsyncIterator(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const it = source[Symbol.iterator]();
  return { next: async () => it.next() };
}
