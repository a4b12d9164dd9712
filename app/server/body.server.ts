import type { IncomingMessage } from "node:http";

/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed: null past the
 * limit, where reading stops. The caller answers with `connection: close`, which ends the flood;
 * cancelling the stream (or destroying the socket) instead would reset the connection before
 * that answer goes out — hence `preventCancel` and `destroyOnReturn: false` below.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<Buffer | null> {
  const chunks = request.body?.values({ preventCancel: true }) ?? [];
  return collectLimited(request.headers.get("content-length"), chunks, limit);
}

/** The same for a Node request stream (the production server's /webhooks). */
export async function readNodeBodyLimited(stream: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks = stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>;
  return collectLimited(stream.headers["content-length"], chunks, limit);
}

async function collectLimited(
  declaredLength: string | null | undefined,
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  limit: number,
): Promise<Buffer | null> {
  if (Number(declaredLength ?? 0) > limit) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
