import { database } from "../db.server";
import type { VerifiedDelivery } from "../webhooks/receive.server";
import { kindOf } from "../topics";
import { asWebhookInFlight } from "./webhook-priority.server";

/**
 * Records a verified delivery and its pending work in one statement, before it is acknowledged.
 * A repeat of an Event-Id already recorded for the shop and topic is only counted.
 */
export async function recordDelivery(d: VerifiedDelivery): Promise<"recorded" | "duplicate"> {
  const triggeredAt = d.triggeredAt && !Number.isNaN(Date.parse(d.triggeredAt)) ? new Date(d.triggeredAt) : null;
  const rows = await asWebhookInFlight(() =>
    database().sql.query<{ inserted: number }>(
      `WITH ins AS (
       INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "triggeredAt", "apiVersion", "rawBody")
       VALUES (gen_random_uuid()::text, $1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (shop, topic, "eventId") DO NOTHING
       RETURNING 1
     ), n AS (SELECT count(*) AS inserted FROM ins)
     INSERT INTO "SyncCounter" (shop, kind, received, duplicates)
     SELECT $1, $8, n.inserted, 1 - n.inserted FROM n
     ON CONFLICT (shop, kind) DO UPDATE SET
       received = "SyncCounter".received + EXCLUDED.received,
       duplicates = "SyncCounter".duplicates + EXCLUDED.duplicates
     RETURNING (SELECT inserted FROM n)::int AS inserted`,
      [
        d.shop,
        d.topic,
        d.webhookId,
        d.eventId ?? d.webhookId,
        triggeredAt?.toISOString() ?? null,
        d.apiVersion,
        d.rawBody,
        kindOf(d.topic),
      ]
    )
  );
  return Number(rows[0]?.inserted ?? 0) === 1 ? "recorded" : "duplicate";
}
