import { resetConfigForTests } from "~/config.server";
// The environment every test process starts from. Values are for tests only.
export const TEST_API_KEY = "test-app-key";
export const TEST_API_SECRET = "test-app-secret-0123456789";
export const TEST_ENCRYPTION_KEY = "a".repeat(64);

let appliedExtras: string[] = [];

/**
 * Sets the test environment. Extras from an earlier call are removed first, and the cached
 * config is dropped, so one suite's settings (a short timeout, say) never leak into the next.
 */
export function applyTestEnv(extra: Record<string, string> = {}): void {
  for (const name of appliedExtras) delete process.env[name];
  appliedExtras = Object.keys(extra);
  Object.assign(process.env, {
    SHOPIFY_API_KEY: TEST_API_KEY,
    SHOPIFY_API_SECRET: TEST_API_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SHOPIFY_APP_URL: "http://localhost:3000",
    SCOPES: "write_customers,read_orders,read_all_orders,read_products,read_customer_events,write_pixels,read_own_subscription_contracts,read_customer_merge,write_app_proxy,read_themes,write_marketing_events",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    RUN_WORKER_IN_PROCESS: "false",
    // A test that reaches for the process database after its own was closed must never open
    // the developer's data directory.
    PGLITE_DATA_DIR: "memory://",
    ...extra,
  });
  delete process.env.DATABASE_URL;
  resetConfigForTests();
}
