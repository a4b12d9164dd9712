// The Storefront page's "Tracker embed" state is read from the live theme's settings_data.json.
// Only this app's embed counts: another app's block that is also named "tracker-embed" is not
// taken for ours, so the merchant is not told the tracker is on while it never loads.
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadData, openPage, routeData } from "../admin/support";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";

const SHOP = "embed-other.myshopify.com";
const OTHER_APPS_EMBED = "shopify://apps/some-analytics-app/blocks/tracker-embed/1234abcd-0000-4000-8000-000000000000";
const OUR_EMBED = "shopify://apps/marketing-sync/blocks/tracker-embed/8c1b9c6e-0f3a-4a0e-9d7e-2f1c3b4a5d6e";
let h: PipelineHarness;
/** The live theme's app embeds: block type → switched off. */
let embeds: Record<string, boolean> = {};

beforeAll(async () => {
  h = await startPipelineHarness();
  expect((await openPage(h.app.url, SHOP, "/app")).status).toBe(200);
  await h.connect(SHOP);
  // Later resolvers win in the fake Admin: the live theme holds the embeds of `embeds`.
  h.app.admin.onGraphql("themes(", () => {
    const blocks = Object.fromEntries(Object.entries(embeds).map(([type, disabled], i) => [`44318711299460000${i}`, { type, disabled, settings: {} }]));
    const content = `/*\n * auto-generated\n */\n${JSON.stringify({ current: { sections: {}, blocks }, presets: {} })}`;
    return { themes: { nodes: [{ id: "gid://shopify/OnlineStoreTheme/1001", name: "Dawn", role: "MAIN", files: { nodes: [{ filename: "config/settings_data.json", body: { __typename: "OnlineStoreThemeFileBodyText", content } }] } }] } };
  });
});
afterAll(() => h.close());

const embedState = async () => (await routeData<{ embed: { state: string } }>(await loadData(h.app.url, SHOP, "/app/storefront"), "routes/app.storefront")).embed.state;

it("another app's embed named tracker-embed, switched on, is not taken for ours", async () => {
  embeds = { [OTHER_APPS_EMBED]: false };
  expect(await embedState()).toBe("not_added");
});

it("ours switched off beside another app's switched on: off", async () => {
  embeds = { [OTHER_APPS_EMBED]: false, [OUR_EMBED]: true };
  expect(await embedState()).toBe("disabled");
});

it("ours switched on: on", async () => {
  embeds = { [OTHER_APPS_EMBED]: true, [OUR_EMBED]: false };
  expect(await embedState()).toBe("enabled");
});
