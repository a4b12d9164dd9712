// shopify.app.toml, the extensions' TOML files and the app's code name the same things.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STOREFRONT_POLICY } from "~/storefront/storefront-policy";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (p: string) => readFileSync(path.join(ROOT, p), "utf8");
/** `key = "value"` inside a `[table]` of a TOML text (flat tables only, as these files use). */
function tomlValue(text: string, table: string | null, key: string): string | undefined {
  const body = table ? (text.split(new RegExp(`^\\[${table.replace(".", "\\.")}\\]\\s*$`, "m"))[1] ?? "").split(/^\[/m)[0] : text.split(/^\[/m)[0];
  return new RegExp(`^\\s*${key}\\s*=\\s*"?([^"\\n]*)"?\\s*$`, "m").exec(body)?.[1]?.trim();
}

describe("storefront configuration", () => {
  const app = read("shopify.app.toml");

  it("the app proxy forwards /apps/marketing-sync/* to the app's /proxy/* route, where events are received", () => {
    expect(new URL(tomlValue(app, "app_proxy", "url")!).pathname).toBe("/proxy");
    expect(`/${tomlValue(app, "app_proxy", "prefix")}/${tomlValue(app, "app_proxy", "subpath")}`).toBe(STOREFRONT_POLICY.appProxyPath);
    expect(existsSync(path.join(ROOT, "app/routes/proxy.events.tsx"))).toBe(true);
    expect(read("extensions/storefront-events/src/index.ts")).toContain(`"${STOREFRONT_POLICY.appProxyPath}"`);
    // The theme embed's loader posts signups there too (visitor_identified).
    expect(read("extensions/marketing-sync-theme/assets/tracker-loader.js")).toContain(`"${STOREFRONT_POLICY.appProxyPath}/events"`);
  });

  it("the app's handle is the one the Storefront page looks for in a theme's embed blocks", () => {
    expect(tomlValue(app, null, "handle")).toBe(STOREFRONT_POLICY.appHandle);
  });

  it("asks for the scopes the storefront needs (pixels, customer events, themes, app proxy)", () => {
    const scopes = tomlValue(app, "access_scopes", "scopes")!.split(",");
    expect(scopes).toEqual(expect.arrayContaining(["write_pixels", "read_customer_events", "read_themes", "write_app_proxy"]));
  });

  it("the theme extension's embed block is the one the app links to and reads the metafield the app writes", () => {
    const toml = read("extensions/marketing-sync-theme/shopify.extension.toml");
    expect(tomlValue(toml, null, "type")).toBe("theme");
    const block = read(`extensions/marketing-sync-theme/blocks/${STOREFRONT_POLICY.embedBlockHandle}.liquid`);
    expect(block).toContain(`app.metafields.${STOREFRONT_POLICY.metafieldNamespace}.${STOREFRONT_POLICY.metafieldKey}.value`);
    const schema = JSON.parse(/{% schema %}([\s\S]*){% endschema %}/.exec(block)![1]) as { target: string };
    expect(schema.target).toBe("head");
  });

  it("the web pixel is a strict-sandbox web_pixel_extension that runs only with analytics and marketing consent", () => {
    const toml = read("extensions/storefront-events/shopify.extension.toml");
    expect(tomlValue(toml, null, "type")).toBe("web_pixel_extension");
    expect(tomlValue(toml, null, "runtime_context")).toBe("strict");
    expect(tomlValue(toml, "customer_privacy", "analytics")).toBe("true");
    expect(tomlValue(toml, "customer_privacy", "marketing")).toBe("true");
    expect(toml).toContain("[settings.fields.proxyPath]");
  });
});
