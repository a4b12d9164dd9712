/**
 * A request body read up to `limit` bytes, declared (Content-Length) or streamed: null past the
 * limit, and the stream is cancelled there, so a flood of bytes is cut short instead of buffered.
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
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
