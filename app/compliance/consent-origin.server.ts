/**
 * Consent is applied only for a shop's own customers. A webhook's HMAC covers its body, not the
 * X-Shopify-Shop-Domain header, and a customer body names no shop: a captured body replayed under
 * another installed shop's header would otherwise subscribe that person in that merchant's list
 * as confirmed (skipDoubleOptIn, active) — consent the person never gave to that merchant.
 *
 * So a webhook that would make a customer subscribed where the shop's stored consent is not
 * subscribed yet (a customer the shop never showed the app, or one not subscribed so far) is
 * first confirmed with that shop's Admin API: `nodes(ids:)` with the shop's own token. Customer
 * ids are Shopify-wide, so another store's customer is null there. Only a customer of the shop whose
 * email Shopify shows as SUBSCRIBED lets the delivery through; anything else records it as
 * ignored, with the reason, and plans nothing of it. One read per shop and planning batch, every
 * such customer of the batch at once (`nodes(ids:)`, up to CUSTOMERS_PER_READ ids): a sale that
 * brings a hundred new subscribers costs the shop one round trip to Shopify, not a hundred in a
 * row. Once applied, the stored consent is subscribed and later deliveries need none.
 *
 * Shopify unreachable (network, timeout, throttled): the delivery waits in the queue with backoff
 * and is never planned unconfirmed; after policy.lookupDeadlineMs it is recorded as ignored, and
 * the reconciliation sweep brings the customer's state from the Admin API later. A shop without an
 * offline token cannot be asked: its deliveries are planned as before (SECURITY.md names this).
 */
import { z } from "zod";
import { adminQuery, NoOfflineSession } from "../shopify/admin-api.server";
import { database } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import type { PipelinePolicy } from "../pipeline/policy";
import { nextTry } from "../pipeline/policy";
import { DELIVERY_OUTCOME, DELIVERY_STATUS, type ClaimedDelivery } from "../pipeline/status";

export const CONSENT_ORIGIN_QUERY = `#graphql
  query ConsentOrigin($ids: [ID!]!) { nodes(ids: $ids) { ... on Customer { id defaultEmailAddress { marketingState } } } }`;

/** Ids per read: a batch's new subscribers of one shop fit in one or two (Shopify takes up to 250). */
export const CUSTOMERS_PER_READ = 100;

/** `nodes` answers in the order of the ids asked, null for an id the shop's token does not see. */
const answerSchema = z.object({
  nodes: z.array(z.object({ id: z.string().optional(), defaultEmailAddress: z.object({ marketingState: z.string() }).nullish() }).nullable()),
});
/** customers/create|update and customers_email_marketing_consent/update carry the consent so. */
const subscribedBody = z.object({ email_marketing_consent: z.object({ state: z.literal("subscribed") }) });

interface Item {
  delivery: ClaimedDelivery;
  route: string;
  objectKey?: string;
  body?: unknown;
}

type Verdict = { ok: true } | { ok: false; refused: string } | { ok: false; failed: unknown };

/**
 * Checks the batch's webhooks that would subscribe a customer; returns the ids of the deliveries
 * it took out of the batch (recorded as ignored, or sent back to wait). Never throws.
 */
export async function confirmConsentOrigin(workerId: string, batch: Item[], policy: PipelinePolicy): Promise<Set<string>> {
  const taken = new Set<string>();
  // Objects the batch also holds from the shop's own Admin API (a lookup): the customer is the shop's.
  const fromAdmin = new Set(batch.filter((p) => p.delivery.source !== "webhook" && p.objectKey).map((p) => `${p.delivery.shop}|${p.objectKey}`));
  const candidates = batch.filter(
    (p) =>
      p.route === "sync" &&
      p.delivery.source === "webhook" &&
      p.objectKey?.startsWith("customer:") &&
      !fromAdmin.has(`${p.delivery.shop}|${p.objectKey}`) &&
      subscribedBody.safeParse(p.body).success,
  );
  if (!candidates.length) return taken;
  let subscribed: Set<string>;
  try {
    subscribed = await alreadySubscribed(candidates.map((p) => ({ shop: p.delivery.shop, key: p.objectKey! })));
  } catch (error) {
    // The database failed: nothing is planned unconfirmed; the whole check runs again later.
    for (const p of candidates) {
      await sendBack(workerId, p.delivery, policy, `consent origin could not be checked: ${messageOf(error)}`);
      taken.add(p.delivery.id);
    }
    return taken;
  }
  const budgetMs = Math.max(1_000, Math.floor(policy.leaseMs / 4));
  const unconfirmed = candidates.filter((p) => !subscribed.has(`${p.delivery.shop}|${p.objectKey}`));
  const verdicts = await verifyAll(unconfirmed.map((p) => ({ shop: p.delivery.shop, objectKey: p.objectKey! })), budgetMs);
  for (const p of unconfirmed) {
    const verdict = verdicts.get(`${p.delivery.shop}|${p.objectKey}`)!;
    if (verdict.ok) continue;
    taken.add(p.delivery.id);
    if ("refused" in verdict) {
      logger().warn({ shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id }, "consent not confirmed by the shop's Admin API; delivery ignored");
      await finish(workerId, p.delivery, p.objectKey!, verdict.refused);
      continue;
    }
    const reason = `the consent of ${p.objectKey} could not be confirmed with Shopify: ${messageOf(verdict.failed)}`;
    if (nextTry("lookup", { attempts: p.delivery.attempts, since: p.delivery.receivedAt }, policy).giveUp) {
      logger().warn({ shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id, err: messageOf(verdict.failed) }, "consent origin check failed for good");
      // Past the deadline it could not be used: listed on Problems with its reason.
      await finish(workerId, p.delivery, p.objectKey!, `gave up: ${reason}; not applied unconfirmed`, DELIVERY_OUTCOME.invalid);
    } else {
      logger().warn({ shop: p.delivery.shop, topic: p.delivery.topic, deliveryId: p.delivery.id, err: messageOf(verdict.failed) }, "consent origin check failed; will retry");
      await sendBack(workerId, p.delivery, policy, reason);
    }
  }
  // The same customer's other deliveries of the batch wait with it, so that they keep their order.
  const waiting = new Set(candidates.filter((p) => taken.has(p.delivery.id)).map((p) => `${p.delivery.shop}|${p.objectKey}`));
  for (const p of batch) {
    if (taken.has(p.delivery.id) || !waiting.has(`${p.delivery.shop}|${p.objectKey}`)) continue;
    taken.add(p.delivery.id);
    await sendBack(workerId, p.delivery, policy, `an earlier delivery of ${p.objectKey} waits for its consent to be confirmed with Shopify`);
  }
  return taken;
}

/** A verdict per `shop|objectKey`: each shop asked once per CUSTOMERS_PER_READ customers, the shops at once. */
async function verifyAll(customers: { shop: string; objectKey: string }[], maxWaitMs: number): Promise<Map<string, Verdict>> {
  const byShop = new Map<string, Set<string>>();
  for (const c of customers) byShop.set(c.shop, (byShop.get(c.shop) ?? new Set()).add(c.objectKey.slice("customer:".length)));
  const verdicts = new Map<string, Verdict>();
  await Promise.all(
    [...byShop].map(async ([shop, ids]) => {
      const all = [...ids];
      for (let start = 0; start < all.length; start += CUSTOMERS_PER_READ) {
        const part = all.slice(start, start + CUSTOMERS_PER_READ);
        const found = await verify(shop, part, maxWaitMs);
        part.forEach((id, i) => verdicts.set(`${shop}|customer:${id}`, found[i]));
      }
    }),
  );
  return verdicts;
}

/** The shop's Admin API on these customers, one verdict per id in their order. */
async function verify(shop: string, customerIds: string[], maxWaitMs: number): Promise<Verdict[]> {
  let nodes: z.infer<typeof answerSchema>["nodes"];
  try {
    const ids = customerIds.map((id) => `gid://shopify/Customer/${id}`);
    // Our estimate of the requested cost: the customer and its email address per id.
    nodes = answerSchema.parse(await adminQuery(shop, CONSENT_ORIGIN_QUERY, { ids }, { maxWaitMs, cost: 1 + 2 * ids.length })).nodes;
  } catch (error) {
    // No token to ask with: the shop cannot be asked at all (see the module's comment).
    if (error instanceof NoOfflineSession) return customerIds.map(() => ({ ok: true }));
    return customerIds.map(() => ({ ok: false, failed: error }));
  }
  return customerIds.map((customerId, i): Verdict => {
    const customer = nodes[i];
    if (!customer?.id) return { ok: false, refused: `customer ${customerId} is not a customer of this shop in Shopify (a body of another shop?): nothing applied` };
    const state = customer.defaultEmailAddress?.marketingState ?? "no email";
    if (state !== "SUBSCRIBED") return { ok: false, refused: `Shopify shows the email consent of customer ${customerId} as ${state}, not subscribed: nothing applied` };
    return { ok: true };
  });
}

/** Of these customers, the ones whose stored consent in their shop is subscribed already. */
async function alreadySubscribed(keys: { shop: string; key: string }[]): Promise<Set<string>> {
  const rows = await database().sql.query<{ shop: string; key: string }>(
    `SELECT DISTINCT o.shop, o."objectKey" AS key FROM jsonb_to_recordset($1::jsonb) AS k(shop text, key text)
       JOIN "ObjectState" o ON o.shop = k.shop AND o."objectKey" = k.key
      WHERE o.state->'consent'->>'state' = 'subscribed'`,
    [JSON.stringify(keys)],
  );
  return new Set(rows.map((r) => `${r.shop}|${r.key}`));
}

const HELD = `id = $1 AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}'`;

async function finish(
  workerId: string,
  d: ClaimedDelivery,
  objectKey: string,
  reason: string,
  outcome: typeof DELIVERY_OUTCOME.ignored | typeof DELIVERY_OUTCOME.invalid = DELIVERY_OUTCOME.ignored,
): Promise<void> {
  await database()
    .sql.query(
      `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.done}', outcome = $5, "outcomeDetail" = $3, "objectKey" = $4,
         "finishedAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL WHERE ${HELD}`,
      [d.id, workerId, reason, objectKey, outcome],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not record a delivery; its lease will expire"));
}

async function sendBack(workerId: string, d: ClaimedDelivery, policy: PipelinePolicy, reason: string): Promise<void> {
  await database()
    .sql.query(
      `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.queued}', "runAt" = now() + ($3::int * interval '1 millisecond'),
         "outcomeDetail" = $4, "lockedBy" = NULL, "lockedUntil" = NULL WHERE ${HELD}`,
      [d.id, workerId, nextTry("lookup", { attempts: d.attempts }, policy).delayMs, `waiting: ${reason}`],
    )
    .catch((e: unknown) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not release a delivery; its lease will expire"));
}
