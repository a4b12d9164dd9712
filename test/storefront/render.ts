import { readFileSync } from "node:fs";
import path from "node:path";
import { Liquid, type TagToken, type TopLevelToken } from "liquidjs";

export const THEME_EXTENSION = path.resolve(import.meta.dirname, "../../extensions/marketing-sync-theme");
export const EMBED_BLOCK = path.join(THEME_EXTENSION, "blocks/tracker-embed.liquid");

/**
 * Renders the tracker embed as the storefront would: `app.metafields.marketing_sync.tracker`
 * holds the metafield (its `.value` parsed from JSON, as Shopify does for type json),
 * `asset_url` points at `assetBase`. `{% schema %}` renders nothing, as on Shopify. `designMode`:
 * rendered in the theme editor's preview (`request.design_mode`).
 */
export async function renderEmbed(
  metafield: { type: string; value: string } | undefined,
  assetBase = "https://cdn.shopify.example/extensions/assets/",
  { designMode = false }: { designMode?: boolean } = {},
): Promise<string> {
  const engine = new Liquid({ strictFilters: true });
  engine.registerFilter("asset_url", (name: string) => `${assetBase}${name}`);
  engine.registerTag("schema", {
    parse(_token: TagToken, remain: TopLevelToken[]) {
      // The block's settings, read by Shopify, never rendered.
      while (remain.length) {
        const t = remain.shift() as TopLevelToken & { name?: string };
        if (t.name === "endschema") return;
      }
      throw new Error("{% schema %} without {% endschema %}");
    },
    render() {
      return "";
    },
  });
  const tracker = metafield ? { type: metafield.type, value: metafield.type === "json" ? JSON.parse(metafield.value) : metafield.value } : undefined;
  return engine.parseAndRender(readFileSync(EMBED_BLOCK, "utf8"), {
    app: { metafields: tracker ? { marketing_sync: { tracker } } : {} },
    request: { design_mode: designMode },
  });
}
