import type * as NodeFs from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ACK_JOURNAL_POLICY } from "~/pipeline/ack-journal.server";
import { moveJournaledDeliveries } from "~/pipeline/record.server";
import { journalTestbed } from "../support/ack-journal";

/**
 * The journal's disk fills up (or fails) while webhooks arrive. Shopify must still get its 200,
 * every delivery must be recorded exactly once, and no half-written line may be left for the next
 * line, or the next start, to run into.
 *
 * The disk is simulated at `node:fs` for the app's modules only (PGlite's own files are written by
 * its package, untouched): a full disk cannot be made on demand in a test without mounting one.
 */
const disk = vi.hoisted(() => ({ full: false, bytesLeft: 0, failedWrites: 0 }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  const writeSync = ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
    if (!disk.full) return fs.writeSync(fd, buffer, offset, length, position);
    disk.failedWrites++;
    // A filling disk takes what room it has left (a short write), then refuses.
    if (disk.bytesLeft > 0) {
      const written = fs.writeSync(fd, buffer, offset, Math.min(disk.bytesLeft, length), position);
      disk.bytesLeft -= written;
      return written;
    }
    throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
  }) as typeof NodeFs.writeSync;
  return { ...fs, writeSync, default: { ...fs, writeSync } };
});

const bed = journalTestbed();
const { order, deliveries, counter, journalText } = bed;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const eventIds = async () => (await deliveries()).map((d) => d.eventId);
const retryAfterMs = ACK_JOURNAL_POLICY.retryAfterMs;
afterEach(() => {
  Object.assign(disk, { full: false, bytesLeft: 0, failedWrites: 0 });
  ACK_JOURNAL_POLICY.retryAfterMs = retryAfterMs;
});

describe("the acknowledgement journal on a full disk [pglite]", () => {
  it("answers and records every webhook directly while the journal cannot be written, then journals again", async () => {
    ACK_JOURNAL_POLICY.retryAfterMs = 300;
    expect((await order(1)).status).toBe(200); // a shop's first delivery is recorded directly
    expect((await order(2)).status).toBe(200);
    expect(journalText()).toContain("buyer-2@example.com"); // journaled: the disk had room

    // Room for 40 bytes: the next line is written in part, then the disk is full.
    Object.assign(disk, { full: true, bytesLeft: 40, failedWrites: 0 });
    const before = journalText();
    expect((await order(3)).status).toBe(200);
    expect(disk.failedWrites).toBeGreaterThan(0);
    // The part written was cut off again: the file is as it was.
    expect(journalText()).toBe(before);
    // Recorded before the answer, not journaled: it is in the database already.
    expect(await eventIds()).toContain("evt-orders/create-3");

    // Room again: once the pause is over (a wait of at least the pause, however slow the machine),
    // acknowledgements are journaled again.
    disk.full = false;
    await sleep(ACK_JOURNAL_POLICY.retryAfterMs + 50);
    expect((await order(4)).status).toBe(200);
    expect(journalText()).toContain("buyer-4@example.com");

    // While appends are paused, the journal is not even tried. The pause outlasts any slowness of
    // the machine between the two webhooks.
    ACK_JOURNAL_POLICY.retryAfterMs = 120_000;
    Object.assign(disk, { full: true, bytesLeft: 0, failedWrites: 0 });
    expect((await order(5)).status).toBe(200);
    const failedSoFar = disk.failedWrites;
    expect(failedSoFar).toBeGreaterThan(0);
    expect((await order(6)).status).toBe(200);
    expect(disk.failedWrites).toBe(failedSoFar);
    expect(await eventIds()).toEqual(expect.arrayContaining(["evt-orders/create-5", "evt-orders/create-6"]));
    disk.full = false;

    await moveJournaledDeliveries();
    const all = [1, 2, 3, 4, 5, 6].map((n) => `evt-orders/create-${n}`);
    expect((await eventIds()).sort()).toEqual(all);
    expect(await counter()).toEqual({ received: 6, duplicates: 0 });
    for (const line of journalText().split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();

    // A restart moves nothing twice.
    await bed.close();
    await bed.open();
    await moveJournaledDeliveries();
    expect((await eventIds()).sort()).toEqual(all);
    expect(await counter()).toEqual({ received: 6, duplicates: 0 });
  });

  it("keeps a webhook Shopify retries after a failed write to one row", async () => {
    expect((await order(1)).status).toBe(200);
    disk.full = true;
    disk.bytesLeft = 0;
    expect((await order(2)).status).toBe(200);
    disk.full = false;
    // Shopify did not see the answer (a timeout on its side) and sends the same event again.
    await sleep(ACK_JOURNAL_POLICY.retryAfterMs + 50);
    expect((await order(2)).status).toBe(200);
    await moveJournaledDeliveries();
    expect(await eventIds()).toEqual(["evt-orders/create-1", "evt-orders/create-2"]);
    expect(await counter()).toEqual({ received: 2, duplicates: 1 });
  });
});
