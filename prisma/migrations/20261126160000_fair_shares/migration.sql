-- Fair shares between shops (issue 33). Additive only.

-- Calls planned from a history import or a reconciliation sweep: they wait behind the
-- live calls of their shop.
ALTER TABLE "OutboundCall" ADD COLUMN "background" BOOLEAN NOT NULL DEFAULT false;

-- A shop Retry-After: none of its calls is claimed before this.
ALTER TABLE "Shop" ADD COLUMN "deliveryHoldUntil" TIMESTAMP(3);

-- Claims walk the shops with queued work (one probe per shop) and take the next calls of each shop
-- from its own slice of this index: the cost follows the calls claimed, not the backlog.
CREATE INDEX "OutboundCall_queued_shop_background_runAt_id_idx"
  ON "OutboundCall" ("shop", "background", "runAt", "id") WHERE "status" = 'queued';

-- The same for planning: live webhooks of a shop come before its imported history.
CREATE INDEX "WebhookDelivery_queued_shop_history_receivedAt_id_idx"
  ON "WebhookDelivery" ("shop", ("source" <> 'webhook'), "receivedAt", "id") WHERE "status" = 'queued';
