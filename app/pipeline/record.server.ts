import { database, type Database } from "../db.server";
import type { PreparedStatement, SqlQueryable, SqlScalar } from "../db/migrate.server";
import { pgliteOnDisk } from "../db/pglite.server";
import type { VerifiedDelivery } from "./delivery";
import { kindOf, topicInfo, type TopicRole } from "../sync/topics.server";
import { logger } from "../logger.server";
import { asWebhookInFlight } from "./webhook-priority.server";
import { ACK_JOURNAL_POLICY, AckJournal, type JournaledDelivery } from "./ack-journal.server";

/**
 * What recording a delivery came to. Only "unknown-shop" is refused (the route answers 404);
 * Shopify's retries of a refused delivery find the same answer.
 */
export type RecordingResult =
  /** Stored with its pending work (the row is the queue entry), counted. */
  | "recorded"
  /** An Event-Id already stored for the shop and topic: counted only. */
  | "duplicate"
  /** Appended to PGlite's acknowledgement journal, stored moments later (see below). */
  | "journaled"
  /** A privacy request for a shop with no row: nothing is stored about it, so it is fulfilled as it stands. */
  | "no-data"
  /** A lifecycle topic for a shop never installed; a sync or bulk topic for one never installed or uninstalled. */
  | "unknown-shop";

/**
 * Records a verified delivery and its pending work in one statement, before it is acknowledged.
 * A repeat of an Event-Id already recorded for the shop and topic is only counted. A delivery for
 * a shop the app does not know (never installed, or uninstalled for anything but lifecycle and
 * compliance topics, which Shopify sends after an uninstall) is not recorded at all.
 *
 * On embedded PGlite, a delivery for a shop recently seen installed is journaled instead
 * ("journaled", app/pipeline/ack-journal.server.ts) and recorded moments later, in a batch, by
 * the same statement, which checks the shop again: one uninstalled meanwhile gets nothing.
 */
export async function recordDelivery(d: VerifiedDelivery): Promise<RecordingResult> {
  const db = database();
  const state = ingestState(db);
  const journal = await state.journal;
  if (journal && (state.installed.get(d.shop) ?? 0) > Date.now()) {
    const delivery: JournaledDelivery = { ...d, receivedAt: new Date().toISOString() };
    if (await asWebhookInFlight(async () => journal.append(delivery))) return "journaled";
  }
  const role = topicInfo(d.topic)?.role;
  const rows = await asWebhookInFlight(() => db.sql.prepared<{ inserted: number }>(RECORD_DELIVERY, recordingParams(d, role, null)));
  if (!rows.length) {
    if (role !== "compliance") return "unknown-shop";
    // Answering 200 stops Shopify retrying the request for days; the log is its only trace.
    logger().info({ shop: d.shop, topic: d.topic }, "compliance request for a shop with no data");
    return "no-data";
  }
  // Lifecycle and compliance topics are recorded for uninstalled shops too: no proof of an install.
  if (!recordedAfterUninstall(role)) state.installed.set(d.shop, Date.now() + ACK_JOURNAL_POLICY.installedShopTtlMs);
  return Number(rows[0].inserted) === 1 ? "recorded" : "duplicate";
}

/** Moves the journaled deliveries into the database now; how many. */
export async function moveJournaledDeliveries(): Promise<number> {
  return (await processJournal())?.moveAll() ?? 0;
}

/** The worker, before each pass: a few batches, and none while a move is under way (not waited for). */
export async function moveSomeJournaledDeliveries(): Promise<number> {
  return (await processJournal())?.moveSome(ACK_JOURNAL_POLICY.workerMoveBatches) ?? 0;
}

/** Journaled deliveries not moved yet. */
export async function journaledBacklog(): Promise<number> {
  return (await processJournal())?.backlog ?? 0;
}

/** The process database's acknowledgement journal, when it keeps one. */
const processJournal = () => ingestState(database()).journal;

const recordedAfterUninstall = (role: TopicRole | undefined) => role === "lifecycle" || role === "compliance";

interface IngestState {
  /** Only on an on-disk PGlite without fsync (see the journal's durability note). */
  journal: Promise<AckJournal | undefined> | undefined;
  /** Shops whose deliveries were recorded lately, until when (a journaled delivery skips the check). */
  installed: Map<string, number>;
}
const ingestStates = new WeakMap<Database, IngestState>();

function ingestState(db: Database): IngestState {
  let state = ingestStates.get(db);
  if (!state) {
    const target = db.target;
    const journaled = target.kind === "pglite" && pgliteOnDisk(target.dataDir) && !target.fsync;
    // A journal that cannot be opened leaves acknowledgements on the direct path, and says why.
    const journal = journaled
      ? AckJournal.open(target.dataDir, db.sql, moveDeliveries).catch((error: unknown) => {
          logger().error({ err: error }, "acknowledgement journal could not be opened: recording directly");
          return undefined;
        })
      : undefined;
    state = { journal, installed: new Map() };
    ingestStates.set(db, state);
    if (journal) db.whenClosing(async () => (await journal)?.close());
  }
  return state;
}

/** The journaled deliveries, in the order they were acknowledged, by the statement of the direct path. */
async function moveDeliveries(tx: SqlQueryable, deliveries: JournaledDelivery[]): Promise<void> {
  for (const d of deliveries) await tx.prepared(RECORD_DELIVERY, recordingParams(d, topicInfo(d.topic)?.role, d.receivedAt));
}

/** RECORD_DELIVERY's parameters; receivedAt null: the database's now(). */
function recordingParams(d: VerifiedDelivery, role: TopicRole | undefined, receivedAt: string | null): SqlScalar[] {
  return [
    d.shop,
    d.topic,
    d.webhookId,
    d.eventId ?? d.webhookId,
    parseTriggeredAt(d.triggeredAt)?.toISOString() ?? null,
    d.apiVersion,
    d.rawBody,
    kindOf(d.topic),
    recordedAfterUninstall(role),
    receivedAt,
  ];
}

/**
 * The shop check is folded into the recording statement (one primary-key probe): the ack path stays
 * one round trip. Prepared once per connection: planning it took most of the statement's time on
 * PGlite (app/db/prepared.ts).
 */
const RECORD_DELIVERY: PreparedStatement = {
  name: "ms_record_delivery",
  types: ["text", "text", "text", "text", "timestamp(3)", "text", "text", "text", "boolean", "timestamp(3)"],
  text: `WITH known AS (
       SELECT 1 FROM "Shop" WHERE domain = $1 AND ("uninstalledAt" IS NULL OR $9::boolean)
     ), ins AS (
       INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "triggeredAt", "apiVersion", "rawBody", "receivedAt")
       SELECT gen_random_uuid()::text, $1, $2, $3, $4, $5, $6, $7, coalesce($10, now()) WHERE EXISTS (SELECT 1 FROM known)
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
