/**
 * The segment topics (customer.joined_segment, customer.left_segment) as per-shop webhook
 * subscriptions. Shopify's topic metadata (2026-04, available_on: graphql) offers them to
 * webhookSubscriptionCreate only, not to shopify.app.toml: the app subscribes a shop to them while
 * it mirrors at least one segment, with the app's /webhooks URL as the endpoint (the route every
 * toml topic goes to), and deletes them when it mirrors none (Shopify would otherwise send every
 * segment change of the store for nothing).
 *
 * Reconciling, not toggling: the shop's subscriptions are read and only the missing or surplus
 * ones are created or deleted, so a save cut short is completed by the next one, and a changed app
 * URL moves the subscriptions to it.
 */
import { z } from "zod";
import { config } from "../config.server";
import { adminData, MERCHANT_WAITING } from "../shopify/admin-api.server";
import { topicsThroughAdminApi } from "../sync/topics.server";

/** customer.joined_segment → CUSTOMER_JOINED_SEGMENT (Shopify's WebhookSubscriptionTopic). */
export const topicEnum = (topic: string): string => topic.replace(/[/.]/g, "_").toUpperCase();

/** The segment topics, as the registry marks them (subscribed through the Admin API). */
export const SEGMENT_TOPICS = topicsThroughAdminApi().filter((t) => t.endsWith("_segment"));

// The app's own subscriptions of these topics (an app sees only its own). 2 + 10 × 1 = 12 points.
const LIST = `#graphql
  query SegmentWebhookSubscriptions {
    webhookSubscriptions(first: 10, topics: [CUSTOMER_JOINED_SEGMENT, CUSTOMER_LEFT_SEGMENT]) {
      nodes { id topic uri }
    }
  }`;

const CREATE = `#graphql
  mutation SegmentWebhookSubscriptionCreate($topic: WebhookSubscriptionTopic!, $uri: String!) {
    webhookSubscriptionCreate(topic: $topic, webhookSubscription: { uri: $uri, format: JSON }) {
      webhookSubscription { id topic uri }
      userErrors { field message }
    }
  }`;

const DELETE = `#graphql
  mutation SegmentWebhookSubscriptionDelete($id: ID!) {
    webhookSubscriptionDelete(id: $id) {
      deletedWebhookSubscriptionId
      userErrors { field message }
    }
  }`;

const subscription = z.object({ id: z.string(), topic: z.string(), uri: z.string() });
const userErrors = z.array(z.object({ field: z.array(z.string()).nullable().optional(), message: z.string() }));
const listAnswer = z.object({ webhookSubscriptions: z.object({ nodes: z.array(subscription) }) });
const createAnswer = z.object({ webhookSubscriptionCreate: z.object({ webhookSubscription: subscription.nullable(), userErrors }) });
const deleteAnswer = z.object({ webhookSubscriptionDelete: z.object({ deletedWebhookSubscriptionId: z.string().nullable(), userErrors }) });

/** Where Shopify sends the segment topics: the app's webhook route. */
export function segmentWebhookUri(): string {
  return `${config().appUrl.replace(/\/+$/, "")}/webhooks`;
}

export interface SubscriptionChange {
  created: string[];
  deleted: string[];
}

/**
 * Makes the shop's segment-topic subscriptions what `wanted` says: one per topic at the app's
 * /webhooks URL, or none. Throws when Shopify cannot be asked or refuses (its userErrors named).
 */
export async function syncSegmentSubscriptions(shop: string, wanted: boolean): Promise<SubscriptionChange> {
  const uri = segmentWebhookUri();
  // Asked while the merchant waits (Settings, the segment extension).
  const ask = <T>(schema: z.ZodType<T>, query: string, variables: Record<string, unknown> = {}) => adminData(shop, schema, query, variables, MERCHANT_WAITING);
  const existing = (await ask(listAnswer, LIST)).webhookSubscriptions.nodes;
  const keep = (s: z.infer<typeof subscription>) => wanted && s.uri === uri && SEGMENT_TOPICS.some((t) => topicEnum(t) === s.topic);
  const change: SubscriptionChange = { created: [], deleted: [] };
  if (wanted) {
    for (const topic of SEGMENT_TOPICS) {
      if (existing.some((s) => keep(s) && s.topic === topicEnum(topic))) continue;
      const answer = (await ask(createAnswer, CREATE, { topic: topicEnum(topic), uri })).webhookSubscriptionCreate;
      if (answer.userErrors.length || !answer.webhookSubscription) {
        throw new Error(`Shopify refused the ${topic} subscription: ${answer.userErrors.map((e) => e.message).join("; ") || "no subscription returned"}`);
      }
      change.created.push(topic);
    }
  }
  // Any other (none wanted, an old app URL, a duplicate): deleted.
  const seen = new Set<string>();
  for (const s of existing) {
    if (keep(s) && !seen.has(s.topic)) {
      seen.add(s.topic);
      continue;
    }
    const answer = (await ask(deleteAnswer, DELETE, { id: s.id })).webhookSubscriptionDelete;
    if (answer.userErrors.length) throw new Error(`Shopify refused to delete the ${s.topic} subscription: ${answer.userErrors.map((e) => e.message).join("; ")}`);
    change.deleted.push(s.id);
  }
  return change;
}
