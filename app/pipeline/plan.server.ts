import { createHash } from "node:crypto";
import { database, prisma } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import type { ServiceCall } from "../services/marketing/schemas";
import { shopContext, type ShopContext } from "../shops/connection.server";
import { recordUninstall } from "../shops/lifecycle.server";
import { parseShopifyJson, ShopifyJsonError } from "../sync/json";
import type { AbandonmentInstruction } from "../sync/mappers/common";
import { InvalidPayloadError, objectSyncStateSchema, planWebhook, type SyncContext, type SyncPlan } from "../sync/plan";
import { applyAbandonment } from "./abandonment.server";
import { claimRows } from "./claim.server";
import { bumpCounters, type CounterDelta } from "./counters.server";
import { kindOf } from "../topics";
import { backoffMs, type PipelinePolicy } from "./policy";

interface ClaimedDelivery {
  id: string;
  receivedAt: Date;
  triggeredAt: Date | null;
  shop: string;
  topic: string;
  eventId: string;
  rawBody: string;
  attempts: number;
}

type Outcome = "planned" | "stale" | "unchanged" | "ignored" | "invalid";

interface ObjectRow {
  lastUpdatedAt: Date | null;
  contentHashes: Record<string, string>;
  state: unknown;
  touched: boolean;
}

interface Decision {
  delivery: ClaimedDelivery;
  outcome: Outcome;
  detail: string | null;
  objectKey: string | null;
}

/**
 * Turns recorded deliveries into service calls, a batch at a time in one transaction. Per
 * Shopify object, planning is serialised (advisory locks on the object keys, taken in sorted
 * order) and applied in order of the object's updated_at: an older version arriving after a
 * newer one is recorded as stale; a call whose content did not change since the last one of
 * its kind is not sent again ("unchanged" when nothing is left).
 */
export async function planDeliveries(workerId: string, policy: PipelinePolicy): Promise<number> {
  const claimed = await claimRows<ClaimedDelivery>({
    table: "WebhookDelivery",
    workerId,
    limit: policy.planBatchSize,
    leaseMs: policy.leaseMs,
    due: `q.status = 'queued' AND q."runAt" <= now()`,
    orderBy: `q."receivedAt", q.id`,
    key: "id",
    returning: `id, "receivedAt" AT TIME ZONE 'UTC' AS "receivedAt", "triggeredAt" AT TIME ZONE 'UTC' AS "triggeredAt",
      shop, topic, "eventId", "rawBody", attempts`,
  });
  if (!claimed.length) return 0;
  // UPDATE … RETURNING does not keep the subquery's order.
  claimed.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || a.id.localeCompare(b.id));

  const now = new Date();
  const contexts = new Map<string, ShopContext>();
  for (const shop of new Set(claimed.map((d) => d.shop))) contexts.set(shop, await shopContext(shop));
  const ctxFor = (shop: string): Omit<SyncContext, "prior"> => {
    const c = contexts.get(shop)!;
    return {
      shopDomain: c.domain,
      storefrontUrl: c.storefrontUrl,
      currency: c.currency,
      settings: c.settings,
      now,
    };
  };

  // Parse and find each delivery's object outside the transaction (pure work).
  const parsed: {
    delivery: ClaimedDelivery;
    body: unknown;
    objectKey: string;
    /** The plan for an object with no prior state: reused when that is the case. */
    fresh: SyncPlan;
  }[] = [];
  const decisions: Decision[] = [];
  for (const delivery of claimed) {
    try {
      const body = parseShopifyJson(delivery.rawBody);
      const fresh = planWebhook(delivery.topic, body, { ...ctxFor(delivery.shop), prior: null });
      parsed.push({ delivery, body, objectKey: fresh.objectKey, fresh });
    } catch (error) {
      if (!(error instanceof InvalidPayloadError) && !(error instanceof ShopifyJsonError)) throw error;
      decisions.push({
        delivery,
        outcome: "invalid",
        detail: error.message,
        objectKey: null,
      });
    }
  }

  try {
    // The raw driver, not Prisma: this is the hot path, and Prisma's per-query cost dominated it.
    await database().sql.transaction(async (tx) => {
      const keys = [...new Set(parsed.map((p) => `${p.delivery.shop}|${p.objectKey}`))].sort();
      if (keys.length) {
        await tx.query(
          `SELECT count(pg_advisory_xact_lock(hashtext(k)))::int AS n FROM (SELECT k FROM unnest($1::text[]) AS k ORDER BY k) s`,
          [keys]
        );
      }
      const objects = await loadObjects(tx, keys);
      const calls: {
        shop: string;
        objectKey: string;
        kind: string;
        call: ServiceCall;
        deliveryId: string;
      }[] = [];
      const abandonments: {
        shop: string;
        instruction: AbandonmentInstruction;
        source: string;
      }[] = [];

      for (const { delivery, body, objectKey, fresh } of parsed) {
        const key = `${delivery.shop}|${objectKey}`;
        const object = objects.get(key);
        // State written by an older version of the mappers that no longer parses counts as none.
        const prior = objectSyncStateSchema.safeParse(object?.state);
        const plan = prior.success
          ? planWebhook(delivery.topic, body, { ...ctxFor(delivery.shop), prior: prior.data })
          : fresh;
        const version = plan.objectUpdatedAt ? new Date(plan.objectUpdatedAt) : null;
        const previous = object?.contentHashes ?? {};
        const hashed = plan.calls.map((call) => ({
          call,
          kind: callKind(call),
          hash: contentHash(call),
        }));
        const changed = hashed.filter((h) => previous[h.kind] !== h.hash);

        let outcome: Outcome;
        let detail = plan.skipped ?? null;
        if (version && object?.lastUpdatedAt && version < object.lastUpdatedAt) {
          outcome = "stale";
          detail = `older than the version applied (${object.lastUpdatedAt.toISOString()})`;
        } else if (plan.calls.length === 0) outcome = "ignored";
        else if (changed.length === 0) outcome = "unchanged";
        else outcome = "planned";
        if (delivery.topic === "app/uninstalled" && (await recordUninstall(tx, delivery.shop, delivery.triggeredAt))) {
          detail = "shop uninstalled: sessions removed, delivery stopped";
        }
        decisions.push({ delivery, outcome, detail, objectKey });
        if (outcome === "stale") continue;

        for (const { call } of outcome === "planned" ? changed : []) {
          calls.push({
            shop: delivery.shop,
            objectKey,
            kind: kindOf(objectKey),
            call,
            deliveryId: delivery.id,
          });
        }
        // A deletion starts the object's history over: a re-created contact must be sent again.
        const restart = plan.calls.some(
          (c) => c.op === "person.delete" || (c.op === "event" && c.action === "deleted")
        );
        objects.set(key, {
          lastUpdatedAt: version ?? object?.lastUpdatedAt ?? null,
          contentHashes: {
            ...(restart ? {} : previous),
            ...Object.fromEntries(hashed.map((h) => [h.kind, h.hash])),
          },
          state: plan.nextState ?? object?.state ?? null,
          touched: true,
        });
        if (plan.abandonment)
          abandonments.push({
            shop: delivery.shop,
            instruction: plan.abandonment,
            source: objectKey,
          });
      }

      if (calls.length) {
        await tx.query(
          // Ids follow plan order: an object's calls are delivered in id order.
          `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, "deliveryId")
             SELECT r.shop, r."objectKey", r.kind, r.call, r."deliveryId"
               FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (shop text, "objectKey" text, kind text, call jsonb, "deliveryId" text))
                    WITH ORDINALITY AS r(shop, "objectKey", kind, call, "deliveryId", n)
              ORDER BY r.n`,
          [JSON.stringify(calls)]
        );
      }
      await saveObjects(tx, objects);
      for (const a of abandonments) {
        await applyAbandonment(tx, a.shop, a.instruction, contexts.get(a.shop)!.settings, now, a.source);
      }
      await finishDeliveries(tx, decisions);
      await bumpCounters(
        decisions
          .filter((d) => d.outcome !== "planned")
          .map(
            (d): CounterDelta => ({
              shop: d.delivery.shop,
              kind: kindOf(d.delivery.topic),
              skipped: 1,
            })
          ),
        tx
      );
    });
  } catch (error) {
    // A bug or a database hiccup: the whole batch tries again later; nothing is lost.
    const message = error instanceof Error ? error.message : String(error);
    logger().error({ err: message, deliveries: claimed.length }, "planning failed");
    for (const d of claimed) {
      const giveUp = d.attempts >= policy.maxAttempts;
      await prisma().webhookDelivery.update({
        where: { id: d.id },
        data: giveUp
          ? {
              status: "done",
              outcome: "invalid",
              outcomeDetail: `planning failed: ${message}`,
              finishedAt: new Date(),
              lockedBy: null,
            }
          : {
              status: "queued",
              runAt: new Date(Date.now() + backoffMs(d.attempts, policy)),
              outcomeDetail: message,
              lockedBy: null,
            },
      });
    }
    return claimed.length;
  }
  for (const d of decisions) {
    logger().debug(
      {
        shop: d.delivery.shop,
        topic: d.delivery.topic,
        eventId: d.delivery.eventId,
        deliveryId: d.delivery.id,
        outcome: d.outcome,
      },
      "delivery planned"
    );
  }
  return claimed.length;
}

async function loadObjects(tx: SqlQueryable, keys: string[]): Promise<Map<string, ObjectRow>> {
  const objects = new Map<string, ObjectRow>();
  if (!keys.length) return objects;
  const rows = await tx.query<{
    shop: string;
    objectKey: string;
    lastUpdatedAt: Date | null;
    contentHashes: unknown;
    state: unknown;
  }>(
    `SELECT o.shop, o."objectKey", o."lastUpdatedAt" AT TIME ZONE 'UTC' AS "lastUpdatedAt", o."contentHashes", o.state
       FROM "ObjectState" o JOIN unnest($1::text[]) AS k(key) ON o.shop || '|' || o."objectKey" = k.key`,
    [keys]
  );
  for (const r of rows) {
    objects.set(`${r.shop}|${r.objectKey}`, {
      lastUpdatedAt: r.lastUpdatedAt,
      contentHashes: (r.contentHashes ?? {}) as Record<string, string>,
      state: r.state,
      touched: false,
    });
  }
  return objects;
}

/** One statement for every object the batch changed. */
async function saveObjects(tx: SqlQueryable, objects: Map<string, ObjectRow>): Promise<void> {
  const rows = [...objects.entries()]
    .filter(([, o]) => o.touched)
    .map(([key, o]) => {
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
    [JSON.stringify(rows)]
  );
}

async function finishDeliveries(tx: SqlQueryable, decisions: Decision[]): Promise<void> {
  if (!decisions.length) return;
  const rows = decisions.map((d) => ({
    id: d.delivery.id,
    outcome: d.outcome,
    detail: d.detail,
    objectKey: d.objectKey,
  }));
  await tx.query(
    `UPDATE "WebhookDelivery" d SET status = 'done', outcome = r.outcome, "outcomeDetail" = r.detail,
       "objectKey" = r."objectKey", "finishedAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL
     FROM jsonb_to_recordset($1::jsonb) AS r(id text, outcome text, detail text, "objectKey" text)
     WHERE d.id = r.id`,
    [JSON.stringify(rows)]
  );
}

/** Calls of one kind replace each other: an unchanged one need not be sent again. */
export function callKind(call: ServiceCall): string {
  if (call.op === "event") return `event:${call.type}:${call.action}`;
  if (call.op === "event.custom") return `custom:${call.body.eventName}`;
  return call.op;
}

// Send times and delivery controls (whether to ask for double opt-in again) are not content:
// they would make every re-delivery look changed.
const NOT_CONTENT = new Set(["occurred_at", "occurredAt", "modified_at", "skipDoubleOptIn"]);

export function contentHash(call: ServiceCall): string {
  const json = JSON.stringify(call, (key, value) => (NOT_CONTENT.has(key) ? undefined : value));
  return createHash("sha256").update(json).digest("hex");
}
