-- Import of the members a segment already has when it is picked (issue 31). Additive only.
-- Default queued: segments picked before this migration also get their current members.
ALTER TABLE "MirroredSegment" ADD COLUMN "importStatus" TEXT NOT NULL DEFAULT 'queued';
ALTER TABLE "MirroredSegment" ADD COLUMN "importCursor" TEXT;
ALTER TABLE "MirroredSegment" ADD COLUMN "importTotal" INTEGER;
ALTER TABLE "MirroredSegment" ADD COLUMN "importDone" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "MirroredSegment" ADD COLUMN "importError" TEXT;
ALTER TABLE "MirroredSegment" ADD COLUMN "importAttempts" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "MirroredSegment" ADD COLUMN "importRunAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE "MirroredSegment" ADD COLUMN "importLockedBy" TEXT;
ALTER TABLE "MirroredSegment" ADD COLUMN "importLockedUntil" TIMESTAMP(3);
CREATE INDEX "MirroredSegment_importStatus_importRunAt_idx" ON "MirroredSegment"("importStatus", "importRunAt");
