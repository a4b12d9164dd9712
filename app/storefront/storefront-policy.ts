/** Every number of the storefront in one place (app/storefront). */
export const STOREFRONT_POLICY = {
  /**
   * A storefront event body larger than this is refused (400) before it is parsed. The web pixel
   * keeps its bodies under it (MAX_BODY_BYTES in extensions/storefront-events): a 100-line cart fits.
   */
  maxEventBytes: 64 * 1024,
  /**
   * Fixed-window rate limits, counted in the database (StorefrontRateWindow), so they hold across
   * every app process on one PostgreSQL rather than multiplying with them. An event must pass all
   * three, address first (rate-limit.server.ts).
   */
  rateWindowMs: 60_000,
  /** Per visitor (customer, tracker id, else address): a person browsing fast stays far below it. */
  eventsPerVisitorPerWindow: 30,
  /** Per client address (IPv6 per /64): the sender picks its visitor id, not its address; room for a few visitors behind one NAT. */
  eventsPerClientPerWindow: 120,
  /** Per shop, whatever the senders: bounds the calls queued and rows written by many addresses (100/s, above a big store's busiest minute). */
  eventsPerShopPerWindow: 6_000,
  /** The tracker snippet in the metafield is refreshed this often by the worker. */
  trackerRefreshMs: 24 * 3_600_000,
  /** After a failed refresh (service or Admin API down), try again this much later. */
  trackerRetryMs: 15 * 60_000,
  /**
   * Longest wait for a shop's Admin API budget per call when Shopify throttles: then the refresh
   * fails (retried trackerRetryMs later) or the page says the theme cannot be read just now. Short:
   * the calls run in the merchant's requests too (connect, disconnect, the Storefront page).
   */
  adminWaitMs: 5_000,
  /** One worker holds a shop's refresh this long (longer than the two calls' timeouts). */
  trackerLeaseMs: 2 * 60_000,
  /** The metafield the theme app embed reads (`app.metafields.marketing_sync.tracker`). */
  metafieldNamespace: "marketing_sync",
  metafieldKey: "tracker",
  /** The theme app embed block (extensions/marketing-sync-theme/blocks/tracker-embed.liquid). */
  embedBlockHandle: "tracker-embed",
  /**
   * The app's handle on Shopify (`handle` in shopify.app.toml; a test holds the two together): a theme names our embed
   * `shopify://apps/{appHandle}/blocks/{embedBlockHandle}/{extension uid}`; another app's block of
   * the same name differs here.
   */
  appHandle: "marketing-sync",
  /** Where the storefront reaches the app: `/{prefix}/{subpath}` of [app_proxy] in shopify.app.toml. */
  appProxyPath: "/apps/marketing-sync",
} as const;
