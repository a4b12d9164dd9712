/**
 * planWebhook: THE entry point. Shopify webhook (topic + body) → the service calls to make, the
 * state to remember, and abandonment-timer instructions. Pure: no I/O, no clock (ctx.now).
 */
import { normalizeTopic, topicInfo, topicsWithRole } from "./topics.server";
import { parseShopifyJson } from "./json";
import type { SyncContext, SyncPlan } from "./plan-contract";
import type { ReadWebhook } from "./topic-planner";

export { STORE_ACTOR_PREFIX, storeActorReferenceId } from "./mappers/common";
export { mapAbandonedCheckout } from "./mappers/checkouts";

export { InvalidPayloadError, type PlanKeys, type ReadWebhook } from "./topic-planner";

/** The topics planWebhook maps to service calls (the registry's "sync" role). */
export const HANDLED_TOPICS = topicsWithRole("sync");

export { normalizeTopic };

/**
 * Plans one webhook delivery. `body` is the parsed JSON (ideally from parseShopifyJson) or the raw
 * text. Throws InvalidPayloadError for a body that does not validate; unknown topics plan nothing.
 */
export function planWebhook(topic: string, body: unknown, ctx: SyncContext): SyncPlan {
  const t = normalizeTopic(topic);
  const data = typeof body === "string" ? parseShopifyJson(body) : body;
  const entry = topicInfo(t);
  if (entry?.role === "sync") return entry.planner(data, ctx, t);
  return {
    objectKey: `unhandled:${t}`,
    objectUpdatedAt: null,
    calls: [],
    nextState: null,
    skipped: `topic ${t} is not synced`,
  };
}

/**
 * Parses one webhook delivery without planning it: the keys its plan touches (to lock and load
 * their states first), and its plan given those states. Throws as planWebhook does for a body that
 * does not validate.
 */
export function readWebhook(topic: string, body: unknown, ctx: Omit<SyncContext, "prior">): ReadWebhook {
  const t = normalizeTopic(topic);
  const data = typeof body === "string" ? parseShopifyJson(body) : body;
  const entry = topicInfo(t);
  if (entry?.role === "sync") return entry.planner.read(data, ctx, t);
  return { keys: { objectKey: `unhandled:${t}` }, plan: (full) => planWebhook(t, data, full) };
}
