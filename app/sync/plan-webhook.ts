/**
 * planWebhook: THE entry point. Shopify webhook (topic + body) → the service calls to make, the
 * state to remember, and abandonment-timer instructions. Pure: no I/O, no clock (ctx.now).
 */
import { normalizeTopic, topicInfo, topicsWithRole } from "./topics.server";
import { parseShopifyJson } from "./json";
import type { SyncContext, SyncPlan } from "./plan-contract";

export { STORE_ACTOR_PREFIX, storeActorReferenceId } from "./mappers/common";
export { mapAbandonedCheckout } from "./mappers/checkouts";

export { InvalidPayloadError } from "./topic-planner";

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
