-- AlterTable
ALTER TABLE "BackfillRun" ADD COLUMN     "bytesDone" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "ReconcileState" (
    "shop" TEXT NOT NULL,
    "dueAt" TIMESTAMP(3) NOT NULL,
    "sweptThrough" TIMESTAMP(3) NOT NULL,
    "startedAt" TIMESTAMP(3),
    "kindIndex" INTEGER NOT NULL DEFAULT 0,
    "cursor" TEXT,
    "enqueued" INTEGER NOT NULL DEFAULT 0,
    "lastEnqueued" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "lastSweepAt" TIMESTAMP(3),
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "ReconcileState_pkey" PRIMARY KEY ("shop")
);

-- CreateIndex
CREATE INDEX "ReconcileState_dueAt_idx" ON "ReconcileState"("dueAt");
