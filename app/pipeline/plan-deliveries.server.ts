import { database } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import type { ServiceCall } from "../services/marketing/schemas";
import { shopContexts, type ShopContext } from "../shops/connection.server";
import type { Installation } from "../shops/installation.server";
import { parseShopifyJson } from "../sync/json";
import type { ShopSettings } from "../sync/settings";
import { readWebhook, type ReadWebhook } from "../sync/plan-webhook";
import { objectSyncStateSchema, type AbandonmentInstruction, type SyncContext, type SyncPlan } from "../sync/plan-contract";
import { BACKGROUND_SOURCES, SILENT_SOURCES, sourceSql } from "../sync/sources";
import { kindOf, topicInfo, topicsWithRole } from "../sync/topics.server";
import { applyAbandonment } from "./abandonment.server";
import { claimCursor, claimRows, fairShareCandidates, nextCursor, setClaimCursor } from "./claim.server";
import { bumpCounters, type CounterDelta } from "./counters.server";
import { decide, type ObjectMemory } from "./decide";
import { nextTry, type PipelinePolicy } from "./policy";
import { DELIVERY_OUTCOME, DELIVERY_STATUS, type ClaimedDelivery, type DeliveryOutcome } from "./status";
import { messageOf } from "../errors";

/** A claimed delivery after the work that needs no database: parsing, and the keys its plan touches. */
export type Prepared =
  | { delivery: ClaimedDelivery; route: "sync"; body: unknown; objectKey: string; read: ReadWebhook }
  | { delivery: ClaimedDelivery; route: "lifecycle"; body: unknown }
  | { delivery: ClaimedDelivery; route: "compliance"; body: unknown }
  | { delivery: ClaimedDelivery; route: "bulk"; body: unknown }
  | { delivery: ClaimedDelivery; route: "invalid"; reason: string };

type Outcome = "handled" | "ignored" | "invalid";

/**
 * What planning hands to others for what it does not do itself: the topics of the registry's
 * other roles, and the Admin API look-ups that complete a batch before it is planned. The job
 * table (app/jobs) passes the features' handlers; the engine imports none of them.
 */
export interface TopicHandlers {
  /** Webhooks Shopify cut short, completed from its Admin API (re-prepared with `prepare`). */
  completeWebhooks(workerId: string, batch: Prepared[], policy: PipelinePolicy, prepare: (d: ClaimedDelivery) => Prepared): Promise<Prepared[]>;
  /** Objects a webhook needs that were never synced, fetched and planned just before it. */
  fetchUnknownObjects(workerId: string, batch: Prepared[], policy: PipelinePolicy, prepare: (d: ClaimedDelivery) => Prepared): Promise<Prepared[]>;
  /** Lifecycle topics confirmed with Shopify before the transaction; `failed` ones are retried. */
  confirmLifecycle(deliveries: ClaimedDelivery[]): Promise<{ confirmed: Map<string, Installation>; failed: Map<string, unknown> }>;
  /** Consent for a customer the shop never showed: the ids of the deliveries it took out of the batch. */
  confirmConsentOrigin(workerId: string, batch: Prepared[], policy: PipelinePolicy): Promise<Set<string>>;
  lifecycle(
    tx: SqlQueryable,
    d: { shop: string; topic: string; triggeredAt: Date | null; body: unknown; installation?: Installation },
  ): Promise<{ outcome: Outcome; detail: string | null }>;
  compliance(
    tx: SqlQueryable,
    d: { id: string; shop: string; topic: string; body: unknown; triggeredAt: Date | null },
    settings: ShopSettings,
  ): Promise<{ outcome: Outcome; detail: string; calls: { objectKey: string; call: ServiceCall }[] }>;
  /** A bulk operation finished: true when a history import waited for it. */
  bulk(tx: SqlQueryable, shop: string, body: unknown): Promise<boolean>;
}

interface Finished {
  delivery: ClaimedDelivery;
  outcome: DeliveryOutcome;
  detail: string | null;
  objectKey: string | null;
}

interface QueuedCall {
  /** Planned from imported history: sent after the shop's live calls. */
  background: boolean;
  shop: string;
  objectKey: string;
  kind: string;
  call: ServiceCall;
  deliveryId: string;
}

/**
 * A privacy request is planned once the deliveries of its shop received before it are out of the
 * way: a redaction planned beside (or while another worker plans) the customer's earlier webhooks
 * would run before their calls, object state and timers are written, and leave them behind. So it
 * waits for those being planned (running) and for those due and never tried, which the next passes
 * plan. It does not wait for a delivery that was tried and waits for a retry (Shopify cannot give
 * an object, a consent check): that can take hours, and Shopify gives an app 30 days to act on a
 * redaction; the redaction deletes such a delivery when it names the customer (app/compliance).
 * Compliance topics are rare, so the check costs the other deliveries nothing (the OR stops at the topic).
 */
const COMPLIANCE_WAITS_FOR_EARLIER = `q.topic <> ALL(ARRAY[${topicsWithRole("compliance").map((t) => `'${t}'`).join(", ")}]::text[])
  OR NOT EXISTS (SELECT 1 FROM "WebhookDelivery" e
                  WHERE e.shop = q.shop AND (e."receivedAt", e.id) < (q."receivedAt", q.id)
                    AND (e.status = '${DELIVERY_STATUS.running}'
                         OR (e.status = '${DELIVERY_STATUS.queued}' AND e.attempts = 0 AND e."runAt" <= now())))`;

/**
 * Up to `units` planning units at once: each unit that claims a full batch starts the next, so a
 * unit waiting for Shopify's answers does not hold the queue behind it; a short batch means the
 * queue is drained and starts none. Resolves with the deliveries claimed once every unit is done.
 */
export function planUnits(
  workerId: string,
  policy: PipelinePolicy,
  handlers: TopicHandlers,
  units: number,
  callsPlanned?: (shops: Set<string>) => void,
): Promise<number> {
  let started = 0;
  const unit = async (): Promise<number> => {
    started++;
    let next: Promise<number> = Promise.resolve(0);
    const claimed = (count: number) => {
      if (count >= policy.planBatchSize && started < units) next = unit();
    };
    // A unit that fails still waits for the one it started, so that no failure goes unheard.
    const own = await planDeliveries(workerId, policy, handlers, { callsPlanned, claimed }).catch((error: unknown) =>
      next.then(
        () => Promise.reject(error as Error),
        () => Promise.reject(error as Error),
      ),
    );
    return own + (await next);
  };
  return unit();
}

export interface PlanningHooks {
  /** Told, as each transaction commits, which shops it planned calls for (the delivery lane claims them). */
  callsPlanned?: (shops: Set<string>) => void;
  /** Told how many deliveries the unit claimed, before it plans them. */
  claimed?: (count: number) => void;
}

/**
 * Turns recorded deliveries into service calls: claim a batch, prepare each delivery (parse, plan),
 * then decide and persist the batch in one transaction. Per Shopify object, planning is serialised
 * (advisory locks on the object keys, taken in sorted order) and applied in order of the object's
 * updated_at (see decide()). A delivery that cannot be used is recorded as invalid with its reason;
 * it never holds its neighbours: a batch that fails as a whole is retried one delivery at a time.
 */
export async function planDeliveries(workerId: string, policy: PipelinePolicy, handlers: TopicHandlers, hooks: PlanningHooks = {}): Promise<number> {
  const { callsPlanned = () => undefined, claimed: onClaimed = () => undefined } = hooks;
  const cursor = claimCursor("WebhookDelivery", workerId);
  // fairShareShops 0: first come, first served across shops (benchmarks compare against it).
  const fifo = policy.fairShareShops <= 0;
  const claimed = await claimRows<ClaimedDelivery>({
    table: "WebhookDelivery",
    workerId,
    limit: policy.planBatchSize,
    leaseMs: policy.leaseMs,
    due: `q.status = '${DELIVERY_STATUS.queued}' AND q."runAt" <= now()`,
    // Shared between shops round-robin; within a shop, live webhooks before imported history.
    dueCandidates: fifo ? undefined : fairShareCandidates({
      table: "WebhookDelivery",
      due: `q."runAt" <= now() AND (${COMPLIANCE_WAITS_FOR_EARLIER})`,
      orderBy: `(q.source <> ${sourceSql("webhook")}), q."receivedAt", q.id`,
      cursor: "$4",
      maxShops: "$5::int",
    }),
    params: fifo ? [] : [cursor, Math.max(1, Math.min(policy.planBatchSize, policy.fairShareShops))],
    paramTypes: fifo ? [] : ["text", "int"],
    // Deliveries whose lease ran out (a worker died): looked for now and then, oldest first.
    where: COMPLIANCE_WAITS_FOR_EARLIER,
    orderBy: `q."receivedAt", q.id`,
    key: "id",
    returning: `id, "receivedAt" AT TIME ZONE 'UTC' AS "receivedAt", "triggeredAt" AT TIME ZONE 'UTC' AS "triggeredAt",
      shop, topic, "eventId", "rawBody", attempts, source`,
  });
  onClaimed(claimed.length);
  if (!claimed.length) return 0;
  setClaimCursor("WebhookDelivery", workerId, nextCursor(cursor, claimed.map((d) => d.shop)));
  // UPDATE … RETURNING does not keep the subquery's order.
  claimed.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || a.id.localeCompare(b.id));

  const now = new Date();
  // One query for every shop of the batch: a fair batch spans many shops.
  const contexts = await shopContexts([...new Set(claimed.map((d) => d.shop))]);
  const prepare1 = (d: ClaimedDelivery) => prepare(d, syncContext(contexts.get(d.shop)!, now));
  // Webhooks Shopify cut short are completed, and those that need an object never synced get it
  // fetched, from Shopify first (app/backfill).
  const completed = await handlers.completeWebhooks(workerId, claimed.map(prepare1), policy, prepare1);
  const fetched = await handlers.fetchUnknownObjects(workerId, completed, policy, prepare1);
  // Uninstalls and scope changes are acted on only as Shopify confirms them (app/shops/installation.server.ts).
  const { confirmed, failed } = await handlers.confirmLifecycle(fetched.flatMap((p) => (p.route === "lifecycle" ? [p.delivery] : [])));
  for (const p of fetched) if (failed.has(p.delivery.id)) await releaseForRetry(workerId, p.delivery, failed.get(p.delivery.id), policy);
  // Consent for a customer the shop never showed the app is confirmed by its Admin API first (a body replayed under another shop).
  const unconfirmed = await handlers.confirmConsentOrigin(workerId, fetched, policy);
  const prepared = fetched.filter((p) => !failed.has(p.delivery.id) && !unconfirmed.has(p.delivery.id));
  if (!prepared.length) return claimed.length;

  const planned = (callShops: Set<string>) => callShops.size && callsPlanned(callShops);
  for (const group of fewFirst(prepared)) {
    try {
      planned(await persist(workerId, group, contexts, now, handlers, confirmed));
    } catch (error) {
      if (group.length === 1) {
        await releaseForRetry(workerId, group[0].delivery, error, policy);
      } else {
        // One bad item (a value the database refuses, say) must not hold its neighbours.
        logger().warn({ err: messageOf(error), deliveries: group.length }, "planning a batch failed; planning one by one");
        for (const one of group) {
          await persist(workerId, [one], contexts, now, handlers, confirmed).then(planned, (e) => releaseForRetry(workerId, one.delivery, e, policy));
        }
      }
    }
  }
  return claimed.length;
}

/** A shop with more deliveries than this in one batch is planned after the shops with fewer. */
const MANY_IN_A_BATCH = 16;

/**
 * The batch as transactions: the shops with a few deliveries first, in a transaction of their own,
 * then the shops with many. A fair batch during one shop's flood is 127 of its deliveries and one
 * of another shop's, which then waited for all 128 to be planned (a transaction of 0.3–1 s on
 * PGlite) before its calls could be claimed. A shop's deliveries stay in one transaction, in order.
 */
function fewFirst(batch: Prepared[]): Prepared[][] {
  const perShop = new Map<string, number>();
  for (const p of batch) perShop.set(p.delivery.shop, (perShop.get(p.delivery.shop) ?? 0) + 1);
  const few = batch.filter((p) => perShop.get(p.delivery.shop)! <= MANY_IN_A_BATCH);
  const many = batch.filter((p) => perShop.get(p.delivery.shop)! > MANY_IN_A_BATCH);
  return few.length && many.length ? [few, many] : [batch];
}

/** Events of a history import are stored without starting automations (spec: `silent`). */
function silenced(plan: SyncPlan): SyncPlan {
  return {
    ...plan,
    calls: plan.calls.map((call) =>
      call.op === "event" || call.op === "event.custom" ? ({ ...call, body: { ...call.body, silent: true } } as ServiceCall) : call,
    ),
  };
}

function syncContext(c: ShopContext, now: Date): Omit<SyncContext, "prior"> {
  return { shopDomain: c.domain, storefrontUrl: c.storefrontUrl, currency: c.currency, settings: c.settings, segmentTags: c.segmentTags, now };
}

/**
 * Parsing, and the keys a sync delivery's plan touches (what to lock and load): the mapper runs
 * once, in persist(), with the states loaded. Never throws.
 */
function prepare(delivery: ClaimedDelivery, ctx: Omit<SyncContext, "prior">): Prepared {
  const role = topicInfo(delivery.topic)?.role;
  try {
    const body = parseShopifyJson(delivery.rawBody);
    if (role && role !== "sync") return { delivery, route: role, body };
    const read = readWebhook(delivery.topic, body, ctx);
    return { delivery, route: "sync", body, objectKey: read.keys.objectKey, read };
  } catch (error) {
    // A body that does not parse or validate is the delivery's fault, not the batch's: it is
    // recorded as invalid, once.
    return { delivery, route: "invalid", reason: messageOf(error) };
  }
}

async function persist(
  workerId: string,
  batch: Prepared[],
  contexts: Map<string, ShopContext>,
  now: Date,
  handlers: TopicHandlers,
  installations: Map<string, Installation> = new Map(),
): Promise<Set<string>> {
  const finished: Finished[] = [];
  const callShops = new Set<string>();
  await database().sql.transaction(async (tx) => {
    // Fencing: a worker whose lease ran out plans nothing; the rows locked here cannot be taken over.
    const owned = new Set(
      (
        await tx.query<{ id: string }>(
          `SELECT id FROM "WebhookDelivery" WHERE id = ANY($1::text[]) AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}' FOR UPDATE`,
          [batch.map((p) => p.delivery.id), workerId],
        )
      ).map((r) => r.id),
    );
    const mine = batch.filter((p) => owned.has(p.delivery.id));
    if (mine.length < batch.length) logger().warn({ worker: workerId, lost: batch.length - mine.length }, "lease lost before planning; left to the new owner");

    // An object a plan reads (the kept customer of a merge) is locked and loaded with it; a
    // subscription also locks its customer: the customer event's subscriptions[] lists every
    // contract of the customer, so two of them (or the customer) are never planned side by side.
    const keys = [
      ...new Set(
        mine.flatMap((p) => {
          if (p.route !== "sync") return [];
          const customer = customerOf(p);
          return [
            p.objectKey,
            ...(p.read.keys.relatedKeys ?? []),
            ...(customer && !p.objectKey.startsWith("customer:") ? [`customer:${customer}`] : []),
          ].map((k) => `${p.delivery.shop}|${k}`);
        }),
      ),
    ].sort();
    if (keys.length) {
      await tx.query(
        `SELECT count(pg_advisory_xact_lock(hashtext(k)))::int AS n FROM (SELECT k FROM unnest($1::text[]) AS k ORDER BY k) s`,
        [keys],
      );
    }
    const objects = await loadObjects(tx, keys);
    await loadCustomerSubscriptions(tx, mine, objects);
    const touched = new Set<string>();
    const calls: QueuedCall[] = [];
    const abandonments: { shop: string; instruction: AbandonmentInstruction; source: string }[] = [];

    for (const p of mine) {
      const { delivery } = p;
      const shop = contexts.get(delivery.shop)!;
      if (p.route === "invalid") {
        finished.push({ delivery, outcome: DELIVERY_OUTCOME.invalid, detail: p.reason, objectKey: null });
        continue;
      }
      if (p.route === "lifecycle") {
        const result = await handlers.lifecycle(tx, { ...delivery, body: p.body, installation: installations.get(delivery.id) });
        finished.push({ delivery, outcome: DELIVERY_OUTCOME[result.outcome], detail: result.detail, objectKey: null });
        continue;
      }
      if (p.route === "compliance") {
        const result = await handlers.compliance(tx, { ...delivery, body: p.body }, shop.settings);
        for (const c of result.calls) calls.push({ background: false, shop: delivery.shop, objectKey: c.objectKey, kind: kindOf(c.objectKey), call: c.call, deliveryId: delivery.id });
        finished.push({ delivery, outcome: DELIVERY_OUTCOME[result.outcome], detail: result.detail, objectKey: null });
        continue;
      }
      if (p.route === "bulk") {
        const woken = await handlers.bulk(tx, delivery.shop, p.body);
        finished.push({
          delivery,
          outcome: woken ? DELIVERY_OUTCOME.handled : DELIVERY_OUTCOME.ignored,
          detail: woken ? "history import: export ready" : "no history import waits for this bulk operation",
          objectKey: null,
        });
        continue;
      }

      const key = `${delivery.shop}|${p.objectKey}`;
      const memory = objects.get(key);
      // State written by an older version of the mappers that no longer parses counts as none.
      const prior = objectSyncStateSchema.safeParse(memory?.state);
      const related = Object.fromEntries(
        (p.read.keys.relatedKeys ?? []).map((k) => [k, objectSyncStateSchema.safeParse(objects.get(`${delivery.shop}|${k}`)?.state).data ?? null]),
      );
      const customer = customerOf(p);
      const customerSubscriptions = customer ? subscriptionsOf(objects, delivery.shop, customer, p.objectKey) : [];
      let plan: SyncPlan;
      try {
        plan = p.read.plan({ ...syncContext(shop, now), prior: prior.success ? prior.data : null, related, customerSubscriptions });
        if (plan.objectKey !== p.objectKey) throw new Error(`planned as ${plan.objectKey}, locked as ${p.objectKey}: the topic's keys disagree with its mapper`);
      } catch (error) {
        // A mapper that throws on an object with no state throws on its body alone: recorded
        // against no object, as a body that does not validate.
        const none = !prior.success && Object.values(related).every((r) => r === null) && customerSubscriptions.length === 0;
        finished.push({ delivery, outcome: DELIVERY_OUTCOME.invalid, detail: messageOf(error), objectKey: none ? null : p.objectKey });
        continue;
      }
      if (!shop.connected) {
        // Nothing piles up for a shop that never connected (a late connection would otherwise
        // fire months-old reminders): its first connection imports the history instead. Read
        // with the shop's context before the transaction: a connection made meanwhile imports
        // this too, and a disconnection is seen again when the calls are delivered.
        finished.push({ delivery, outcome: DELIVERY_OUTCOME.ignored, detail: NOT_CONNECTED, objectKey: p.objectKey });
        continue;
      }
      const decision = decide(SILENT_SOURCES.has(delivery.source) ? silenced(plan) : plan, memory);
      finished.push({ delivery, outcome: decision.outcome, detail: decision.detail, objectKey: p.objectKey });
      if (!decision.next) continue;
      for (const call of decision.calls) {
        calls.push({ background: BACKGROUND_SOURCES.has(delivery.source), shop: delivery.shop, objectKey: p.objectKey, kind: kindOf(p.objectKey), call, deliveryId: delivery.id });
      }
      objects.set(key, decision.next);
      touched.add(key);
      if (decision.abandonment) abandonments.push({ shop: delivery.shop, instruction: decision.abandonment, source: p.objectKey });
    }

    for (const call of calls) callShops.add(call.shop);
    if (calls.length) {
      await tx.query(
        // Ids follow plan order: an object's calls are delivered in id order.
        `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, "deliveryId", background)
           SELECT r.shop, r."objectKey", r.kind, r.call, r."deliveryId", r.background
             FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (shop text, "objectKey" text, kind text, call jsonb, "deliveryId" text, background boolean))
                  WITH ORDINALITY AS r(shop, "objectKey", kind, call, "deliveryId", background, n)
            ORDER BY r.n`,
        [JSON.stringify(calls)],
      );
    }
    await saveObjects(tx, objects, touched);
    for (const a of abandonments) {
      await applyAbandonment(tx, a.shop, a.instruction, contexts.get(a.shop)!.settings, now, a.source);
    }
    await finishDeliveries(tx, finished);
    await bumpCounters(
      finished
        // shop/redact leaves no row of the shop behind, not even a counter.
        .filter((f) => f.outcome !== DELIVERY_OUTCOME.planned && f.delivery.topic !== "shop/redact")
        .map((f): CounterDelta => ({
          shop: f.delivery.shop,
          kind: kindOf(f.delivery.topic),
          ...(f.outcome === DELIVERY_OUTCOME.invalid ? { unusable: 1 } : { skipped: 1 }),
        })),
      tx,
    );
  });
  for (const f of finished) {
    const log = { shop: f.delivery.shop, topic: f.delivery.topic, eventId: f.delivery.eventId, deliveryId: f.delivery.id, outcome: f.outcome };
    if (f.outcome === DELIVERY_OUTCOME.invalid) logger().warn({ ...log, reason: f.detail }, "delivery recorded as invalid");
    else logger().debug(log, "delivery planned");
  }
  return callShops;
}

/**
 * A delivery whose planning failed for a reason outside the delivery's control (a database
 * hiccup, a bug): tried again later with backoff; after maxPlanAttempts it is recorded as invalid
 * with the reason, so it is never re-claimed forever.
 */
async function releaseForRetry(workerId: string, d: ClaimedDelivery, error: unknown, policy: PipelinePolicy): Promise<void> {
  const message = messageOf(error);
  const next = nextTry("planning", { attempts: d.attempts, permanent: isRefusedData(error) }, policy);
  const giveUp = next.giveUp;
  logger().error({ shop: d.shop, topic: d.topic, deliveryId: d.id, attempt: d.attempts, err: message }, giveUp ? "planning failed; delivery recorded as invalid" : "planning failed; will retry");
  const fenced = `id = $1 AND "lockedBy" = $2 AND status = '${DELIVERY_STATUS.running}'`;
  await database()
    .sql.query(
      giveUp
        ? `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.done}', outcome = '${DELIVERY_OUTCOME.invalid}', "outcomeDetail" = $3,
             "finishedAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL WHERE ${fenced}`
        : `UPDATE "WebhookDelivery" SET status = '${DELIVERY_STATUS.queued}', "runAt" = now() + ($4::int * interval '1 millisecond'),
             "outcomeDetail" = $3, "lockedBy" = NULL, "lockedUntil" = NULL WHERE ${fenced}`,
      giveUp ? [d.id, workerId, `planning failed: ${message}`] : [d.id, workerId, message, next.delayMs],
    )
    .catch((e) => logger().error({ deliveryId: d.id, err: messageOf(e) }, "could not release a delivery; its lease will expire"));
}

const NOT_CONNECTED = "shop not connected to the marketing service: its next connection imports the history instead";

async function loadObjects(tx: SqlQueryable, keys: string[]): Promise<Map<string, ObjectMemory>> {
  const objects = new Map<string, ObjectMemory>();
  if (!keys.length) return objects;
  const rows = await tx.query<{ shop: string; objectKey: string; lastUpdatedAt: Date | null; contentHashes: unknown; state: unknown }>(
    `SELECT o.shop, o."objectKey", o."lastUpdatedAt" AT TIME ZONE 'UTC' AS "lastUpdatedAt", o."contentHashes", o.state
       FROM "ObjectState" o JOIN unnest($1::text[], $2::text[]) AS k(shop, key) ON o.shop = k.shop AND o."objectKey" = k.key`,
    // Shop and key apart, so the primary key finds them (a joined string scanned the whole table).
    [keys.map((k) => k.slice(0, k.indexOf("|"))), keys.map((k) => k.slice(k.indexOf("|") + 1))],
  );
  for (const r of rows) {
    objects.set(`${r.shop}|${r.objectKey}`, {
      lastUpdatedAt: r.lastUpdatedAt,
      contentHashes: (r.contentHashes ?? {}) as Record<string, string>,
      state: r.state,
    });
  }
  return objects;
}

/** The customer a sync delivery concerns, when its customer event lists subscriptions. */
function customerOf(p: Prepared): string | null {
  if (p.route !== "sync") return null;
  if (p.objectKey.startsWith("customer:")) return p.objectKey.slice("customer:".length);
  return p.objectKey.startsWith("subscription:") ? (p.read.keys.customerId ?? null) : null;
}

/**
 * Adds to `objects` the stored subscription contracts of the customers the batch concerns (those
 * already there, from this batch's keys, are kept: they may be newer).
 */
async function loadCustomerSubscriptions(tx: SqlQueryable, batch: Prepared[], objects: Map<string, ObjectMemory>): Promise<void> {
  const pairs = [...new Set(batch.flatMap((p) => (customerOf(p) ? [`${p.delivery.shop}|${customerOf(p)}`] : [])))];
  if (!pairs.length) return;
  const rows = await tx.query<{ shop: string; objectKey: string; lastUpdatedAt: Date | null; contentHashes: unknown; state: unknown }>(
    // Same predicate as the partial index ObjectState_subscription_customer_idx.
    `SELECT o.shop, o."objectKey", o."lastUpdatedAt" AT TIME ZONE 'UTC' AS "lastUpdatedAt", o."contentHashes", o.state
       FROM "ObjectState" o JOIN unnest($1::text[], $2::text[]) AS k(shop, customer)
         ON o.shop = k.shop AND (o.state->>'customerId') = k.customer
      WHERE o."objectKey" LIKE 'subscription:%'`,
    [pairs.map((k) => k.slice(0, k.indexOf("|"))), pairs.map((k) => k.slice(k.indexOf("|") + 1))],
  );
  for (const r of rows) {
    const key = `${r.shop}|${r.objectKey}`;
    if (!objects.has(key)) objects.set(key, { lastUpdatedAt: r.lastUpdatedAt, contentHashes: (r.contentHashes ?? {}) as Record<string, string>, state: r.state });
  }
}

/** The customer's contracts as the batch knows them now, but for `self`. */
function subscriptionsOf(objects: Map<string, ObjectMemory>, shop: string, customer: string, self: string): NonNullable<SyncContext["customerSubscriptions"]> {
  const out: Array<NonNullable<SyncContext["customerSubscriptions"]>[number]> = [];
  const prefix = `${shop}|subscription:`;
  for (const [key, memory] of objects) {
    if (!key.startsWith(prefix) || key === `${shop}|${self}`) continue;
    const state = objectSyncStateSchema.safeParse(memory.state);
    if (state.success && state.data.kind === "subscription" && state.data.customerId === customer) {
      out.push({ id: key.slice(prefix.length), state: state.data });
    }
  }
  return out;
}

/** One statement for every object the batch changed. */
async function saveObjects(tx: SqlQueryable, objects: Map<string, ObjectMemory>, touched: Set<string>): Promise<void> {
  const rows = [...touched].map((key) => {
    const o = objects.get(key)!;
    const split = key.indexOf("|");
    return {
      shop: key.slice(0, split),
      objectKey: key.slice(split + 1),
      lastUpdatedAt: o.lastUpdatedAt?.toISOString() ?? null,
      contentHashes: o.contentHashes,
      state: o.state,
    };
  });
  if (!rows.length) return;
  await tx.query(
    `INSERT INTO "ObjectState" (shop, "objectKey", "lastUpdatedAt", "contentHashes", state, "updatedAt")
     SELECT r.shop, r."objectKey", r."lastUpdatedAt", r."contentHashes", r.state, now()
       FROM jsonb_to_recordset($1::jsonb) AS r(shop text, "objectKey" text, "lastUpdatedAt" timestamptz, "contentHashes" jsonb, state jsonb)
     ON CONFLICT (shop, "objectKey") DO UPDATE SET
       "lastUpdatedAt" = EXCLUDED."lastUpdatedAt", "contentHashes" = EXCLUDED."contentHashes",
       state = EXCLUDED.state, "updatedAt" = now()`,
    [JSON.stringify(rows)],
  );
}

async function finishDeliveries(tx: SqlQueryable, finished: Finished[]): Promise<void> {
  if (!finished.length) return;
  await tx.query(
    // unnest() of arrays, not jsonb_to_recordset(): the planner knows it is a handful of rows and
    // probes the primary key. Estimating 100, it hash-joined a scan of the whole table, done rows
    // kept for retention included: 1–2 ms per planned batch with 3,400 rows, growing with the table.
    `UPDATE "WebhookDelivery" d SET status = '${DELIVERY_STATUS.done}', outcome = r.outcome, "outcomeDetail" = r.detail,
       "objectKey" = r."objectKey", "finishedAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS r(id, outcome, detail, "objectKey")
     WHERE d.id = r.id`,
    [finished.map((f) => f.delivery.id), finished.map((f) => f.outcome), finished.map((f) => f.detail), finished.map((f) => f.objectKey)],
  );
}

/**
 * The database refused a value of this delivery (SQLSTATE class 22, data exception, or 54, a
 * program limit such as an index row too large): trying again cannot help.
 */
function isRefusedData(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("54"));
}
