-- CreateIndex
CREATE INDEX "OutboundCall_deliveryId_idx" ON "OutboundCall"("deliveryId");
