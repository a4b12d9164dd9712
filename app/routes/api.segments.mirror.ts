import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { mirroredSegment, mirrorSegment, segmentIdSchema } from "~/segments/segments.server";
import { authenticate } from "~/shopify.server";

/**
 * The segment action extension's endpoint (extensions/segment-sync-tag): GET ?segmentId= says
 * whether a segment is mirrored, POST {"segmentId"} starts mirroring it. Shopify's fetch from an
 * admin extension carries the user's session token as `Authorization: Bearer`; the extension runs
 * on another origin, so answers carry CORS headers and OPTIONS is answered as a preflight (both by
 * the library's authenticate.admin and its `cors`).
 */

/** The library's CORS headers, for the answers given before it has authenticated anything. */
const CORS = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "Authorization, Content-Type" };

const answer = (status: number, body: unknown) => Response.json(body, { status, headers: CORS });

/**
 * Extension calls only: without a bearer token authenticate.admin would take the request for an
 * admin page load and redirect it to the login; a caller without a token is told 401.
 */
async function authenticateExtension(request: Request) {
  if (request.method !== "OPTIONS" && !/^Bearer\s+\S+/i.test(request.headers.get("authorization") ?? "")) {
    throw answer(401, { ok: false, error: "This endpoint is called by the app's admin extension with a session token." });
  }
  return authenticate.admin(request);
}

const bodySchema = z.object({ segmentId: segmentIdSchema });

export const loader = async ({ request }: LoaderFunctionArgs) => {
  // OPTIONS (the preflight) is answered inside authenticate.admin, with 204 and CORS headers.
  const { session, cors } = await authenticateExtension(request);
  const id = segmentIdSchema.safeParse(new URL(request.url).searchParams.get("segmentId") ?? "");
  if (!id.success) return cors(answer(400, { ok: false, error: id.error.issues[0]?.message ?? "Not a Shopify segment id." }));
  return cors(answer(200, { ok: true, segment: await mirroredSegment(session.shop, id.data) }));
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session, cors } = await authenticateExtension(request);
  if (request.method !== "POST") return cors(answer(405, { ok: false, error: "POST only." }));
  const body = bodySchema.safeParse(await request.json().catch(() => null));
  if (!body.success) return cors(answer(400, { ok: false, error: body.error.issues[0]?.message ?? "Expected {\"segmentId\": \"gid://shopify/Segment/<id>\"}." }));
  const result = await mirrorSegment(session.shop, body.data.segmentId);
  if (result.ok) return cors(answer(200, { ok: true, segment: result.segment, added: result.added }));
  return cors(answer(result.reason === "unknown_segment" ? 404 : 502, { ok: false, error: result.error }));
};
