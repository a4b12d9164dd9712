-- CreateTable
CREATE TABLE "ConsentReturnState" (
    "shop" TEXT NOT NULL,
    "dueAt" TIMESTAMP(3) NOT NULL,
    "startedAt" TIMESTAMP(3),
    "statusIndex" INTEGER NOT NULL DEFAULT 0,
    "page" INTEGER NOT NULL DEFAULT 1,
    "read" INTEGER NOT NULL DEFAULT 0,
    "written" INTEGER NOT NULL DEFAULT 0,
    "lastRead" INTEGER,
    "lastWritten" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "lastSweepAt" TIMESTAMP(3),
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "ConsentReturnState_pkey" PRIMARY KEY ("shop")
);

-- CreateIndex
CREATE INDEX "ConsentReturnState_dueAt_idx" ON "ConsentReturnState"("dueAt");
