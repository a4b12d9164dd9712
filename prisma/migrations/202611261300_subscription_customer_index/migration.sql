-- The contracts of one customer (the customer event's subscriptions[]), found without reading
-- every subscription of the shop. Outside schema.prisma: Prisma cannot state an expression index.
CREATE INDEX "ObjectState_subscription_customer_idx" ON "ObjectState"("shop", ("state"->>'customerId')) WHERE "objectKey" LIKE 'subscription:%';
