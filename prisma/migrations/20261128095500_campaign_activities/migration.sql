-- Campaigns as Shopify external marketing activities (issue 46, item 5). Additive only.
CREATE TABLE "CampaignActivity" (
    "shop" TEXT NOT NULL,
    "campaignId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "remoteUrl" TEXT NOT NULL,
    "utmCampaign" TEXT NOT NULL,
    "serviceStatus" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "scheduledStart" TIMESTAMP(3),
    "start" TIMESTAMP(3),
    "end" TIMESTAMP(3),
    "pending" BOOLEAN NOT NULL DEFAULT true,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "activityId" TEXT,
    "syncedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CampaignActivity_pkey" PRIMARY KEY ("shop","campaignId")
);

CREATE INDEX "CampaignActivity_pending_runAt_idx" ON "CampaignActivity"("pending", "runAt");
