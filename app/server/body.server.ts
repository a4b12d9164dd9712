import type { IncomingMessage } from "node:http";

/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed: null past the
 * limit, where reading stops. The caller answers with `connection: close`, which ends the flood;
 * cancelling the stream instead would reset the connection before that answer goes out.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<Buffer | null> {
  if (Number(request.headers.get("content-length") ?? 0) > limit) return null;
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      reader.releaseLock();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * The same for a Node request stream (the Express path of /webhooks): null past the limit, where
 * reading stops; the caller answers with `connection: close`, so the rest is never read.
 */
export async function readNodeBodyLimited(stream: IncomingMessage, limit: number): Promise<Buffer | null> {
  if (Number(stream.headers["content-length"] ?? 0) > limit) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early must not destroy the socket: the 413 still has to go out on it.
  for await (const chunk of stream.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).byteLength;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
