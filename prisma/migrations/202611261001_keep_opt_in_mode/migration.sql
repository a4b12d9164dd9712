-- The default consent mode becomes trust_shopify (keep Shopify's recorded consent). Shops stored
-- before keep the mode they had: the old default, double_opt_in, is written where none was chosen.
UPDATE "Shop" SET settings = jsonb_set(settings, '{optInMode}', '"double_opt_in"')
 WHERE jsonb_typeof(settings) = 'object' AND NOT (settings ? 'optInMode');
