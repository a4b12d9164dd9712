import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// The Remix vite plugin is left out on purpose: tests load the app through test/support/app.ts.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx", "app/**/*.test.ts"],
    environment: "node",
    // Deadlines for a hang, not for speed: on 2 cores beside other work (load average 25,
    // 2026-11-27) a file's set-up took over 60 s and single tests over 30 s.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    globalSetup: ["test/global-setup.ts"],
  },
});
