import { prisma } from "../db.server";

/** Deletes finished deliveries and delivered calls older than the retention period. */
export async function pruneOldRows(
  retentionDays: number,
  now = new Date()
): Promise<{ deliveries: number; calls: number }> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  const calls = await prisma().outboundCall.deleteMany({
    where: { status: { in: ["delivered", "refused"] }, createdAt: { lt: before } },
  });
  // A delivery is kept while any of its calls is (dead letters point back at their delivery).
  const deliveries = await prisma().$executeRawUnsafe(
    `DELETE FROM "WebhookDelivery" d WHERE d.status = 'done' AND d."receivedAt" < $1
       AND NOT EXISTS (SELECT 1 FROM "OutboundCall" c WHERE c."deliveryId" = d.id)`,
    before
  );
  await prisma().abandonmentTimer.deleteMany({
    where: { status: { in: ["sent", "cancelled"] }, updatedAt: { lt: before } },
  });
  await prisma().completedCheckout.deleteMany({ where: { completedAt: { lt: before } } });
  return { deliveries, calls: calls.count };
}
