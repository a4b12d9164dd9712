-- AlterTable
ALTER TABLE "AbandonmentTimer" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "lastError" TEXT;

-- AlterTable
ALTER TABLE "OutboundCall" ADD COLUMN     "retryFrom" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
