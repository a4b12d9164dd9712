/**
 * Shopify customer segments mirrored as contact tags: the merchant picks segments in Settings;
 * customer.joined_segment / customer.left_segment of a picked segment add or remove its tag on the
 * contact (app/sync/mappers/customers.ts). Shopify sends only ids in those webhooks, so the pick
 * (segment id → tag) is stored here and read with the shop's planning context.
 *
 * The tag is fixed when the segment is picked: a workflow in the marketing service that uses the
 * tag keeps working when the segment is renamed in Shopify. Un-picking stops the updates and
 * leaves the tags contacts already have (removing them would fire the service's "tag removed"
 * automations for reasons the customer had nothing to do with).
 *
 * The segment action extension (extensions/segment-sync-tag, Shopify's "Use segment" modal) picks
 * one segment the same way (`mirrorSegment`, through app/routes/api.segments.mirror.tsx).
 *
 * Shopify sends the two segment topics only to subscriptions made through the Admin API: every save
 * subscribes the shop to them while a segment is picked and removes them when none is
 * (webhook-subscriptions.server.ts).
 */
import { z } from "zod";
import { prisma } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import { gidNumber } from "../sync/payloads";
import { importOutcomes, type ImportOutcome } from "./import-outcome.server";
import { retrySegmentImport } from "./member-import.server";
import { syncSegmentSubscriptions } from "./webhook-subscriptions.server";

/** Pages read at most (1,000 segments); a store with more is told so. */
const MAX_PAGES = 4;

// 250 segments a page: 2 + 250 × 1 = 252 of the 1,000-point query limit (page size written in, so
// test/foundation/admin-graphql.test.ts can cost it).
const SEGMENTS_QUERY = `#graphql
  query ShopSegments($after: String) {
    segments(first: 250, after: $after) {
      nodes { id name }
      pageInfo { hasNextPage endCursor }
    }
  }`;

const segmentsAnswer = z.object({
  segments: z.object({
    nodes: z.array(z.object({ id: z.string(), name: z.string() })),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
  }),
});

export interface ShopSegment {
  id: string;
  name: string;
}

export interface MirroredSegmentRow {
  segmentId: string;
  name: string;
  tag: string;
  /** The import of the members it had when picked (app/segments/member-import.server.ts). */
  importStatus: string;
  importTotal: number | null;
  importDone: number;
  importError: string | null;
  /** What became of those members: tagged as the service confirmed, waiting, failed, skipped with the reason. */
  outcome: ImportOutcome;
}

/** What the Settings section shows: the store's segments (null: Shopify could not be asked) and the picks. */
export interface SegmentChoices {
  available: ShopSegment[] | null;
  /** More segments than were read (MAX_PAGES pages). */
  truncated: boolean;
  /** Why `available` is null, in the merchant's words. */
  problem: string | null;
  picked: MirroredSegmentRow[];
}

export const TAG_PREFIX = "shopify-segment:";

/**
 * The tag a segment's contacts get: `shopify-segment:<name>`. The prefix keeps it apart from the
 * customer's own Shopify tags (also synced as tags) and says where it comes from; commas become
 * spaces because the service filters by comma-separated tag names (spec: `filter[tags]`).
 */
export function segmentTag(name: string): string {
  const clean = name.replace(/,/g, " ").replace(/\s+/g, " ").trim();
  return `${TAG_PREFIX}${clean || "unnamed"}`;
}

/** The store's segments from the Admin API, oldest first; throws when Shopify cannot be asked. */
export async function listShopSegments(shop: string): Promise<{ segments: ShopSegment[]; truncated: boolean }> {
  const segments: ShopSegment[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer: z.infer<typeof segmentsAnswer> = await adminData(shop, segmentsAnswer, SEGMENTS_QUERY, { after }, MERCHANT_WAITING);
    segments.push(...answer.segments.nodes);
    const info = answer.segments.pageInfo;
    if (!info.hasNextPage || !info.endCursor) return { segments, truncated: false };
    after = info.endCursor;
  }
  return { segments, truncated: true };
}

export async function mirroredSegments(shop: string): Promise<MirroredSegmentRow[]> {
  const rows = await prisma().mirroredSegment.findMany({
    where: { shop },
    select: { segmentId: true, name: true, tag: true, pickedAt: true, importStatus: true, importTotal: true, importDone: true, importError: true },
    orderBy: { pickedAt: "asc" },
  });
  const outcomes = await importOutcomes(shop, rows);
  return rows.map(({ pickedAt: _, ...r }) => ({
    ...r,
    outcome: outcomes.get(r.segmentId) ?? { tagged: 0, waiting: 0, failed: 0, skipped: [], counted: 0 },
  }));
}

/**
 * The Settings section's data; Shopify not answering still shows the picks. With picks, the
 * segment-topic subscriptions are checked too (one read; created only when missing): Shopify drops
 * them with an uninstall, and the picks outlive it.
 */
export async function segmentChoices(shop: string): Promise<SegmentChoices> {
  const picked = await mirroredSegments(shop);
  if (picked.length) {
    await syncSegmentSubscriptions(shop, true).catch((error: unknown) =>
      logger().warn({ shop, err: messageOf(error) }, "could not check the segment webhook subscriptions"),
    );
  }
  try {
    const { segments, truncated } = await listShopSegments(shop);
    return { available: segments, truncated, problem: null, picked };
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "could not list the store's segments");
    return { available: null, truncated: false, problem: "Shopify did not answer with your segments. Reload the page to try again.", picked };
  }
}

export type SaveSegmentsResult = { ok: true; picked: MirroredSegmentRow[] } | { ok: false; error: string };

const pickSchema = z.array(z.string().trim().regex(/^gid:\/\/shopify\/Segment\/\d+$/, { error: "Not a Shopify segment id." })).max(1_000);

/**
 * Saves the picked segments (form values `segment`, Shopify segment gids). A segment kept keeps
 * its tag; a new one gets `segmentTag(name)`, made unique among the shop's picks (a segment
 * renamed since it was picked may have left its old name's tag to another). A segment must be one
 * of the store's (listed now) or already picked (deleted in Shopify since: it can still be kept).
 */
export async function saveSegmentChoice(shop: string, form: FormData): Promise<SaveSegmentsResult> {
  const ids = pickSchema.safeParse([...new Set(form.getAll("segment").map(String))]);
  if (!ids.success) return { ok: false, error: ids.error.issues[0]?.message ?? "Invalid segment choice." };
  const before = new Map((await mirroredSegments(shop)).map((r) => [r.segmentId, r]));
  const newIds = ids.data.filter((id) => !before.has(id));
  let listed = new Map<string, ShopSegment>();
  if (newIds.length) {
    try {
      listed = new Map((await listShopSegments(shop)).segments.map((s) => [s.id, s]));
    } catch (error) {
      logger().warn({ shop, err: messageOf(error) }, "could not list the store's segments");
      return { ok: false, error: "Shopify did not answer with your segments, so the new choice could not be checked. Try again." };
    }
    const unknown = newIds.find((id) => !listed.has(id));
    if (unknown) return { ok: false, error: `Segment ${unknown} is not one of your store's segments.` };
  }
  const dropped = [...before.keys()].filter((id) => !ids.data.includes(id));
  return applyPicks(shop, newIds.map((id) => listed.get(id)!), dropped, ids.data.filter((id) => before.has(id)).map((id) => before.get(id)!.tag));
}

/**
 * Adds `added` to the shop's picks and removes `dropped`, then reconciles the segment webhook
 * subscriptions: the one way a pick is made, from Settings or from the segment action extension.
 * `taken`: the tags of the picks that stay.
 */
async function applyPicks(shop: string, added: ShopSegment[], dropped: string[], taken: string[]): Promise<SaveSegmentsResult> {
  const tags = new Set(taken);
  const rows = added.map((segment) => {
    let tag = segmentTag(segment.name);
    if (tags.has(tag)) tag = `${tag} (${gidNumber(segment.id) ?? segment.id})`;
    tags.add(tag);
    return { shop, segmentId: segment.id, name: segment.name, tag };
  });
  // Each step is idempotent: a save cut short is completed by saving again.
  if (dropped.length) await prisma().mirroredSegment.deleteMany({ where: { shop, segmentId: { in: dropped } } });
  if (rows.length) await prisma().mirroredSegment.createMany({ data: rows, skipDuplicates: true });
  logger().info({ shop, added: rows.length, dropped: dropped.length }, "mirrored segments saved");
  const picked = await mirroredSegments(shop);
  try {
    const change = await syncSegmentSubscriptions(shop, picked.length > 0);
    if (change.created.length || change.deleted.length) logger().info({ shop, ...change }, "segment webhook subscriptions changed");
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "could not change the segment webhook subscriptions");
    return { ok: false, error: "Your choice is saved, but Shopify could not be asked to send (or stop sending) segment changes. Save again to retry." };
  }
  return { ok: true, picked };
}

/** A Shopify customer segment id, as the Admin API and the admin's extensions give it. */
export const segmentIdSchema = z.string().trim().regex(/^gid:\/\/shopify\/Segment\/\d+$/, { error: "Not a Shopify segment id." });

// One segment by id (1 point): the extension names any segment of the store, also past the
// 1,000 that Settings lists.
const SEGMENT_QUERY = `#graphql
  query ShopSegment($id: ID!) {
    segment(id: $id) { id name }
  }`;

const segmentAnswer = z.object({ segment: z.object({ id: z.string(), name: z.string() }).nullable() });

export type MirrorSegmentResult =
  | { ok: true; segment: MirroredSegmentRow; added: boolean }
  | { ok: false; reason: "unknown_segment" | "shopify_unavailable"; error: string };

/**
 * Starts mirroring one segment (the segment action extension's "Sync as a tag"), keeping the
 * shop's other picks: a segment already picked keeps its tag; a new one is picked as Settings
 * picks it (tag, member import, webhook subscriptions).
 */
export async function mirrorSegment(shop: string, segmentId: string): Promise<MirrorSegmentResult> {
  const before = await mirroredSegments(shop);
  const existing = before.find((r) => r.segmentId === segmentId);
  let added: ShopSegment[] = [];
  if (!existing) {
    let found: ShopSegment | null;
    try {
      found = (await adminData(shop, segmentAnswer, SEGMENT_QUERY, { id: segmentId }, MERCHANT_WAITING)).segment;
    } catch (error) {
      logger().warn({ shop, err: messageOf(error) }, "could not read the segment from Shopify");
      return { ok: false, reason: "shopify_unavailable", error: "Shopify did not answer with this segment. Try again." };
    }
    if (!found) return { ok: false, reason: "unknown_segment", error: `Segment ${segmentId} is not one of your store's segments.` };
    added = [found];
  }
  // An existing pick is saved again too: the subscriptions are put back if Shopify dropped them.
  const saved = await applyPicks(shop, added, [], before.map((r) => r.tag));
  if (!saved.ok) return { ok: false, reason: "shopify_unavailable", error: saved.error };
  const segment = saved.picked.find((r) => r.segmentId === segmentId);
  if (!segment) return { ok: false, reason: "shopify_unavailable", error: "The segment was not saved. Try again." };
  return { ok: true, segment, added: !existing };
}

/** One segment's pick, or null (the extension shows whether its segment is mirrored). */
export async function mirroredSegment(shop: string, segmentId: string): Promise<MirroredSegmentRow | null> {
  return (await mirroredSegments(shop)).find((r) => r.segmentId === segmentId) ?? null;
}

/** Settings' "Try again" on a failed member import (form value `segment`). */
export async function retryMemberImport(shop: string, form: FormData): Promise<SaveSegmentsResult> {
  const id = segmentIdSchema.safeParse(String(form.get("segment") ?? ""));
  if (!id.success) return { ok: false, error: id.error.issues[0]?.message ?? "Invalid segment." };
  if (!(await retrySegmentImport(shop, id.data))) return { ok: false, error: "That segment has no failed import to try again." };
  logger().info({ shop, segment: id.data }, "segment member import retried");
  return { ok: true, picked: await mirroredSegments(shop) };
}
