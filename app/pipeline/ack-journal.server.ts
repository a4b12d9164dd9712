import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { PreparedStatement, SqlQueryable, SqlRunner } from "../db/migrate.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import { verifiedDeliverySchema } from "./delivery";

/**
 * The acknowledgement journal of embedded PGlite.
 *
 * PGlite has one connection, and the in-process worker's transactions hold it: an acknowledgement
 * that inserted its delivery waited for whatever transaction was running (6 ms at the median,
 * 20–25 ms at p99 during a burst). Instead, an acknowledgement appends the delivery to this file —
 * one write(2) into the page cache, the durability PGlite itself has without fsync: a process crash
 * keeps it, a power loss may not — and is answered. A mover takes journaled deliveries into
 * "WebhookDelivery" in batches and writes how far it got ("AckJournalCheckpoint") in the same
 * transaction, so a crash neither loses nor moves one twice. On opening, whatever lies past that
 * point is moved first.
 *
 * The file: a header line naming its generation, then one JSON line per delivery. A last line
 * without its newline is a write cut short by a crash: never acknowledged, it is cut off at opening.
 * Once everything is moved and the file is large or some seconds old, it is replaced by an empty
 * one of a new generation. Written here rather than taken from a library: what makes it safe is the checkpoint
 * in the database's own transaction, which no log library knows about.
 */

export const ACK_JOURNAL_FILE = "marketing-sync-acks.journal";

export const ACK_JOURNAL_POLICY = {
  /** Acknowledgements arriving this close together are moved in one transaction. */
  moveDelayMs: 50,
  /** Deliveries per move transaction: one short hold of the connection. */
  moveBatch: 50,
  /** Batches the worker moves itself before each pass, when no move is under way. */
  workerMoveBatches: 4,
  /**
   * The mover's own loop (its timer) rests after each batch as long as the batch took (at most this
   * long) while more wait, and sizes its batches to take about moveBatchTargetMs (at least
   * moveBatchMin): moved back to back in batches of 50, its transactions held PGlite's one
   * connection and left the in-process worker one statement per move (each 0.2–1.5 s during a
   * 3,000-order flood), so another shop's change waited seconds to be planned
   * (bench:fairness --send http). 0: back to back, fixed batches. Once half of maxPending waits,
   * it moves back to back in full batches again: beyond maxPending acknowledgements would wait on
   * the database themselves.
   */
  moverRestMaxMs: 1_000,
  moveBatchTargetMs: 50,
  moveBatchMin: 5,
  /**
   * Not-yet-moved deliveries beyond which acknowledgements stop being journaled and go straight to
   * the database, which then answers for itself (503 while it fails): moves that keep failing must
   * not grow memory and the file without bound.
   */
  maxPending: 5_000,
  maxPendingBytes: 64 * 1024 * 1024,
  /**
   * A fully moved file is replaced by an empty one once it is this large, or this old: the bodies
   * it holds are customers' data, which must not outlive their rows by long (a redaction deletes
   * the rows; the file is gone within seconds of its deliveries being moved).
   */
  rotateAfterBytes: 16 * 1024 * 1024,
  rotateAfterMs: 10_000,
  /** A failed move (or a failed write) is tried again after this long. */
  retryAfterMs: 1_000,
  /**
   * How long a shop whose delivery was recorded counts as installed without asking the database.
   * Within it, a delivery for a shop uninstalled meanwhile is answered 200 (not 404) and dropped
   * when moved: Shopify stops sending them after an uninstall anyway.
   */
  installedShopTtlMs: 60_000,
};

/** A delivery as acknowledged: the verified request and when it was answered. */
export const journaledDeliverySchema = verifiedDeliverySchema.extend({ receivedAt: z.string() });
export type JournaledDelivery = z.infer<typeof journaledDeliverySchema>;

/** Writes a batch of journaled deliveries into the database, inside the move's transaction. */
export type MoveDeliveries = (tx: SqlQueryable, deliveries: JournaledDelivery[]) => Promise<void>;

const JOURNAL = "marketing-sync acknowledgements";
const VERSION = 1;
const headerSchema = z.object({ journal: z.literal(JOURNAL), version: z.literal(VERSION), generation: z.string().min(1) });
const headerLine = (generation: string) => `${JSON.stringify({ journal: JOURNAL, version: VERSION, generation })}\n`;
const NEWLINE = 0x0a;

interface Pending {
  delivery: JournaledDelivery;
  /** The file offset just past this delivery's line. */
  end: number;
  bytes: number;
}

/**
 * The next deliveries to move, round-robin between shops (each shop's oldest first), in file order:
 * the journal is one queue for every shop, and moved first come, first served a flash sale's
 * thousands of webhooks held another shop's one behind them for seconds (issue 33).
 */
function nextMoveBatch(pending: Pending[], size: number): { batch: Pending[]; rest: Pending[] } {
  if (pending.length <= size) return { batch: pending.slice(), rest: [] };
  // A delivery's rank is how many of its shop's deliveries come before it; lower ranks go first.
  const taken = new Map<string, number>();
  const byRank: number[][] = [];
  for (let i = 0; i < pending.length; i++) {
    const shop = pending[i].delivery.shop;
    const rank = taken.get(shop) ?? 0;
    taken.set(shop, rank + 1);
    if (rank < size) (byRank[rank] ??= []).push(i);
  }
  const chosen = new Set(byRank.flat().slice(0, size));
  const batch: Pending[] = [];
  const rest: Pending[] = [];
  for (let i = 0; i < pending.length; i++) (chosen.has(i) ? batch : rest).push(pending[i]);
  return { batch, rest };
}

export class AckJournal {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private moving: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = 0;
  private appendsPausedUntil = 0;
  private oldCheckpointsLeft = true;
  private generationStartedAt = Date.now();
  private closed = false;
  private lastBatchMs = 0;
  private lastDeliveryMs = 0;

  private constructor(
    private readonly file: string,
    private fd: number,
    private generation: string,
    private end: number,
    private readonly sql: SqlRunner,
    private readonly move: MoveDeliveries,
  ) {}

  /** Opens (or creates) the journal in `dir` and schedules the move of what it still holds. */
  static async open(dir: string, sql: SqlRunner, move: MoveDeliveries): Promise<AckJournal> {
    const file = path.join(dir, ACK_JOURNAL_FILE);
    let bytes = existsSync(file) ? readFileSync(file) : undefined;
    let header = bytes && parseHeader(bytes);
    if (bytes && !header) {
      // Not a journal of ours (or its header was lost): kept aside for a person, never overwritten.
      const aside = `${file}.unreadable-${Date.now()}`;
      renameSync(file, aside);
      logger().error({ file: aside }, "acknowledgement journal unreadable: set aside, a new one started");
    }
    if (!bytes || !header) {
      const generation = replaceWithEmpty(file);
      bytes = Buffer.from(headerLine(generation));
      header = { generation, length: bytes.length };
    }
    const [row] = await sql.query<{ movedThrough: string }>(
      `SELECT "movedThrough"::text AS "movedThrough" FROM "AckJournalCheckpoint" WHERE generation = $1`,
      [header.generation],
    );
    const movedThrough = row ? Number(row.movedThrough) : header.length;
    const fd = openSync(file, "r+");
    const { pending, validEnd, unreadable } = readDeliveries(bytes, Math.min(movedThrough, bytes.length));
    if (validEnd < bytes.length) {
      // A write cut short by a crash: its request was never answered, so Shopify sends it again.
      ftruncateSync(fd, validEnd);
      logger().warn({ bytes: bytes.length - validEnd }, "acknowledgement journal: an unfinished last line cut off");
    }
    if (unreadable) logger().error({ lines: unreadable }, "acknowledgement journal: unreadable lines skipped");
    const journal = new AckJournal(file, fd, header.generation, validEnd, sql, move);
    journal.pending = pending;
    journal.pendingBytes = pending.reduce((sum, p) => sum + p.bytes, 0);
    if (pending.length) {
      logger().info({ deliveries: pending.length }, "acknowledgement journal: moving deliveries left by the last run");
      journal.schedule(0);
    }
    return journal;
  }

  /** Journals an acknowledged delivery. False when it was not taken: record it another way. */
  append(delivery: JournaledDelivery): boolean {
    const policy = ACK_JOURNAL_POLICY;
    if (this.closed || Date.now() < this.appendsPausedUntil) return false;
    if (this.pending.length >= policy.maxPending || this.pendingBytes >= policy.maxPendingBytes) return false;
    const line = Buffer.from(`${JSON.stringify(delivery)}\n`, "utf8");
    try {
      writeFully(this.fd, line, this.end);
    } catch (error) {
      // A short write (disk full) must not leave half a line for the next one to run into.
      try {
        ftruncateSync(this.fd, this.end);
      } catch {
        // the line stays unfinished: still cut off at the next opening
      }
      this.appendsPausedUntil = Date.now() + policy.retryAfterMs;
      logger().error({ err: messageOf(error) }, "acknowledgement journal: write failed, recording directly");
      return false;
    }
    this.end += line.length;
    this.pending.push({ delivery, end: this.end, bytes: line.length });
    this.pendingBytes += line.length;
    this.schedule(policy.moveDelayMs);
    return true;
  }

  /** Deliveries journaled and not moved yet. */
  get backlog(): number {
    return this.pending.length;
  }

  /** Moves everything journaled so far (one mover at a time); resolves with how many it moved. */
  async moveAll({ resting = false } = {}): Promise<number> {
    let moved = 0;
    do moved += await (this.moving ?? this.startMove(Infinity, resting));
    while (this.pending.length && !this.closed);
    return moved;
  }

  /**
   * Moves at most `batches` batches, and nothing when a move is under way: during a burst the
   * mover's loop runs as long as webhooks keep arriving, and the worker, which moved everything
   * before each pass, planned nothing for as long (the quiet shops' changes waited 2–3 s).
   */
  moveSome(batches: number): Promise<number> {
    return this.moving ? Promise.resolve(0) : this.startMove(batches, false);
  }

  private startMove(maxBatches: number, resting: boolean): Promise<number> {
    this.moving = this.moveLoop(maxBatches, resting).finally(() => (this.moving = undefined));
    return this.moving;
  }

  /** Moves what is left (if the database lets it), then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.timer);
    await this.moveAll().catch((error: unknown) =>
      logger().warn({ err: messageOf(error), deliveries: this.pending.length }, "acknowledgement journal: left for the next start"),
    );
    this.closed = true;
    clearTimeout(this.timer);
    closeSync(this.fd);
  }

  private async moveLoop(maxBatches: number, resting: boolean): Promise<number> {
    let moved = 0;
    for (let batches = 0; this.pending.length && !this.closed && batches < maxBatches; batches++) {
      const yielding = resting && this.pending.length < ACK_JOURNAL_POLICY.maxPending / 2;
      if (yielding && batches > 0) {
        // The worker's statements queued meanwhile run in the rest, not one per batch.
        const restMs = Math.min(this.lastBatchMs, ACK_JOURNAL_POLICY.moverRestMaxMs);
        if (restMs > 0) await sleep(restMs);
        if (!this.pending.length || this.closed) break;
      }
      const batchStarted = performance.now();
      const { batch, rest } = nextMoveBatch(this.pending, yielding ? this.restingBatchSize() : ACK_JOURNAL_POLICY.moveBatch);
      const considered = this.pending.length;
      // Moved through the first line left behind: a batch may take later lines of other shops, which
      // a crash before the next checkpoint moves again (no second row: counted as a duplicate).
      const through = rest.length ? rest[0].end - rest[0].bytes : batch[batch.length - 1].end;
      const generation = this.generation;
      const dropOld = this.oldCheckpointsLeft;
      await this.sql.transaction(async (tx) => {
        await this.move(tx, batch.map((p) => p.delivery));
        await tx.prepared(SAVE_CHECKPOINT, [generation, through]);
        if (dropOld) await tx.query(`DELETE FROM "AckJournalCheckpoint" WHERE generation <> $1`, [generation]);
      });
      this.oldCheckpointsLeft &&= !dropOld;
      // Appends made during the move come after everything the batch was cut from.
      this.pending = [...rest, ...this.pending.slice(considered)];
      this.pendingBytes -= batch.reduce((sum, p) => sum + p.bytes, 0);
      moved += batch.length;
      this.lastBatchMs = performance.now() - batchStarted;
      this.lastDeliveryMs = this.lastBatchMs / batch.length;
    }
    if (!this.pending.length && !this.closed && this.end > this.headerBytes) {
      if (this.rotationDue()) this.startNewGeneration();
      // Traffic may stop here: the moved bodies still go once the file is old enough.
      else this.schedule(this.generationStartedAt + ACK_JOURNAL_POLICY.rotateAfterMs - Date.now(), { keepAlive: false });
    }
    return moved;
  }

  /** As many deliveries as the last batch moved in moveBatchTargetMs, within moveBatchMin..moveBatch. */
  private restingBatchSize(): number {
    const { moveBatch, moveBatchMin, moveBatchTargetMs } = ACK_JOURNAL_POLICY;
    if (!moveBatchTargetMs || !this.lastDeliveryMs) return moveBatch;
    return Math.max(Math.min(moveBatchMin, moveBatch), Math.min(moveBatch, Math.floor(moveBatchTargetMs / this.lastDeliveryMs)));
  }

  private get headerBytes(): number {
    return Buffer.byteLength(headerLine(this.generation));
  }

  private rotationDue(): boolean {
    const policy = ACK_JOURNAL_POLICY;
    return this.end >= policy.rotateAfterBytes || Date.now() - this.generationStartedAt >= policy.rotateAfterMs;
  }

  /**
   * Everything is moved: an empty file of a new generation replaces this one. Synchronous, so no
   * append comes in between; a crash at any point leaves either the old file, fully moved by its
   * checkpoint, or the new one, which no checkpoint names yet (nothing moved).
   */
  private startNewGeneration(): void {
    const generation = replaceWithEmpty(this.file);
    closeSync(this.fd);
    this.fd = openSync(this.file, "r+");
    this.generation = generation;
    this.end = this.headerBytes;
    this.oldCheckpointsLeft = true;
    this.generationStartedAt = Date.now();
  }

  /** Moves (and looks at rotation) in `delayMs`, or sooner if already planned sooner. */
  private schedule(delayMs: number, { keepAlive = true } = {}): void {
    if (this.closed) return;
    const dueAt = Date.now() + delayMs;
    if (this.timer && this.timerDueAt <= dueAt) {
      if (keepAlive) this.timer.ref();
      return;
    }
    clearTimeout(this.timer);
    this.timerDueAt = dueAt;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.moveAll({ resting: true }).catch((error: unknown) => {
        logger().error({ err: messageOf(error), deliveries: this.pending.length }, "acknowledgement journal: move failed, will retry");
        this.schedule(ACK_JOURNAL_POLICY.retryAfterMs);
      });
    }, delayMs);
    if (!keepAlive) this.timer.unref();
  }
}

const SAVE_CHECKPOINT: PreparedStatement = {
  name: "ms_save_ack_checkpoint",
  types: ["text", "bigint"],
  text: `INSERT INTO "AckJournalCheckpoint" (generation, "movedThrough") VALUES ($1, $2)
         ON CONFLICT (generation) DO UPDATE SET "movedThrough" = EXCLUDED."movedThrough"`,
};

/** Writes an empty journal of a new generation in place of `file` (atomically); returns the generation. */
function replaceWithEmpty(file: string): string {
  const generation = randomUUID();
  const temporary = `${file}.new`;
  writeFileSync(temporary, headerLine(generation));
  renameSync(temporary, file);
  return generation;
}

function parseHeader(bytes: Buffer): { generation: string; length: number } | undefined {
  const newline = bytes.indexOf(NEWLINE);
  if (newline < 0) return undefined;
  try {
    const header = headerSchema.safeParse(JSON.parse(bytes.subarray(0, newline).toString("utf8")));
    return header.success ? { generation: header.data.generation, length: newline + 1 } : undefined;
  } catch {
    return undefined;
  }
}

/** The complete lines after `from`; where the complete lines end; how many could not be read. */
function readDeliveries(bytes: Buffer, from: number): { pending: Pending[]; validEnd: number; unreadable: number } {
  const pending: Pending[] = [];
  let unreadable = 0;
  let start = from;
  for (let newline = bytes.indexOf(NEWLINE, start); newline >= 0; newline = bytes.indexOf(NEWLINE, start)) {
    const line = bytes.subarray(start, newline).toString("utf8");
    const end = newline + 1;
    let parsed: ReturnType<typeof journaledDeliverySchema.safeParse> | undefined;
    try {
      parsed = journaledDeliverySchema.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (parsed?.success) pending.push({ delivery: parsed.data, end, bytes: end - start });
    else unreadable++;
    start = end;
  }
  return { pending, validEnd: start, unreadable };
}

function writeFully(fd: number, buffer: Buffer, position: number): void {
  let written = 0;
  while (written < buffer.length) {
    written += writeSync(fd, buffer, written, buffer.length - written, position + written);
  }
}
