-- CreateIndex
CREATE INDEX "OutboundCall_deliveryId_idx" ON "OutboundCall"("deliveryId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_receivedAt_id_idx" ON "WebhookDelivery"("receivedAt", "id");
