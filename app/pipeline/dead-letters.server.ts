import { prisma } from "../db.server";
import { logger } from "../logger.server";

export interface DeadLetter {
  id: string;
  objectKey: string;
  kind: string;
  call: unknown;
  reason: string | null;
  lastResponse: unknown;
  attempts: number;
  createdAt: Date;
}

/** Calls that exhausted their attempts or were rejected: reason, last response and payload. */
export async function listDeadLetters(shop: string, options: { take?: number } = {}): Promise<DeadLetter[]> {
  const rows = await prisma().outboundCall.findMany({
    where: { shop, status: "dead" },
    orderBy: { id: "asc" },
    take: options.take ?? 100,
  });
  return rows.map((r) => ({
    id: String(r.id),
    objectKey: r.objectKey,
    kind: r.kind,
    call: r.call,
    reason: r.lastError,
    lastResponse: r.lastResponse,
    attempts: r.attempts,
    createdAt: r.createdAt,
  }));
}

/** Puts dead letters back in the queue with fresh attempts: one (by id) or all of a shop's. */
export async function replayDeadLetters(shop: string, ids?: string[]): Promise<number> {
  const { count } = await prisma().outboundCall.updateMany({
    where: { shop, status: "dead", ...(ids ? { id: { in: ids.map((id) => BigInt(id)) } } : {}) },
    data: { status: "queued", attempts: 0, runAt: new Date(), lockedBy: null, lockedUntil: null },
  });
  if (count) logger().info({ shop, count }, "dead letters replayed");
  return count;
}
