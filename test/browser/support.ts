// What every browser suite needs: Debian's Chromium (through playwright-core) and a folder of its
// own for screenshots, emptied at the start so a reader sees only this run's pictures.
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { chromiumPath } from "./chromium";

export function findChromium(): string {
  const found = chromiumPath();
  if (found) return found;
  throw new Error("Browser tests need Chromium and it is not installed: run scripts/ensure-chromium.sh (apt-get install chromium) or set CHROMIUM_PATH.");
}

/**
 * A browser test's deadline for a hang, never for speed: a step that waits for a page's state (a
 * locator, a toast, a stored value) fails only past it. Under load (4 CPU-heavy processes beside
 * the suite on 2 cores) a step took longer than the 60 s this used to be.
 */
export const HANG_MS = 240_000;

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
