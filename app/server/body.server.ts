import type { IncomingMessage } from "node:http";

/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed: null past the
 * limit, where reading stops. The caller answers with `connection: close`, which ends the flood;
 * cancelling the stream (or destroying the socket) instead would reset the connection before
 * that answer goes out — hence `preventCancel` and `destroyOnReturn: false` below.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<Buffer | null> {
  return collectLimited(request.headers.get("content-length"), () => request.body?.values({ preventCancel: true }) ?? [], limit);
}

/** The same for a Node request stream (the production server's /webhooks). */
export async function readNodeBodyLimited(stream: IncomingMessage, limit: number): Promise<Buffer | null> {
  return collectLimited(stream.headers["content-length"], () => stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>, limit);
}

/** `body` is opened only once the declared length is within the limit: a body refused unread stays unlocked. */
async function collectLimited(
  declaredLength: string | null | undefined,
  body: () => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limit: number,
): Promise<Buffer | null> {
  if (Number(declaredLength ?? 0) > limit) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body()) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
