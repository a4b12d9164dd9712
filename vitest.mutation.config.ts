import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// Only the fast, pure tests that StrykerJS runs once per mutant (npm run test:mutation): no global
// setup, so the app is not built and no database or server is started. A test that needs the built
// app, a database or a server does not belong here.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    include: [
      "test/pipeline/policy.test.ts",
      "test/unit/**/*.test.ts",
      "test/foundation/topics.test.ts",
      "test/sync/blanks.test.ts",
      "test/sync/catalog.test.ts",
      "test/sync/consent-doc.test.ts",
      "test/sync/consent.test.ts",
      "test/sync/customers.test.ts",
      "test/sync/event-mapping.test.ts",
      "test/sync/golden.test.ts",
      "test/sync/orders.test.ts",
      "test/sync/plan-keys.test.ts",
      "test/sync/primitives.test.ts",
    ],
    environment: "node",
    pool: "threads",
  },
});
