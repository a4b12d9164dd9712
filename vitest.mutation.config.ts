import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// Only the fast, pure unit tests that StrykerJS runs once per mutant (npm run test:mutation):
// no global setup, so the app is not built and no database or server is started.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    include: ["test/pipeline/policy.test.ts", "test/unit/**/*.test.ts"],
    environment: "node",
    pool: "threads",
  },
});
