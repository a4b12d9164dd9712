-- AlterTable
ALTER TABLE "Shop" ADD COLUMN     "currency" TEXT,
ADD COLUMN     "pauseReason" TEXT,
ADD COLUMN     "pausedAt" TIMESTAMP(3),
ADD COLUMN     "storefrontUrl" TEXT;

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL,
    "shop" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "triggeredAt" TIMESTAMP(3),
    "apiVersion" TEXT,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rawBody" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "outcome" TEXT,
    "outcomeDetail" TEXT,
    "objectKey" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutboundCall" (
    "id" BIGSERIAL NOT NULL,
    "shop" TEXT NOT NULL,
    "objectKey" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "call" JSONB NOT NULL,
    "deliveryId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "lastError" TEXT,
    "lastResponse" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMP(3),

    CONSTRAINT "OutboundCall_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ObjectState" (
    "shop" TEXT NOT NULL,
    "objectKey" TEXT NOT NULL,
    "lastUpdatedAt" TIMESTAMP(3),
    "contentHashes" JSONB,
    "state" JSONB,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ObjectState_pkey" PRIMARY KEY ("shop","objectKey")
);

-- CreateTable
CREATE TABLE "SyncCounter" (
    "shop" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "received" INTEGER NOT NULL DEFAULT 0,
    "duplicates" INTEGER NOT NULL DEFAULT 0,
    "delivered" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "dead" INTEGER NOT NULL DEFAULT 0,
    "lastDeliveredAt" TIMESTAMP(3),
    "lastLagMs" INTEGER,

    CONSTRAINT "SyncCounter_pkey" PRIMARY KEY ("shop","kind")
);

-- CreateTable
CREATE TABLE "AbandonmentTimer" (
    "shop" TEXT NOT NULL,
    "checkoutToken" TEXT NOT NULL,
    "cartToken" TEXT,
    "dueAt" TIMESTAMP(3) NOT NULL,
    "snapshot" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AbandonmentTimer_pkey" PRIMARY KEY ("shop","checkoutToken")
);

-- CreateTable
CREATE TABLE "CompletedCheckout" (
    "shop" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "orderId" TEXT NOT NULL,
    "completedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CompletedCheckout_pkey" PRIMARY KEY ("shop","token")
);

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_runAt_idx" ON "WebhookDelivery"("status", "runAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_receivedAt_idx" ON "WebhookDelivery"("receivedAt");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookDelivery_shop_topic_eventId_key" ON "WebhookDelivery"("shop", "topic", "eventId");

-- CreateIndex
CREATE INDEX "OutboundCall_status_runAt_idx" ON "OutboundCall"("status", "runAt");

-- CreateIndex
CREATE INDEX "OutboundCall_shop_objectKey_id_idx" ON "OutboundCall"("shop", "objectKey", "id");

-- CreateIndex
CREATE INDEX "OutboundCall_shop_status_idx" ON "OutboundCall"("shop", "status");

-- CreateIndex
CREATE INDEX "AbandonmentTimer_status_dueAt_idx" ON "AbandonmentTimer"("status", "dueAt");
