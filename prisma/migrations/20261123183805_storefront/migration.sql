-- CreateTable
CREATE TABLE "StorefrontState" (
    "shop" TEXT NOT NULL,
    "trackerMode" TEXT,
    "trackerSyncedAt" TIMESTAMP(3),
    "trackerSyncError" TEXT,
    "nextSyncAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "eventsQueued" INTEGER NOT NULL DEFAULT 0,
    "eventsAnonymous" INTEGER NOT NULL DEFAULT 0,
    "eventsIgnored" INTEGER NOT NULL DEFAULT 0,
    "eventsRateLimited" INTEGER NOT NULL DEFAULT 0,
    "lastEventAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "StorefrontState_pkey" PRIMARY KEY ("shop")
);

-- CreateTable
CREATE TABLE "StorefrontRateWindow" (
    "shop" TEXT NOT NULL,
    "visitor" TEXT NOT NULL,
    "windowStart" TIMESTAMP(3) NOT NULL,
    "hits" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "StorefrontRateWindow_pkey" PRIMARY KEY ("shop","visitor","windowStart")
);

-- CreateIndex
CREATE INDEX "StorefrontState_nextSyncAt_idx" ON "StorefrontState"("nextSyncAt");

-- CreateIndex
CREATE INDEX "StorefrontRateWindow_windowStart_idx" ON "StorefrontRateWindow"("windowStart");
