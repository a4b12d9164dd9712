-- A disconnect whose removal of the storefront tracker failed (Shopify did not answer, or refused)
-- is remembered, so the worker retries it until the storefront stops loading the old account's tracker.
ALTER TABLE "StorefrontState" ADD COLUMN "removalPending" BOOLEAN NOT NULL DEFAULT false;
