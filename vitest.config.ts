import { configDefaults, defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";
import { chromiumPath } from "./test/browser/chromium";

// The browser tests need Chromium: `npm test`'s pretest installs Debian's where it can
// (scripts/ensure-chromium.sh). Where it could not, they are left out and the run says so loudly
// (test/global-setup.ts), except on CI (CI=true, .ci/run), which requires them: there they fail.
const browserTestsOff = !process.env.CI && !chromiumPath();
if (browserTestsOff) process.env.BROWSER_TESTS_NOT_RUN = "no Chromium (scripts/ensure-chromium.sh could not install it; or set CHROMIUM_PATH)";

const TEST_FILES = ["test/**/*.test.ts", "test/**/*.test.tsx", "app/**/*.test.ts"];
const exclude = [...configDefaults.exclude, ...(browserTestsOff ? ["test/browser/**"] : [])];
const OWN_PROCESS = ["test/pipeline/ack-journal-disk-full.test.ts"];

// The Remix vite plugin is left out on purpose: tests load the app through test/support/app.ts.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    environment: "node",
    // Deadlines for a hang, not for speed: on 2 cores beside other work (load average 25,
    // 2026-11-27) a file's set-up took over 60 s and single tests over 30 s.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // expect.poll waits for a state; its own default (1 s) is a speed bet a busy machine loses.
    expect: { poll: { timeout: 60_000 } },
    pool: "forks",
    projects: [
      // Test files share their worker process (and its loaded modules): the built app and the app's
      // sources were imported again for each file (docs/performance.md, Test suite). Each
      // file still gets its own database, the fake Admin reset and the config re-read
      // (test/support/app.ts).
      { extends: true, test: { name: "shared", isolate: false, include: TEST_FILES, exclude: [...exclude, ...OWN_PROCESS] } },
      // A file that mocks a module the app imports needs the app's modules loaded afresh under its
      // mock (vi.resetModules() would hand those copies on to the files after it).
      { extends: true, test: { name: "own-process", isolate: true, include: OWN_PROCESS, exclude } },
    ],
    globalSetup: ["test/global-setup.ts"],
  },
});
