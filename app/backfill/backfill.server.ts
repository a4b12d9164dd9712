/**
 * History backfill: the store's customers, products and orders, exported with the Admin GraphQL
 * Bulk Operations API (one query per kind), streamed line by line and recorded as deliveries that
 * the pipeline plans like live webhooks — same mappers, same staleness and dedupe, events silent.
 *
 * A run is a row in BackfillRun, worked on in steps by the sync worker (submit → wait → import a
 * chunk), each step under a lease and checkpointed (linesDone, bytesDone), so a crash or restart continues
 * where it stopped. One run per shop at a time. Once a kind's export is ready, the next kind's is
 * started, so Shopify prepares it while this one is imported (one export at a time per shop).
 */
import { createInterface } from "node:readline";
import { request } from "undici";
import { z } from "zod";
import { database, prisma } from "../db.server";
import type { SqlQueryable } from "../db/migrate.server";
import { logger } from "../logger.server";
import { claimRows } from "../pipeline/claim.server";
import { bumpCounters } from "../pipeline/counters.server";
import { nextTry, type PipelinePolicy } from "../pipeline/policy";
import { BACKFILL_STATUS, DELIVERY_OUTCOME, DELIVERY_STATUS, type BackfillStatus } from "../pipeline/status";
import { reachableOrderDays } from "../shopify/access";
import { parseShopifyJson } from "../sync/json";
import { adminQuery, NoOfflineSession } from "../shopify/admin-api.server";
import { CUSTOMER_FIELDS, LINE_ITEM_FIELDS, ORDER_FIELDS, PRODUCT_FIELDS, VARIANT_FIELDS } from "./fields";
import { BACKFILL_KINDS, BACKFILL_TOPIC, convert, type BackfillKind } from "./convert";
import { messageOf } from "../errors";
import { kindOf } from "../sync/topics.server";
import { sourceSql } from "../sync/sources";

const PHASE = { submit: "submit", wait: "wait", import: "import" } as const;

const DOWNLOAD_TIMEOUT_MS = 5 * 60_000;
/** Exports of one kind started before the import gives up (Shopify's failures are mostly transient). */
const MAX_EXPORT_ATTEMPTS = 3;
/** How soon a run refused a turn at Shopify (too many exports running) asks again. */
const BUSY_RETRY_MS = 10_000;

export const backfillRequestSchema = z.object({
  kinds: z.array(z.enum(BACKFILL_KINDS)).min(1).default([...BACKFILL_KINDS]),
  /** Orders of the last N days; null: all of them (within what the shop's scopes let the app see). */
  orderDays: z.union([z.literal(60), z.literal(90), z.literal(365), z.null()]).default(365),
});
export type BackfillRequest = z.input<typeof backfillRequestSchema>;

export class BackfillRefused extends Error {
  override readonly name = "BackfillRefused";
}

/**
 * Queues a backfill for a shop; refused while another one for the shop is queued or running,
 * unless `replacing` (the reason) is given: that one then ends as failed with the reason, its
 * exports still running at Shopify are cancelled, and its worker's next write finds its lease gone.
 */
export async function requestBackfill(
  shop: string,
  input: BackfillRequest = {},
  options: { replacing?: string } = {},
): Promise<{ id: string; /** Days of orders the run covers (null: all), within what the shop lets the app see. */ orderDays: number | null }> {
  const req = backfillRequestSchema.parse(input);
  // Without read_all_orders Shopify shows 60 days of orders: the run says so instead of asking for a year.
  const [granted] = await database().sql.query<{ scopes: string | null }>(`SELECT scopes FROM "Shop" WHERE domain = $1`, [shop]);
  const orderDays = reachableOrderDays(req.orderDays, granted?.scopes);
  const ordersSince = orderDays === null ? null : new Date(Date.now() - orderDays * 86_400_000);
  const replaced: string[] = [];
  const queued = await database().sql.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('backfill:' || $1))`, [shop]);
    if (options.replacing) {
      const ended = await tx.query<{ bulkOperationId: string | null; nextBulkOperationId: string | null }>(
        `UPDATE "BackfillRun" SET status = '${BACKFILL_STATUS.failed}', "lastError" = $2, "finishedAt" = now(),
           "lockedBy" = NULL, "lockedUntil" = NULL, "updatedAt" = now()
         WHERE shop = $1 AND status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}')
         RETURNING CASE WHEN phase = '${PHASE.wait}' THEN "bulkOperationId" END AS "bulkOperationId", "nextBulkOperationId"`,
        [shop, options.replacing],
      );
      for (const r of ended) replaced.push(...[r.bulkOperationId, r.nextBulkOperationId].filter((id): id is string => Boolean(id)));
    }
    const active = await tx.query<{ id: string; createdAt: Date }>(
      `SELECT id, "createdAt" FROM "BackfillRun" WHERE shop = $1 AND status IN ('${BACKFILL_STATUS.queued}', '${BACKFILL_STATUS.running}') LIMIT 1`,
      [shop],
    );
    if (active.length) {
      throw new BackfillRefused(`A history import for ${shop} is already under way (run ${active[0].id}); wait for it to finish.`);
    }
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO "BackfillRun" (id, shop, kinds, "ordersSince", phase, "updatedAt")
       VALUES (gen_random_uuid()::text, $1, $2::text[], $3, '${PHASE.submit}', now()) RETURNING id`,
      [shop, req.kinds, ordersSince?.toISOString() ?? null],
    );
    logger().info({ shop, run: row.id, kinds: req.kinds }, "history import queued");
    return row;
  });
  // The replaced run's exports would hold Shopify's limit of exports running at once.
  await Promise.all(replaced.map((id) => cancelBulkOperation(shop, id)));
  return { id: queued.id, orderDays };
}

export interface BackfillProgress {
  id: string;
  status: BackfillStatus;
  kind: string | null;
  kindsDone: number;
  kinds: number;
  objects: number;
  /** Objects of the current kind according to Shopify (nested ones included: JSONL lines), once its export finished. */
  expected: number | null;
  /** Lines of the current kind's export already recorded: with `expected`, the kind's progress. */
  linesDone: number;
  /** submit, wait (Shopify is exporting), import. */
  phase: string;
  /** Orders created since then are imported (null: all of them). */
  ordersSince: Date | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The shop's latest run, for the admin and the CLI. */
export async function backfillProgress(shop: string): Promise<BackfillProgress | null> {
  const run = await prisma().backfillRun.findFirst({ where: { shop }, orderBy: { createdAt: "desc" } });
  if (!run) return null;
  return {
    id: run.id,
    status: run.status as BackfillStatus,
    kind: run.kinds[run.kindIndex] ?? null,
    kindsDone: run.kindIndex,
    kinds: run.kinds.length,
    objects: run.objects,
    expected: run.objectCount,
    linesDone: run.linesDone,
    phase: run.phase,
    ordersSince: run.ordersSince,
    lastError: run.lastError,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
  };
}

const bulkFinishBody = z.looseObject({ admin_graphql_api_id: z.string() });

/**
 * bulk_operations/finish: the export a run waits for is ready — its next poll happens now instead
 * of at the next interval (polling stays the fallback when the webhook never comes).
 */
export async function wakeBackfillForBulkOperation(tx: SqlQueryable, shop: string, body: unknown): Promise<boolean> {
  const parsed = bulkFinishBody.safeParse(body);
  if (!parsed.success) return false;
  const rows = await tx.query(
    `UPDATE "BackfillRun" SET "runAt" = now(), "updatedAt" = now()
      WHERE shop = $1 AND "bulkOperationId" = $2 AND phase = '${PHASE.wait}' AND status = '${BACKFILL_STATUS.queued}'
      RETURNING id`,
    [shop, parsed.data.admin_graphql_api_id],
  );
  return rows.length > 0;
}

interface ClaimedRun {
  id: string;
  shop: string;
  kinds: string[];
  kindIndex: number;
  ordersSince: Date | null;
  phase: string;
  bulkOperationId: string | null;
  nextBulkOperationId: string | null;
  resultUrl: string | null;
  linesDone: number;
  bytesDone: number;
  attempts: number;
  exportAttempts: number;
}

/** The worker's unit of history import: one step of a due import (app/jobs). Returns how many it did. */
export async function runHistoryImportStep(workerId: string, policy: PipelinePolicy): Promise<number> {
  const [run] = await claimRows<ClaimedRun>({
    table: "BackfillRun",
    workerId,
    limit: 1,
    leaseMs: Math.max(policy.leaseMs, DOWNLOAD_TIMEOUT_MS),
    due: `q.status IN ('${BACKFILL_STATUS.queued}') AND q."runAt" <= now()`,
    orderBy: `q."createdAt"`,
    key: "id",
    returning: `id, shop, kinds, "kindIndex", "ordersSince" AT TIME ZONE 'UTC' AS "ordersSince", phase, "bulkOperationId", "nextBulkOperationId", "resultUrl", "linesDone", "bytesDone"::float8 AS "bytesDone", attempts, "exportAttempts"`,
  });
  if (!run) return 0;
  try {
    const next = await step(run, workerId, policy);
    await saveStep(run, workerId, next);
  } catch (error) {
    const message = messageOf(error);
    // Without a token to use (none, revoked, or expired past refreshing), no retry can succeed until
    // the merchant opens the app again: the import says so at once instead of after its retries.
    const next = nextTry("historyImportStep", { attempts: run.attempts, permanent: error instanceof NoOfflineSession }, policy);
    const giveUp = next.giveUp;
    logger().error({ shop: run.shop, run: run.id, phase: run.phase, err: message }, giveUp ? "history import failed" : "history import step failed; will retry");
    await saveStep(run, workerId, giveUp ? { status: BACKFILL_STATUS.failed, lastError: message } : { delayMs: next.delayMs, lastError: message, keepAttempts: true });
  }
  return 1;
}

interface StepResult {
  status?: string;
  phase?: string;
  kindIndex?: number;
  bulkOperationId?: string | null;
  nextBulkOperationId?: string | null;
  resultUrl?: string | null;
  objectCount?: number | null;
  linesDone?: number;
  addObjects?: number;
  delayMs?: number;
  lastError?: string | null;
  keepAttempts?: boolean;
  exportAttempts?: number;
}

async function step(run: ClaimedRun, workerId: string, policy: PipelinePolicy): Promise<StepResult> {
  const kind = run.kinds[run.kindIndex] as BackfillKind | undefined;
  if (!kind) return { status: BACKFILL_STATUS.done };
  if (run.phase === PHASE.submit) {
    const query = bulkQuery(kind, run.ordersSince);
    const submitted = await submitBulkQuery(run.shop, query);
    if ("busy" in submitted) {
      // Shopify runs a limited number of exports per shop at once. One of them may be this very
      // export (a worker that stopped before saving its id): it is taken over. Otherwise the run
      // waits for a free turn without spending its attempts.
      const ours = await runningBulkOperation(run.shop, query);
      if (ours) {
        logger().info({ shop: run.shop, run: run.id, kind, bulkOperation: ours }, "history export already running at Shopify; taken over");
        return { phase: PHASE.wait, bulkOperationId: ours, delayMs: policy.backfillPollMs, exportAttempts: run.exportAttempts + 1 };
      }
      logger().info({ shop: run.shop, run: run.id, kind, reason: submitted.busy }, "history export waits for another export at Shopify to end");
      return { delayMs: Math.max(policy.backfillPollMs, BUSY_RETRY_MS) };
    }
    logger().info({ shop: run.shop, run: run.id, kind, bulkOperation: submitted.id }, "history export started");
    return { phase: PHASE.wait, bulkOperationId: submitted.id, delayMs: policy.backfillPollMs, exportAttempts: run.exportAttempts + 1 };
  }
  if (run.phase === PHASE.wait) {
    const op = await readBulkOperation(run.shop, run.bulkOperationId!);
    if (op.status === "COMPLETED") {
      // No objects: Shopify gives no file.
      if (!op.url) return nextKind(run);
      return { phase: PHASE.import, resultUrl: op.url, objectCount: op.objectCount === null ? null : Number(op.objectCount), linesDone: 0 };
    }
    if (op.status === "FAILED" || op.status === "CANCELED" || op.status === "EXPIRED") {
      // An export that ended stays ended: reading it again never helps, a new one may.
      const ended = `Shopify's export of ${kind} ended ${op.status}${op.errorCode ? ` (${op.errorCode})` : ""}`;
      if (run.exportAttempts >= MAX_EXPORT_ATTEMPTS) {
        return { status: BACKFILL_STATUS.failed, lastError: `${ended}, ${run.exportAttempts} times; start the import again later` };
      }
      logger().warn({ shop: run.shop, run: run.id, kind, bulkOperation: run.bulkOperationId, exports: run.exportAttempts }, `${ended}; starting it again`);
      return { phase: PHASE.submit, bulkOperationId: null, lastError: `${ended}; started again` };
    }
    return { delayMs: policy.backfillPollMs };
  }
  const nextKindName = run.kinds[run.kindIndex + 1] as BackfillKind | undefined;
  if (nextKindName && run.nextBulkOperationId === null) {
    // This kind's export is complete, so starting the next one keeps to one export at a time.
    // An optimisation only: if Shopify refuses it now, the export is started when its turn comes.
    try {
      const submitted = await submitBulkQuery(run.shop, bulkQuery(nextKindName, run.ordersSince));
      if ("busy" in submitted) throw new Error(submitted.busy);
      logger().info({ shop: run.shop, run: run.id, kind: nextKindName, bulkOperation: submitted.id }, "history export started ahead");
      return { nextBulkOperationId: submitted.id };
    } catch (error) {
      logger().warn({ shop: run.shop, run: run.id, kind: nextKindName, err: messageOf(error) }, "history export not started ahead");
      return { nextBulkOperationId: "" };
    }
  }
  // Backpressure: the next chunk waits while the shop still has two chunks of imported objects to
  // plan, so live webhooks never queue behind the whole store and each claim sorts a short queue.
  if ((await backlog(run.shop, policy.backfillChunk * BACKLOG_CHUNKS)) >= policy.backfillChunk * BACKLOG_CHUNKS) {
    return { delayMs: policy.pollMs };
  }
  const imported = await importChunk(run, workerId, kind, policy.backfillChunk);
  if (imported.finished) return { ...nextKind(run), addObjects: 0 };
  return {};
}

const BACKLOG_CHUNKS = 2;

/** Imported objects of the shop not yet planned (counted up to `limit`). */
async function backlog(shop: string, limit: number): Promise<number> {
  const [row] = await database().sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT 1 FROM "WebhookDelivery" WHERE status IN ('${DELIVERY_STATUS.queued}', '${DELIVERY_STATUS.running}') AND shop = $1 AND source = ${sourceSql("backfill")} LIMIT $2) s`,
    [shop, limit],
  );
  return row?.n ?? 0;
}

function nextKind(run: ClaimedRun): StepResult {
  const kindIndex = run.kindIndex + 1;
  if (kindIndex >= run.kinds.length) return { status: BACKFILL_STATUS.done, kindIndex, nextBulkOperationId: null };
  const fresh = { kindIndex, resultUrl: null, linesDone: 0, objectCount: null, nextBulkOperationId: null };
  // Started ahead: wait for it (probably finished already) instead of submitting another.
  if (run.nextBulkOperationId) return { ...fresh, phase: PHASE.wait, bulkOperationId: run.nextBulkOperationId, exportAttempts: 1 };
  return { ...fresh, phase: PHASE.submit, bulkOperationId: null, exportAttempts: 0 };
}

async function saveStep(run: ClaimedRun, workerId: string, r: StepResult): Promise<void> {
  const finished = r.status === BACKFILL_STATUS.done || r.status === BACKFILL_STATUS.failed;
  await database().sql.query(
    `UPDATE "BackfillRun" SET
       status = CASE WHEN $3::text IS NOT NULL THEN $3 ELSE '${BACKFILL_STATUS.queued}' END,
       phase = coalesce($4, phase), "kindIndex" = coalesce($5, "kindIndex"),
       "bulkOperationId" = CASE WHEN $6::boolean THEN $7 ELSE "bulkOperationId" END,
       "resultUrl" = CASE WHEN $8::boolean THEN $9 ELSE "resultUrl" END,
       "nextBulkOperationId" = CASE WHEN $17::boolean THEN $18 ELSE "nextBulkOperationId" END,
       "objectCount" = CASE WHEN $10::boolean THEN $11 ELSE "objectCount" END,
       "linesDone" = coalesce($12, "linesDone"), "bytesDone" = CASE WHEN $12::int IS NOT NULL THEN 0 ELSE "bytesDone" END,
       "runAt" = now() + ($13::int * interval '1 millisecond'),
       "lastError" = $14, attempts = CASE WHEN $15::boolean THEN attempts ELSE 0 END,
       "finishedAt" = CASE WHEN $16::boolean THEN now() ELSE NULL END,
       "exportAttempts" = coalesce($19, "exportAttempts"),
       "lockedBy" = NULL, "lockedUntil" = NULL, "updatedAt" = now()
     WHERE id = $1 AND "lockedBy" = $2 AND status = '${BACKFILL_STATUS.running}'`,
    [
      run.id,
      workerId,
      r.status ?? null,
      r.phase ?? null,
      r.kindIndex ?? null,
      "bulkOperationId" in r,
      r.bulkOperationId ?? null,
      "resultUrl" in r,
      r.resultUrl ?? null,
      "objectCount" in r,
      r.objectCount ?? null,
      r.linesDone ?? null,
      r.delayMs ?? 0,
      r.lastError ?? null,
      Boolean(r.keepAttempts),
      finished,
      "nextBulkOperationId" in r,
      r.nextBulkOperationId ?? null,
      r.exportAttempts ?? null,
    ],
  );
  if (r.status === BACKFILL_STATUS.done) logger().info({ shop: run.shop, run: run.id }, "history import finished");
}

/**
 * Streams the export from the checkpoint on and records up to `chunk` objects as deliveries, with
 * the new checkpoint, in one transaction. A child line (variant, line item) follows its parent: the
 * export is asked for grouped (groupObjects: true; since API 2026-01 Shopify does not group by default).
 * The checkpoint is a line number and its byte offset: the next chunk asks for the file from that
 * byte on (HTTP Range, which Shopify's storage serves), so a long export is read once, not once
 * per chunk; without Range (or when the byte before the offset is not a line break) it reads from
 * the start and skips the lines already done.
 */
async function importChunk(run: ClaimedRun, workerId: string, kind: BackfillKind, chunk: number, useRange = true): Promise<{ finished: boolean }> {
  const from = useRange && run.bytesDone > 0 ? run.bytesDone - 1 : 0;
  const response = await request(run.resultUrl!, {
    signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
    maxRedirections: 0,
    headers: from > 0 ? { range: `bytes=${from}-` } : {},
  });
  if (response.statusCode !== 200 && response.statusCode !== 206) {
    await response.body.dump();
    throw new Error(`downloading the ${kind} export answered ${response.statusCode}`);
  }
  const ranged = response.statusCode === 206;
  // An early stop destroys the body, which then emits an error nobody else listens to.
  response.body.on("error", () => undefined);
  const lines = createInterface({ input: response.body, crlfDelay: Infinity });
  const objects: { body: Record<string, unknown>; gid: string }[] = [];
  // Lines that cannot be read or converted: recorded as invalid deliveries with the reason, and
  // the import goes on (one bad line used to fail the whole history import after its retries).
  const unreadable: Unreadable[] = [];
  // Ranged: the first "line" is the empty one ended by the line break before the offset.
  let lineNo = ranged ? run.linesDone - 1 : 0;
  let bytes = ranged ? from : 0;
  let checkpoint = { line: run.linesDone, byte: run.bytesDone };
  let parent: { line: unknown; gid: string; children: unknown[]; endLine: number; endByte: number } | undefined;
  let finished = true;
  let misaligned = false;
  const flush = () => {
    if (!parent) return;
    try {
      objects.push({ body: convert(kind, parent.line, parent.children), gid: parent.gid });
    } catch (error) {
      unreadable.push({ key: parent.gid, text: JSON.stringify(parent.line), reason: `could not convert ${parent.gid}: ${shortMessageOf(error)}` });
    }
    checkpoint = { line: parent.endLine, byte: parent.endByte };
    parent = undefined;
  };
  try {
    for await (const text of lines) {
      lineNo++;
      bytes += Buffer.byteLength(text, "utf8") + 1;
      if (ranged && lineNo === run.linesDone && text !== "") {
        misaligned = true;
        break;
      }
      if (lineNo <= run.linesDone || text.trim() === "") continue;
      let line: { id?: string; __parentId?: string };
      try {
        line = parseBulkLine(text);
      } catch (error) {
        unreadable.push({ key: `line:${lineNo}`, text, reason: `line ${lineNo} is not valid JSON: ${shortMessageOf(error)}` });
        continue;
      }
      if (line.__parentId) {
        if (parent && line.__parentId === parent.gid) {
          parent.children.push(line);
          parent.endLine = lineNo;
          parent.endByte = bytes;
        } else {
          // Its parent was already sent without it (an ungrouped export, or a parent line that
          // could not be read): recorded as a problem, never dropped without a trace.
          unreadable.push({
            key: line.id ? String(line.id) : `line:${lineNo}`,
            text,
            reason: `line ${lineNo} (${line.id ?? "no id"}) belongs to ${line.__parentId}, which is not the object just before it in Shopify's export`,
          });
          if (parent) Object.assign(parent, { endLine: lineNo, endByte: bytes });
          else checkpoint = { line: lineNo, byte: bytes };
        }
        continue;
      }
      flush();
      if (objects.length >= chunk) {
        finished = false;
        break;
      }
      parent = { line, gid: String(line.id), children: [], endLine: lineNo, endByte: bytes };
    }
    if (finished && !misaligned) flush();
  } finally {
    lines.close();
    response.body.destroy();
  }
  if (misaligned) {
    logger().warn({ shop: run.shop, run: run.id, kind }, "export offset does not fall on a line break; reading from the start");
    return importChunk(run, workerId, kind, chunk, false);
  }
  await recordObjects(run, workerId, kind, objects, checkpoint, unreadable);
  return { finished };
}

interface Unreadable {
  /** the object's gid, or the line number */
  key: string;
  text: string;
  reason: string;
}

/**
 * A line of the export. Lines with \u escapes may hold characters PostgreSQL refuses (U+0000,
 * unpaired surrogates): the webhook parser makes those storable; the rest take the fast path.
 */
function parseBulkLine(text: string): { id?: string; __parentId?: string } {
  const line: unknown = text.includes("\\u") ? parseShopifyJson(text) : JSON.parse(text);
  if (!line || typeof line !== "object" || Array.isArray(line)) throw new Error("not a JSON object");
  return line as { id?: string; __parentId?: string };
}

const shortMessageOf = (error: unknown) => messageOf(error).slice(0, 300);

async function recordObjects(
  run: ClaimedRun,
  workerId: string,
  kind: BackfillKind,
  objects: { body: Record<string, unknown>; gid: string }[],
  checkpoint: { line: number; byte: number },
  unreadable: Unreadable[] = [],
): Promise<void> {
  await database().sql.transaction(async (tx) => {
    const [mine] = await tx.query(
      `SELECT 1 FROM "BackfillRun" WHERE id = $1 AND "lockedBy" = $2 AND status = '${BACKFILL_STATUS.running}' FOR UPDATE`,
      [run.id, workerId],
    );
    if (!mine) throw new Error("lease lost during the import step");
    if (objects.length) {
      const rows = objects.map((o) => ({
        topic: BACKFILL_TOPIC[kind],
        eventId: `backfill:${run.id}:${o.gid}`,
        rawBody: JSON.stringify(o.body),
      }));
      await tx.query(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source)
         SELECT gen_random_uuid()::text, $1, r.topic, r."eventId", r."eventId", r."rawBody", ${sourceSql("backfill")}
           FROM jsonb_to_recordset($2::jsonb) AS r(topic text, "eventId" text, "rawBody" text)
         ON CONFLICT (shop, topic, "eventId") DO NOTHING`,
        [run.shop, JSON.stringify(rows)],
      );
    }
    if (unreadable.length) {
      const rows = unreadable.map((u) => ({
        topic: BACKFILL_TOPIC[kind],
        eventId: `backfill:${run.id}:${u.key}`,
        // Kept for support, made storable (a text column refuses U+0000).
        rawBody: u.text.replaceAll("\u0000", "\uFFFD").slice(0, 100_000),
        reason: `history import: ${u.reason}`,
      }));
      const recorded = await tx.query<{ topic: string }>(
        `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", source, status, outcome, "outcomeDetail", "finishedAt")
         SELECT gen_random_uuid()::text, $1, r.topic, r."eventId", r."eventId", r."rawBody", ${sourceSql("backfill")}, '${DELIVERY_STATUS.done}', '${DELIVERY_OUTCOME.invalid}', r.reason, now()
           FROM jsonb_to_recordset($2::jsonb) AS r(topic text, "eventId" text, "rawBody" text, reason text)
         ON CONFLICT (shop, topic, "eventId") DO NOTHING
         RETURNING topic`,
        [run.shop, JSON.stringify(rows)],
      );
      // Counted once each (a step retried after a crash finds its lines already recorded).
      await bumpCounters(recorded.map((r) => ({ shop: run.shop, kind: kindOf(r.topic), unusable: 1 })), tx);
      logger().warn({ shop: run.shop, run: run.id, kind, lines: unreadable.length, first: unreadable[0].reason }, "history import: lines recorded as invalid");
    }
    await tx.query(`UPDATE "BackfillRun" SET "linesDone" = $2, "bytesDone" = $3, objects = objects + $4, "updatedAt" = now() WHERE id = $1`, [
      run.id,
      checkpoint.line,
      checkpoint.byte,
      objects.length,
    ]);
  });
}

// ---------------------------------------------------------------------------
// Admin GraphQL
// ---------------------------------------------------------------------------

/** The bulk query of a kind (fields read by convert.ts). */
export function bulkQuery(kind: BackfillKind, ordersSince: Date | null): string {
  if (kind === "customers") return `{ customers { edges { node { ${CUSTOMER_FIELDS} } } } }`;
  if (kind === "products") return `{ products { edges { node { ${PRODUCT_FIELDS} variants { edges { node { ${VARIANT_FIELDS} } } } } } } }`;
  const filter = ordersSince ? `(query: "created_at:>='${ordersSince.toISOString()}'")` : "";
  return `{ orders${filter} { edges { node { ${ORDER_FIELDS} lineItems { edges { node { ${LINE_ITEM_FIELDS} } } } } } } }`;
}

const RUN_BULK = `#graphql
  mutation RunBulk($query: String!) {
    bulkOperationRunQuery(query: $query, groupObjects: true) { bulkOperation { id status } userErrors { field message code } }
  }`;

const READ_BULK = `#graphql
  query ReadBulk($id: ID!) {
    node(id: $id) { ... on BulkOperation { id status errorCode objectCount url } }
  }`;

const runBulkAnswer = z.object({
  bulkOperationRunQuery: z.object({
    bulkOperation: z.object({ id: z.string() }).nullable(),
    userErrors: z.array(z.object({ message: z.string(), code: z.string().nullish() })),
  }),
});

const readBulkAnswer = z.object({
  node: z.object({
    status: z.string(),
    errorCode: z.string().nullish(),
    objectCount: z.union([z.string(), z.number()]).nullish(),
    url: z.string().nullish(),
  }),
});

/**
 * Shopify's refusals while the shop has no free turn for an export, by BulkOperationUserErrorCode
 * (2026-04: INVALID, LIMIT_REACHED, OPERATION_IN_PROGRESS), never by message text.
 */
const BUSY_CODES: ReadonlySet<string> = new Set(["LIMIT_REACHED", "OPERATION_IN_PROGRESS"]);

/** Starts an export: its id, or `busy` (the refusal) when Shopify has no free turn for it now. */
async function submitBulkQuery(shop: string, query: string): Promise<{ id: string } | { busy: string }> {
  const answer = runBulkAnswer.parse(await adminQuery(shop, RUN_BULK, { query }));
  const result = answer.bulkOperationRunQuery;
  if (result.bulkOperation) return { id: result.bulkOperation.id };
  const refusal = result.userErrors.map((e) => (e.code ? `${e.message} (${e.code})` : e.message)).join("; ");
  if (result.userErrors.some((e) => e.code && BUSY_CODES.has(e.code))) return { busy: refusal };
  throw new Error(`Shopify refused the export: ${refusal}`);
}

const LIST_BULK = `#graphql
  query RunningBulk($query: String!) {
    bulkOperations(first: 10, query: $query) { nodes { id status query } }
  }`;

const listBulkAnswer = z.object({
  bulkOperations: z.object({ nodes: z.array(z.object({ id: z.string(), status: z.string(), query: z.string().nullish() })) }),
});

/** The shop's export of exactly this query still running at Shopify, if any. */
async function runningBulkOperation(shop: string, query: string): Promise<string | null> {
  const answer = listBulkAnswer.parse(await adminQuery(shop, LIST_BULK, { query: "status:running operation_type:query" }));
  const same = (q: string | null | undefined) => (q ?? "").replace(/\s+/g, " ").trim() === query.replace(/\s+/g, " ").trim();
  return answer.bulkOperations.nodes.find((o) => (o.status === "RUNNING" || o.status === "CREATED") && same(o.query))?.id ?? null;
}

const CANCEL_BULK = `#graphql
  mutation CancelBulk($id: ID!) {
    bulkOperationCancel(id: $id) { bulkOperation { id status } userErrors { field message } }
  }`;

/** Best effort: an export that already ended cannot be cancelled, and needs not be. */
async function cancelBulkOperation(shop: string, id: string): Promise<void> {
  try {
    await adminQuery(shop, CANCEL_BULK, { id });
    logger().info({ shop, bulkOperation: id }, "replaced history export cancelled");
  } catch (error) {
    logger().warn({ shop, bulkOperation: id, err: messageOf(error) }, "could not cancel a replaced history export");
  }
}

async function readBulkOperation(shop: string, id: string) {
  const answer = readBulkAnswer.parse(await adminQuery(shop, READ_BULK, { id }));
  return { ...answer.node, url: answer.node.url ?? null, objectCount: answer.node.objectCount ?? null };
}
