-- DropIndex
DROP INDEX "OutboundCall_status_runAt_idx";

-- CreateIndex
CREATE INDEX "OutboundCall_status_runAt_id_idx" ON "OutboundCall"("status", "runAt", "id");
