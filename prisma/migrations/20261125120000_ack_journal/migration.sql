-- Embedded PGlite records acknowledged webhooks in an append-only journal first and moves them into
-- "WebhookDelivery" in batches (app/pipeline/ack-journal.server.ts). How far a journal file has been
-- moved is written in the same transaction as the rows it moved, so a crash never moves one twice.
-- CreateTable
CREATE TABLE "AckJournalCheckpoint" (
    "generation" TEXT NOT NULL,
    "movedThrough" BIGINT NOT NULL,

    CONSTRAINT "AckJournalCheckpoint_pkey" PRIMARY KEY ("generation")
);
