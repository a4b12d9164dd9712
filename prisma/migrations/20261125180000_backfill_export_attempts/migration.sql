-- Exports of a history import's current kind started so far: one that Shopify ends FAILED, CANCELED
-- or EXPIRED is started again, up to a limit, instead of failing the whole import.
ALTER TABLE "BackfillRun" ADD COLUMN "exportAttempts" INTEGER NOT NULL DEFAULT 0;
