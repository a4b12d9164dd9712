
/**
 * The fake Admin's storefront side: the app installation and its app-data metafields
 * (`currentAppInstallation`, `metafieldsSet`, `metafieldsDelete`) and the live theme's
 * `config/settings_data.json` (`themes(roles: [MAIN])`), where an enabled app embed appears.
 */

/** The app's id in the fake Admin (`App.id`). */
export const FAKE_APP_GID = "gid://shopify/App/7042816";

export type EmbedState = "absent" | "enabled" | "disabled";

export interface FakeStorefrontAdmin {
  /** The app-data metafields of a shop's installation, `namespace.key` → { type, value }. */
  metafields(shop: string): Map<string, { type: string; value: string }>;
  /** What the live theme's settings_data.json says about the app embed. */
  setEmbed(shop: string, state: EmbedState, blockHandle?: string): void;
  /** The settings of the app's web pixel on a shop, once the app created it. */
  webPixelSettings(shop: string): string | undefined;
  /** Answer the theme query with an error (a theme that cannot be read). */
  failThemes(shop: string, fail: boolean): void;
}

/** What the resolvers need of a fake Admin (declared here: fake-admin.ts installs them, so importing it would be a cycle). */
interface GraphqlHost {
  onGraphql(match: string, resolver: (query: string, variables: Record<string, unknown>, shop: string) => unknown): void;
}

const installed = new WeakMap<GraphqlHost, FakeStorefrontAdmin>();

/** The storefront fake of an Admin (installed by startFakeAdmin). */
export function storefrontAdmin(admin: GraphqlHost): FakeStorefrontAdmin {
  const found = installed.get(admin);
  if (!found) throw new Error("fake admin without the storefront resolvers");
  return found;
}

export function installStorefrontResolvers(admin: GraphqlHost): void {
  const metafields = new Map<string, Map<string, { type: string; value: string }>>();
  const embeds = new Map<string, { state: EmbedState; handle: string }>();
  const failing = new Set<string>();
  const installationId = (shop: string) => `gid://shopify/AppInstallation/${[...shop].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)}`;
  const of = (shop: string) => {
    if (!metafields.has(shop)) metafields.set(shop, new Map());
    return metafields.get(shop)!;
  };

  // AppInstallation.app is App! (Shopify's schema): the app's own id, the same on every shop.
  admin.onGraphql("currentAppInstallation", (_q, _v, shop) => ({ currentAppInstallation: { id: installationId(shop), app: { id: FAKE_APP_GID } } }));

  admin.onGraphql("metafieldsSet(", (_q, variables, shop) => {
    const inputs = (variables.metafields ?? []) as { ownerId: string; namespace: string; key: string; type: string; value: string }[];
    const userErrors: { field: string[]; message: string }[] = [];
    inputs.forEach((m, i) => {
      if (m.ownerId !== installationId(shop)) userErrors.push({ field: ["metafields", String(i), "ownerId"], message: "Owner does not exist" });
      if (m.type === "json") {
        try {
          JSON.parse(m.value);
        } catch {
          userErrors.push({ field: ["metafields", String(i), "value"], message: "Value is invalid JSON" });
        }
      }
    });
    if (userErrors.length) return { metafieldsSet: { metafields: [], userErrors } };
    const stored = inputs.map((m) => {
      of(shop).set(`${m.namespace}.${m.key}`, { type: m.type, value: m.value });
      return { id: `gid://shopify/Metafield/${of(shop).size}`, namespace: m.namespace, key: m.key };
    });
    return { metafieldsSet: { metafields: stored, userErrors: [] } };
  });

  admin.onGraphql("metafieldsDelete(", (_q, variables, shop) => {
    const inputs = (variables.metafields ?? []) as { namespace: string; key: string }[];
    for (const m of inputs) of(shop).delete(`${m.namespace}.${m.key}`);
    return { metafieldsDelete: { deletedMetafields: inputs, userErrors: [] } };
  });

  const pixels = new Map<string, string>();
  admin.onGraphql("webPixelCreate(", (_q, variables, shop) => {
    if (pixels.has(shop)) return { webPixelCreate: { webPixel: null, userErrors: [{ code: "TAKEN", field: ["webPixel"], message: "Web pixel is taken." }] } };
    try {
      JSON.parse(String(variables.settings));
    } catch {
      return { webPixelCreate: { webPixel: null, userErrors: [{ code: "INVALID_SETTINGS", field: ["settings"], message: "Settings are invalid JSON" }] } };
    }
    pixels.set(shop, String(variables.settings));
    return { webPixelCreate: { webPixel: { id: `gid://shopify/WebPixel/${pixels.size}`, settings: variables.settings }, userErrors: [] } };
  });

  admin.onGraphql("themes(", (_q, _v, shop) => {
    if (failing.has(shop)) throw new Error("theme files unavailable");
    const embed = embeds.get(shop) ?? { state: "absent", handle: "tracker-embed" };
    const blocks: Record<string, unknown> = {
      // Another app's embed: must not be mistaken for ours.
      "4431871129946000001": { type: "shopify://apps/other-app/blocks/chat/aaaa-bbbb", disabled: false, settings: {} },
    };
    if (embed.state !== "absent") {
      blocks["13178491254896453321"] = {
        type: `shopify://apps/marketing-sync/blocks/${embed.handle}/8c1b9c6e-0f3a-4a0e-9d7e-2f1c3b4a5d6e`,
        disabled: embed.state === "disabled",
        settings: {},
      };
    }
    // Shopify writes settings_data.json with a comment header.
    const content = `/*\n * ------------------------------------------------------------\n * IMPORTANT: The contents of this file are auto-generated.\n * ------------------------------------------------------------\n */\n${JSON.stringify({ current: { sections: {}, blocks }, presets: {} }, null, 2)}`;
    return {
      themes: {
        nodes: [
          {
            id: "gid://shopify/OnlineStoreTheme/1001",
            name: "Dawn",
            role: "MAIN",
            files: { nodes: [{ filename: "config/settings_data.json", body: { __typename: "OnlineStoreThemeFileBodyText", content } }] },
          },
        ],
      },
    };
  });

  installed.set(admin, {
    metafields: of,
    setEmbed: (shop, state, handle = "tracker-embed") => embeds.set(shop, { state, handle }),
    webPixelSettings: (shop) => pixels.get(shop),
    failThemes: (shop, fail) => (fail ? failing.add(shop) : failing.delete(shop)),
  });
}
