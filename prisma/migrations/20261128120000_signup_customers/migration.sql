-- CreateTable
CREATE TABLE "SignupSweepState" (
    "shop" TEXT NOT NULL,
    "dueAt" TIMESTAMP(3) NOT NULL,
    "startedAt" TIMESTAMP(3),
    "page" INTEGER NOT NULL DEFAULT 1,
    "read" INTEGER NOT NULL DEFAULT 0,
    "waiting" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "lastRead" INTEGER,
    "lastWaiting" INTEGER,
    "lastCreated" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "lastSweepAt" TIMESTAMP(3),
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "SignupSweepState_pkey" PRIMARY KEY ("shop")
);

-- CreateTable
CREATE TABLE "SignupCustomer" (
    "shop" TEXT NOT NULL,
    "personId" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "signedUpAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SignupCustomer_pkey" PRIMARY KEY ("shop","personId")
);

-- CreateIndex
CREATE INDEX "SignupSweepState_dueAt_idx" ON "SignupSweepState"("dueAt");

-- CreateIndex
CREATE INDEX "SignupCustomer_shop_email_idx" ON "SignupCustomer"("shop", "email");

-- CreateIndex
CREATE INDEX "SignupCustomer_shop_outcome_idx" ON "SignupCustomer"("shop", "outcome");

-- Shops connected before signups could become customers made no choice: they keep it off until
-- they turn it on in Settings (new shops choose at connection, where the default is on).
UPDATE "Shop" SET settings = jsonb_set(settings, '{signupsToShopify}', 'false')
 WHERE jsonb_typeof(settings) = 'object' AND NOT (settings ? 'signupsToShopify') AND "serviceKeyEnc" IS NOT NULL;
