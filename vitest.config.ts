import { configDefaults, defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";
import { chromiumPath } from "./test/browser/chromium";

// The browser tests need Chromium: `npm test`'s pretest installs Debian's where it can
// (scripts/ensure-chromium.sh). Where it could not, they are left out and the run says so loudly
// (test/global-setup.ts), except on CI (CI=true, .ci/run), which requires them: there they fail.
const browserTestsOff = !process.env.CI && !chromiumPath();
if (browserTestsOff) process.env.BROWSER_TESTS_NOT_RUN = "no Chromium (scripts/ensure-chromium.sh could not install it; or set CHROMIUM_PATH)";

// The Remix vite plugin is left out on purpose: tests load the app through test/support/app.ts.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx", "app/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(browserTestsOff ? ["test/browser/**"] : [])],
    environment: "node",
    // Deadlines for a hang, not for speed: on 2 cores beside other work (load average 25,
    // 2026-11-27) a file's set-up took over 60 s and single tests over 30 s.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // expect.poll waits for a state; its own default (1 s) is a speed bet a busy machine loses.
    expect: { poll: { timeout: 60_000 } },
    pool: "forks",
    // Test files share their worker process (and its loaded modules): importing the built app and
    // the app's sources again for each of 150 files was about a quarter of the suite's CPU time
    // (test/foundation + test/admin: 188 → 144 CPU-s, 2026-11-28). Each file still gets its own
    // database, fake Admin calls reset and config re-read (test/support/app.ts); a file that needs a
    // module run afresh says so with vi.resetModules().
    isolate: false,
    globalSetup: ["test/global-setup.ts"],
  },
});
