import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// The Remix vite plugin is left out on purpose: tests load the app through test/support/app.ts.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx", "app/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
  },
});
