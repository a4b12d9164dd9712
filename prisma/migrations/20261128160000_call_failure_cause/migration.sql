-- What a failed call failed of, the same for every call of one outage (a give-up message's attempt
-- count and minutes left out): the Problems page groups by it as stored, instead of parsing messages.
ALTER TABLE "OutboundCall" ADD COLUMN "cause" TEXT;

-- Rows written before the column: their cause read once from the message the pipeline wrote
-- (chr(59) is the semicolon of that message: the offline migration runner splits statements at each one).
UPDATE "OutboundCall"
   SET "cause" = regexp_replace("lastError", '^gave up after [0-9]+ attempts' || chr(59) || ' last: (.*) [(]retried for [0-9]+ min[)]$', 'Gave up retrying: \1')
 WHERE "lastError" IS NOT NULL;
