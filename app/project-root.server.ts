import { existsSync } from "node:fs";
import path from "node:path";

/**
 * The repository's root (where package.json is), from source (app/…) and from the build
 * (build/server/assets/…) alike: bundling moves modules, so `import.meta.dirname` + a fixed
 * "../.." would point elsewhere in one of the two.
 */
export function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(import.meta.dirname);
