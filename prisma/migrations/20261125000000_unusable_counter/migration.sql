-- What the store sent that could not be used at all (a delivery recorded as invalid, a history-import
-- line that could not be read, an abandoned-checkout reminder that could not be made) is counted on its
-- own instead of as "skipped", which means nothing needed sending. Earlier ones stay counted as skipped.
ALTER TABLE "SyncCounter" ADD COLUMN "unusable" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "SyncCounterHourly" ADD COLUMN "unusable" INTEGER NOT NULL DEFAULT 0;
