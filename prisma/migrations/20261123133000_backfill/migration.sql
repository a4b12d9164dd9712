-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'webhook';

-- CreateTable
CREATE TABLE "BackfillRun" (
    "id" TEXT NOT NULL,
    "shop" TEXT NOT NULL,
    "kinds" TEXT[],
    "kindIndex" INTEGER NOT NULL DEFAULT 0,
    "ordersSince" TIMESTAMP(3),
    "status" TEXT NOT NULL DEFAULT 'queued',
    "phase" TEXT NOT NULL,
    "bulkOperationId" TEXT,
    "resultUrl" TEXT,
    "objectCount" INTEGER,
    "linesDone" INTEGER NOT NULL DEFAULT 0,
    "objects" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "BackfillRun_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BackfillRun_shop_createdAt_idx" ON "BackfillRun"("shop", "createdAt");

-- CreateIndex
CREATE INDEX "BackfillRun_status_runAt_idx" ON "BackfillRun"("status", "runAt");
