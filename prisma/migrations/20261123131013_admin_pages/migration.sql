-- AlterTable
ALTER TABLE "Shop" ADD COLUMN "serviceAccount" JSONB;

-- CreateTable
CREATE TABLE "SyncCounterHourly" (
    "shop" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "hour" TIMESTAMP(3) NOT NULL,
    "received" INTEGER NOT NULL DEFAULT 0,
    "delivered" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "dead" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "SyncCounterHourly_pkey" PRIMARY KEY ("shop","hour","kind")
);
