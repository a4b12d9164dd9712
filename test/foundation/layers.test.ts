import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The floors `npm run lint` enforces (.dependency-cruiser.cjs) are the ones docs/architecture.md
// draws under "Layers": one list, so the diagram cannot drift from the rules.
const ROOT = path.resolve(import.meta.dirname, "../..");
const APP = path.join(ROOT, "app");

interface Floor {
  name: string;
  paths: string[];
}

const { FLOORS } = createRequire(import.meta.url)(path.join(ROOT, ".dependency-cruiser.cjs")) as { FLOORS: Floor[] };

/** The ```floors block of the Layers section, top floor first as drawn; returned bottom first, as the rules list them. */
function documentedFloors(markdown: string): Floor[] {
  const section = /^## Layers\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1] ?? "";
  const block = /^```floors\n([\s\S]*?)^```/m.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/architecture.md: no ```floors block in the "Layers" section');
  return block
    .split("\n")
    .filter((line) => /^\S/.test(line))
    .map((line) => {
      const [name, ...paths] = line.trim().split(/\s+/);
      return { name, paths };
    })
    .reverse();
}

/** The floor of a module: that of the most specific entry it falls under (a file, else the longest folder). */
function floorOf(file: string): string | undefined {
  let best: { name: string; length: number } | undefined;
  for (const floor of FLOORS) {
    for (const entry of floor.paths) {
      const hit = entry.endsWith("/") ? file.startsWith(entry) : file === entry;
      if (hit && (!best || entry.length > best.length)) best = { name: floor.name, length: entry.length };
    }
  }
  return best?.name;
}

function modules(dir = ""): string[] {
  return readdirSync(path.join(APP, dir)).flatMap((name) => {
    const rel = dir ? `${dir}/${name}` : name;
    if (rel === "generated") return [];
    if (statSync(path.join(APP, rel)).isDirectory()) return modules(rel);
    return /\.(ts|tsx)$/.test(name) ? [rel] : [];
  });
}

describe("the floors of app/", () => {
  it("are drawn in docs/architecture.md as the lint rules list them", () => {
    const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
    expect(documentedFloors(doc)).toEqual(FLOORS);
  });

  it("name only folders and files that exist", () => {
    const missing = FLOORS.flatMap((f) => f.paths).filter((entry) => !existsSync(path.join(APP, entry)));
    expect(missing).toEqual([]);
  });

  it("give every module of app/ a floor", () => {
    expect(modules().filter((file) => !floorOf(file))).toEqual([]);
  });

  it("a module takes its floor's name, and the parser reads a drawn block", () => {
    expect(floorOf("secrets.server.ts")).toBe("base");
    expect(floorOf("shops/connection.server.ts")).toBe("shops");
    expect(floorOf("pipeline/runner.server.ts")).toBe("engine");
    expect(floorOf("jobs/index.server.ts")).toBe("top");
    const drawn = "## Layers\n\n```floors\ntop   jobs/ routes/\n        why\nbase  db/\n```\n\n## Next\n";
    expect(documentedFloors(drawn)).toEqual([
      { name: "base", paths: ["db/"] },
      { name: "top", paths: ["jobs/", "routes/"] },
    ]);
  });
});
