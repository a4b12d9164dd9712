-- The next kind's export, started at Shopify while the current kind is imported.
ALTER TABLE "BackfillRun" ADD COLUMN "nextBulkOperationId" TEXT;
