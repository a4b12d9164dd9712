// The environment every test process starts from. Values are for tests only.
export const TEST_API_KEY = "test-app-key";
export const TEST_API_SECRET = "test-app-secret-0123456789";
export const TEST_ENCRYPTION_KEY = "a".repeat(64);

export function applyTestEnv(extra: Record<string, string> = {}): void {
  Object.assign(process.env, {
    SHOPIFY_API_KEY: TEST_API_KEY,
    SHOPIFY_API_SECRET: TEST_API_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SHOPIFY_APP_URL: "http://localhost:3000",
    SCOPES: "read_customers,write_customers,read_orders,read_products,read_checkouts",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    RUN_WORKER_IN_PROCESS: "false",
    ...extra,
  });
  delete process.env.DATABASE_URL;
}
