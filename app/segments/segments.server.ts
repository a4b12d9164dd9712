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
 * Shopify sends the two segment topics only to subscriptions made through the Admin API: every save
 * subscribes the shop to them while a segment is picked and removes them when none is
 * (webhook-subscriptions.server.ts).
 */
import { z } from "zod";
import { prisma } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { gidNumber } from "../sync/payloads";
import { retrySegmentImport } from "./member-import.server";
import { syncSegmentSubscriptions } from "./webhook-subscriptions.server";

/** The Shopify admin's GraphQL client, as authenticate.admin hands it out. */
export interface SegmentsAdmin {
  graphql(query: string, options?: { variables?: Record<string, unknown>; signal?: AbortSignal }): Promise<Response>;
}

/** Pages read at most (1,000 segments); a store with more is told so. */
const MAX_PAGES = 4;
/** Page loads must not hang on Shopify. */
const TIMEOUT_MS = 8_000;

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
  data: z.object({
    segments: z.object({
      nodes: z.array(z.object({ id: z.string(), name: z.string() })),
      pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
    }),
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
export async function listShopSegments(admin: SegmentsAdmin): Promise<{ segments: ShopSegment[]; truncated: boolean }> {
  const segments: ShopSegment[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const response = await admin.graphql(SEGMENTS_QUERY, { variables: { after }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const answer = segmentsAnswer.parse(await response.json());
    segments.push(...answer.data.segments.nodes);
    const info = answer.data.segments.pageInfo;
    if (!info.hasNextPage || !info.endCursor) return { segments, truncated: false };
    after = info.endCursor;
  }
  return { segments, truncated: true };
}

export async function mirroredSegments(shop: string): Promise<MirroredSegmentRow[]> {
  return prisma().mirroredSegment.findMany({ where: { shop }, select: { segmentId: true, name: true, tag: true, importStatus: true, importTotal: true, importDone: true, importError: true },
    orderBy: { pickedAt: "asc" } });
}

/**
 * Per shop, the mirrored segments' tags by numeric segment id (the form the webhook's
 * `segment_id` takes after parsing): the planning context.
 */
export async function segmentTagsOf(shops: string[]): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  if (!shops.length) return out;
  const rows = await prisma().mirroredSegment.findMany({ where: { shop: { in: shops } }, select: { shop: true, segmentId: true, tag: true } });
  for (const r of rows) {
    const tags = out.get(r.shop) ?? {};
    tags[gidNumber(r.segmentId) ?? r.segmentId] = r.tag;
    out.set(r.shop, tags);
  }
  return out;
}

/**
 * The Settings section's data; Shopify not answering still shows the picks. With picks, the
 * segment-topic subscriptions are checked too (one read; created only when missing): Shopify drops
 * them with an uninstall, and the picks outlive it.
 */
export async function segmentChoices(admin: SegmentsAdmin, shop: string): Promise<SegmentChoices> {
  const picked = await mirroredSegments(shop);
  if (picked.length) {
    await syncSegmentSubscriptions(admin, true).catch((error: unknown) =>
      logger().warn({ shop, err: messageOf(error) }, "could not check the segment webhook subscriptions"),
    );
  }
  try {
    const { segments, truncated } = await listShopSegments(admin);
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
export async function saveSegmentChoice(admin: SegmentsAdmin, shop: string, form: FormData): Promise<SaveSegmentsResult> {
  const ids = pickSchema.safeParse([...new Set(form.getAll("segment").map(String))]);
  if (!ids.success) return { ok: false, error: ids.error.issues[0]?.message ?? "Invalid segment choice." };
  const before = new Map((await mirroredSegments(shop)).map((r) => [r.segmentId, r]));
  const newIds = ids.data.filter((id) => !before.has(id));
  let listed = new Map<string, ShopSegment>();
  if (newIds.length) {
    try {
      listed = new Map((await listShopSegments(admin)).segments.map((s) => [s.id, s]));
    } catch (error) {
      logger().warn({ shop, err: messageOf(error) }, "could not list the store's segments");
      return { ok: false, error: "Shopify did not answer with your segments, so the new choice could not be checked. Try again." };
    }
    const unknown = newIds.find((id) => !listed.has(id));
    if (unknown) return { ok: false, error: `Segment ${unknown} is not one of your store's segments.` };
  }
  const taken = new Set(ids.data.filter((id) => before.has(id)).map((id) => before.get(id)!.tag));
  const added = newIds.map((id) => {
    const segment = listed.get(id)!;
    let tag = segmentTag(segment.name);
    if (taken.has(tag)) tag = `${tag} (${gidNumber(id) ?? id})`;
    taken.add(tag);
    return { shop, segmentId: id, name: segment.name, tag };
  });
  const dropped = [...before.keys()].filter((id) => !ids.data.includes(id));
  // Each step is idempotent: a save cut short is completed by saving again.
  if (dropped.length) await prisma().mirroredSegment.deleteMany({ where: { shop, segmentId: { in: dropped } } });
  if (added.length) await prisma().mirroredSegment.createMany({ data: added, skipDuplicates: true });
  logger().info({ shop, added: added.length, dropped: dropped.length }, "mirrored segments saved");
  const picked = await mirroredSegments(shop);
  try {
    const change = await syncSegmentSubscriptions(admin, picked.length > 0);
    if (change.created.length || change.deleted.length) logger().info({ shop, ...change }, "segment webhook subscriptions changed");
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "could not change the segment webhook subscriptions");
    return { ok: false, error: "Your choice is saved, but Shopify could not be asked to send (or stop sending) segment changes. Save again to retry." };
  }
  return { ok: true, picked };
}

const retrySchema = z.string().trim().regex(/^gid:\/\/shopify\/Segment\/\d+$/, { error: "Not a Shopify segment id." });

/** Settings' "Try again" on a failed member import (form value `segment`). */
export async function retryMemberImport(shop: string, form: FormData): Promise<SaveSegmentsResult> {
  const id = retrySchema.safeParse(String(form.get("segment") ?? ""));
  if (!id.success) return { ok: false, error: id.error.issues[0]?.message ?? "Invalid segment." };
  if (!(await retrySegmentImport(shop, id.data))) return { ok: false, error: "That segment has no failed import to try again." };
  logger().info({ shop, segment: id.data }, "segment member import retried");
  return { ok: true, picked: await mirroredSegments(shop) };
}
