// Where the browser tests' Chromium is (Debian's, driven by playwright-core), or undefined. Kept
// apart from support.ts so that vitest.config.ts can ask without loading playwright-core.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export function chromiumPath(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const bin of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" }).trim();
    } catch {
      // try the next name
    }
  }
  return existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined;
}
