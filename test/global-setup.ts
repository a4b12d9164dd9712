import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

// Tests drive the production build over HTTP (build/server/runtime.js: the Remix handler and the
// process API built together): build it when any app source is newer than it.
export default function setup(): (() => void) | undefined {
  const notRun = process.env.BROWSER_TESTS_NOT_RUN;
  const warn = () => notRun && console.warn(`\n!!! The browser tests (test/browser) DID NOT RUN: ${notRun}. !!!\n`);
  warn();
  if (process.env.SKIP_APP_BUILD === "1") return warn;
  const built = path.join(root, "build/server/runtime.js");
  if (existsSync(built) && statSync(built).mtimeMs > newestSource(path.join(root, "app"))) return warn;
  execFileSync(process.execPath, [path.join(root, "node_modules/@remix-run/dev/dist/cli.js"), "vite:build"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return warn;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return Math.max(newest, statSync(path.join(root, "vite.config.ts")).mtimeMs, statSync(path.join(root, "package.json")).mtimeMs);
}
