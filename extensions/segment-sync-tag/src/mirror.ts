/**
 * The extension's calls to the app. Shopify resolves a relative URL against the app's
 * application_url and adds the user's session token (`Authorization: Bearer`) to a fetch to the
 * app's own domain (shopify.dev, Admin UI extensions, "App authentication"), so none is added here.
 */

/** The app's route (app/routes/api.segments.mirror.ts). */
export const MIRROR_PATH = "/api/segments/mirror";

/** The admin waits no longer than this for the app. */
const TIMEOUT_MS = 15_000;

export interface MirroredSegment {
  segmentId: string;
  name: string;
  tag: string;
}

export type MirrorAnswer =
  | { ok: true; segment: MirroredSegment | null; added?: boolean }
  | { ok: false; error: string };

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

async function read(response: Response): Promise<MirrorAnswer> {
  const body = (await response.json().catch(() => null)) as MirrorAnswer | null;
  if (body && typeof body === "object" && "ok" in body) return body;
  return { ok: false, error: `The app answered ${response.status}. Try again.` };
}

async function call(fetchFn: Fetch, path: string, init: RequestInit = {}): Promise<MirrorAnswer> {
  try {
    return await read(await fetchFn(path, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) }));
  } catch {
    return { ok: false, error: "The app could not be reached. Try again." };
  }
}

/** Whether the segment is mirrored already (`segment`: its pick and tag, or null). */
export const segmentState = (fetchFn: Fetch, segmentId: string) => call(fetchFn, `${MIRROR_PATH}?segmentId=${encodeURIComponent(segmentId)}`);

/** Starts mirroring the segment as a tag (kept if it is mirrored already). */
export const startMirroring = (fetchFn: Fetch, segmentId: string) =>
  call(fetchFn, MIRROR_PATH, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ segmentId }) });
