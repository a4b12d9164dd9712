// What every browser suite needs: Debian's Chromium (through playwright-core) and a folder of its
// own for screenshots, emptied at the start so a reader sees only this run's pictures.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export function findChromium(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const bin of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" }).trim();
    } catch {
      // try the next name
    }
  }
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  throw new Error("Browser tests need Chromium and it is not installed: run scripts/ensure-chromium.sh (apt-get install chromium) or set CHROMIUM_PATH.");
}

export function launchChromium(): Promise<Browser> {
  // Playwright gives a launch 30 s; a busy machine has taken longer.
  return chromium.launch({ executablePath: findChromium(), args: ["--no-sandbox", "--disable-dev-shm-usage"], timeout: 120_000 });
}

/** test/browser/screenshots/<suite>/ (git-ignored), empty. */
export function screenshotDir(suite: string): string {
  const dir = path.join(import.meta.dirname, "screenshots", suite);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Waits until the admin page is hydrated: the fake Admin's App Bridge stub is there and the app's
 * layout has called shopify.loading() from its first effect. A click before that is the browser's own
 * (a full-page form submit), and React's hydration then resets a select the test had just chosen.
 */
export async function waitForHydration(page: Page): Promise<void> {
  await page.waitForFunction(() => ((window as { shopify?: { __loadingCalls?: number } }).shopify?.__loadingCalls ?? 0) > 0);
}
