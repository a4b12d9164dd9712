import { database } from "../db.server";
import type { PreparedStatement } from "../db/migrate.server";
import type { VerifiedDelivery } from "../webhooks/receive.server";
import { kindOf, topicInfo } from "../topics";
import { asWebhookInFlight } from "./webhook-priority.server";

/**
 * Records a verified delivery and its pending work in one statement, before it is acknowledged.
 * A repeat of an Event-Id already recorded for the shop and topic is only counted. A delivery for
 * a shop the app does not know (never installed, or uninstalled for anything but lifecycle and
 * compliance topics, which Shopify sends after an uninstall) is not recorded at all: "unknown".
 */
export async function recordDelivery(d: VerifiedDelivery): Promise<"recorded" | "duplicate" | "unknown-shop"> {
  const triggeredAt = parseTriggeredAt(d.triggeredAt);
  const role = topicInfo(d.topic)?.role;
  const afterUninstall = role === "lifecycle" || role === "compliance";
  const rows = await asWebhookInFlight(() =>
    database().sql.prepared<{ inserted: number }>(RECORD_DELIVERY, [
      d.shop,
      d.topic,
      d.webhookId,
      d.eventId ?? d.webhookId,
      triggeredAt?.toISOString() ?? null,
      d.apiVersion,
      d.rawBody,
      kindOf(d.topic),
      afterUninstall,
    ]),
  );
  if (!rows.length) return "unknown-shop";
  return Number(rows[0].inserted) === 1 ? "recorded" : "duplicate";
}

/**
 * The shop check is folded into the recording statement (one primary-key probe): the ack path stays
 * one round trip. Prepared once per connection: planning it took most of the statement's time on
 * PGlite (app/db/prepared.ts).
 */
const RECORD_DELIVERY: PreparedStatement = {
  name: "ms_record_delivery",
  types: ["text", "text", "text", "text", "timestamp(3)", "text", "text", "text", "boolean"],
  text: `WITH known AS (
       SELECT 1 FROM "Shop" WHERE domain = $1 AND ("uninstalledAt" IS NULL OR $9::boolean)
     ), ins AS (
       INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "triggeredAt", "apiVersion", "rawBody")
       SELECT gen_random_uuid()::text, $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM known)
       ON CONFLICT (shop, topic, "eventId") DO NOTHING
       RETURNING 1
     ), n AS (SELECT count(*) AS inserted FROM ins)
     INSERT INTO "SyncCounter" (shop, kind, received, duplicates)
     SELECT $1, $8, n.inserted, 1 - n.inserted FROM n WHERE EXISTS (SELECT 1 FROM known)
     ON CONFLICT (shop, kind) DO UPDATE SET
       received = "SyncCounter".received + EXCLUDED.received,
       duplicates = "SyncCounter".duplicates + EXCLUDED.duplicates
     RETURNING (SELECT inserted FROM n)::int AS inserted`,
};

// Years Shopify can mean; anything else (a forged "+275760-09-13", year 0) is no timestamp at all.
const EARLIEST = Date.UTC(2000, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

function parseTriggeredAt(header: string | null): Date | null {
  const ms = header ? Date.parse(header) : NaN;
  return ms >= EARLIEST && ms < LATEST ? new Date(ms) : null;
}
