import type { IncomingMessage } from "node:http";

/**
 * Request bodies read into memory before anything authenticates them (a webhook's HMAC, an app
 * proxy signature) are bounded three ways, so that no secret is needed to exhaust the server:
 * each body by its own limit, all bodies being read together by one global budget of bytes and
 * of readers (past it: "busy", answered 503 so that Shopify retries later), and each body by a
 * deadline (a slow sender is answered 408 instead of holding its buffer for minutes).
 */
export const BODY_BUDGET = {
  /** Bytes of all bodies being read at once (declared lengths count in full from the start). */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Bodies being read at once. */
  maxReaders: 32,
  /** From the first read to the last byte: Shopify's deliveries arrive in far less. */
  bodyTimeoutMs: 10_000,
};

/** Why a body was not read: past its own limit, the server's budget, or its deadline. */
export type BodyRefusal = "too-large" | "busy" | "too-slow";

export type LimitedBody = { ok: true; body: Buffer } | { ok: false; refusal: BodyRefusal };

let bufferedBytes = 0;
let readers = 0;

/** What is being read now (tests and the benchmark watch the budget drain). */
export function bodyBudgetInUse(): { bytes: number; readers: number } {
  return { bytes: bufferedBytes, readers };
}

/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed. Reading stops at
 * a refusal; the caller answers with `connection: close`, which ends the upload. Cancelling the
 * stream (or destroying the socket) instead would reset the connection before that answer goes
 * out — hence `preventCancel` and `destroyOnReturn: false` below.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<LimitedBody> {
  return collectLimited(request.headers.get("content-length"), () => request.body?.values({ preventCancel: true }) ?? [], limit);
}

/** The same for a Node request stream (the production server's /webhooks). */
export async function readNodeBodyLimited(stream: IncomingMessage, limit: number): Promise<LimitedBody> {
  return collectLimited(stream.headers["content-length"], () => stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>, limit);
}

/** `body` is opened only once the declared length is within the limits: a body refused unread stays unlocked. */
async function collectLimited(
  declaredLength: string | null | undefined,
  body: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limit: number,
): Promise<LimitedBody> {
  const declared = Number(declaredLength ?? 0);
  if (declared > limit) return { ok: false, refusal: "too-large" };
  if (readers >= BODY_BUDGET.maxReaders || bufferedBytes + declared > BODY_BUDGET.maxBufferedBytes) return { ok: false, refusal: "busy" };
  readers += 1;
  let held = declared; // reserved now: a slow sender's declared body counts before it arrives
  bufferedBytes += held;
  let timer: NodeJS.Timeout | undefined;
  let iterator: AsyncIterator<Uint8Array> | undefined;
  try {
    const deadline = new Promise<"too-slow">((resolve) => {
      timer = setTimeout(() => resolve("too-slow"), BODY_BUDGET.bodyTimeoutMs);
    });
    iterator = toAsyncIterator(body());
    // A declared body is copied into one buffer as it arrives (no second copy at the end).
    const whole = declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const pending = iterator.next();
      pending.catch(() => undefined); // left behind at the deadline: its later failure is no one's
      const next = await Promise.race([pending, deadline]);
      if (next === "too-slow") return { ok: false, refusal: "too-slow" };
      if (next.done) {
        iterator = undefined;
        break;
      }
      const start = size;
      size += next.value.byteLength;
      if (size > limit) return { ok: false, refusal: "too-large" };
      let rest = next.value;
      if (whole && start < whole.length) {
        const fits = Math.min(rest.byteLength, whole.length - start);
        whole.set(rest.subarray(0, fits), start);
        if (fits === rest.byteLength) continue;
        rest = rest.subarray(fits);
      }
      if (size > held) {
        // A body without a declared length (or longer than declared) reserves as it arrives.
        if (bufferedBytes + (size - held) > BODY_BUDGET.maxBufferedBytes) return { ok: false, refusal: "busy" };
        bufferedBytes += size - held;
        held = size;
      }
      chunks.push(rest);
    }
    if (whole && size === whole.length) return { ok: true, body: whole };
    // Shorter than declared (the sender lied, or no length was declared): what arrived, in order.
    return { ok: true, body: Buffer.concat(whole ? [whole.subarray(0, Math.min(size, whole.length)), ...chunks] : chunks) };
  } finally {
    clearTimeout(timer);
    // Stopped early: the stream is released (not cancelled: see above), the rest left unread.
    iterator?.return?.()?.catch(() => undefined);
    bufferedBytes -= held;
    readers -= 1;
  }
}

function toAsyncIterator(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const it = source[Symbol.iterator]();
  return { next: async () => it.next() };
}
