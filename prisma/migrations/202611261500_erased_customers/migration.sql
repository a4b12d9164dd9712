-- customers/redact leaves a tombstone: hashes (never the values) of the erased customer's id, email
-- and order ids. A history import, reconcile sweep or lookup whose export was taken before the
-- erasure would otherwise record the customer again: the trigger drops such rows as they are
-- inserted. Webhooks (source 'webhook') are not filtered: they are Shopify's news after the erasure.
CREATE TABLE "ErasedReference" (
    "shop" TEXT NOT NULL,
    "ref" TEXT NOT NULL,
    "erasedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ErasedReference_pkey" PRIMARY KEY ("shop", "ref")
);

CREATE FUNCTION erased_reference_hash(shop TEXT, ref TEXT) RETURNS TEXT
LANGUAGE SQL IMMUTABLE AS 'SELECT encode(sha256(convert_to(shop || ''|'' || ref, ''UTF8'')), ''hex'')';

-- The references a body names: Customer/Order gids, customer_id/order_id numbers, email addresses.
-- Written as an escape string whose statement ends are \073 (a semicolon): migration runners that split a
-- script at every semicolon then keep the function whole.
CREATE FUNCTION erased_reference_skip() RETURNS TRIGGER LANGUAGE plpgsql AS E'
BEGIN
  IF NEW.source = ''webhook'' OR NOT EXISTS (SELECT 1 FROM "ErasedReference" WHERE shop = NEW.shop) THEN
    RETURN NEW\073
  END IF\073
  IF EXISTS (
    SELECT 1 FROM (
      SELECT lower(m[1]) || '':'' || m[2] AS ref FROM regexp_matches(NEW."rawBody", ''"gid://shopify/(Customer|Order)/([0-9]+)'', ''g'') AS m
      UNION ALL
      SELECT replace(m[1], ''_id'', '''') || '':'' || m[2] FROM regexp_matches(NEW."rawBody", ''"(customer_id|order_id)"[[:space:]]*:[[:space:]]*"?([0-9]+)'', ''g'') AS m
      UNION ALL
      SELECT ''email:'' || lower(m[1]) FROM regexp_matches(NEW."rawBody", ''"email"[[:space:]]*:[[:space:]]*"([^"]+)"'', ''g'') AS m
    ) named
    JOIN "ErasedReference" e ON e.shop = NEW.shop AND e.ref = erased_reference_hash(NEW.shop, named.ref)
  ) THEN
    RETURN NULL\073
  END IF\073
  RETURN NEW\073
END';

CREATE TRIGGER "WebhookDelivery_erased_reference_skip" BEFORE INSERT ON "WebhookDelivery"
FOR EACH ROW EXECUTE FUNCTION erased_reference_skip();
