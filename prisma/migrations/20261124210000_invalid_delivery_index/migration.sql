-- The Problems page lists a shop's deliveries that could not be used (outcome invalid), newest
-- first. They are few among the deliveries kept for 14 days: this index holds only them, so the
-- page does not read every finished delivery of the shop. Partial, so created here (see the note
-- on WebhookDelivery in schema.prisma).
CREATE INDEX "WebhookDelivery_invalid_shop_finishedAt_idx" ON "WebhookDelivery"("shop", "finishedAt") WHERE "outcome" = 'invalid';
