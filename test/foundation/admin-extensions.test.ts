// The admin UI extensions' TOML and code name what Shopify and the app expect: the target Shopify
// offers on the page, the app's API version, a module that exists, and an app route that exists.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MIRROR_PATH } from "../../extensions/segment-sync-tag/src/mirror";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (p: string) => readFileSync(path.join(ROOT, p), "utf8");
/** `key = "value"` lines of one TOML section (the text up to the next `[` header; null: the top). */
function tomlValues(text: string, header: string | null): Record<string, string> {
  const parts = text.split(/^(\[\[?[^\]\n]+\]\]?)\s*$/m);
  const body = header === null ? parts[0] : parts[parts.indexOf(header) + 1] ?? "";
  return Object.fromEntries([...body.matchAll(/^\s*([\w-]+)\s*=\s*"([^"\n]*)"\s*$/gm)].map((m) => [m[1], m[2]]));
}
/** The URL path a Remix flat route file answers (dots are slashes; no params in these). */
const routePath = (file: string) => `/${path.basename(file).replace(/\.tsx?$/, "").split(".").join("/")}`;

describe("the segment action extension (extensions/segment-sync-tag)", () => {
  const dir = "extensions/segment-sync-tag";
  const toml = read(`${dir}/shopify.extension.toml`);

  it("is a ui_extension on Shopify's customer segment details action target (the Use segment modal), at the app's API version", () => {
    const app = read("shopify.app.toml");
    expect(tomlValues(toml, null).api_version).toBe(/^api_version\s*=\s*"([^"]+)"/m.exec(app)![1]);
    expect(tomlValues(toml, "[[extensions]]")).toMatchObject({ type: "ui_extension", handle: "segment-sync-tag", name: "t:name" });
    // Shopify's admin extension targets (ui-extensions, src/surfaces/admin/extension-targets.ts):
    // "Renders an admin action extension in the customer segment details page. Open this extension
    // from the "Use segment" button."
    expect(tomlValues(toml, "[[extensions.targeting]]").target).toBe("admin.customer-segment-details.action.render");
    expect(toml.match(/^\[\[extensions\.targeting\]\]/gm)).toHaveLength(1);
  });

  it("names a module that exists and exports the extension, and a name its locale gives", async () => {
    const modulePath = tomlValues(toml, "[[extensions.targeting]]").module;
    expect(existsSync(path.join(ROOT, dir, modulePath))).toBe(true);
    const mod = (await import(path.join(ROOT, dir, modulePath))) as { default: unknown };
    expect(typeof mod.default).toBe("function");
    const locale = JSON.parse(read(`${dir}/locales/en.default.json`)) as { name?: string };
    expect(locale.name?.length).toBeGreaterThan(0);
  });

  it("calls an app route that exists, and imports nothing outside its own folder (Shopify bundles it alone)", () => {
    const routes = readdirSync(path.join(ROOT, "app/routes")).filter((f) => /\.tsx?$/.test(f)).map(routePath);
    expect(routes).toContain(MIRROR_PATH);
    for (const file of readdirSync(path.join(ROOT, dir, "src"))) {
      const imports = [...read(`${dir}/src/${file}`).matchAll(/^import\s[^'"]*["']([^"']+)["']/gm)].map((m) => m[1]);
      expect(imports.filter((i) => !i.startsWith("./")), file).toEqual([]);
    }
  });
});
