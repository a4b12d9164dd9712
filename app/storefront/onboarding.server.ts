import { z } from "zod";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { adminQuery } from "../shopify/admin-api.server";
import { parseSettings } from "../sync/settings";
import { prisma } from "../db.server";
import { storefrontEventCounts } from "./events.server";
import { STOREFRONT_POLICY } from "./storefront-policy";
import { trackerOnStorefront, type EmbedState } from "./tracker-state";
import { trackerStatus } from "./tracker.server";
import { messageOf } from "../errors";

/**
 * What the Storefront page shows: is the tracker embed on in the live theme (read from the
 * theme's config/settings_data.json), a link that turns it on, what the metafield holds, when
 * the tracker last saw an event, and what became of storefront events. The page's one entry.
 */

const THEME_QUERY = `#graphql
  query MarketingSyncLiveTheme {
    themes(first: 1, roles: [MAIN]) {
      nodes {
        id
        name
        files(filenames: ["config/settings_data.json"], first: 1) {
          nodes { filename body { ... on OnlineStoreThemeFileBodyText { content } } }
        }
      }
    }
  }`;

const themeAnswerSchema = z.object({
  themes: z.object({
    nodes: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        files: z.object({ nodes: z.array(z.object({ filename: z.string(), body: z.object({ content: z.string().optional() }).passthrough() })) }),
      }),
    ),
  }),
});

const settingsDataSchema = z.object({
  current: z.union([
    z.object({ blocks: z.record(z.string(), z.object({ type: z.string(), disabled: z.boolean().optional() }).passthrough()).optional() }).passthrough(),
    z.string(), // a preset name: its blocks live under presets, which never hold app embeds
  ]),
});

export type { EmbedState } from "./tracker-state";

/**
 * The embed's state in a settings_data.json text. Shopify writes it with a comment header,
 * which JSON.parse refuses: a leading block comment is dropped first.
 */
export function embedStateIn(
  settingsData: string,
  blockHandle: string = STOREFRONT_POLICY.embedBlockHandle,
  appHandle: string = STOREFRONT_POLICY.appHandle,
): EmbedState {
  let parsed: z.infer<typeof settingsDataSchema>;
  try {
    parsed = settingsDataSchema.parse(JSON.parse(settingsData.replace(/^\s*\/\*[\s\S]*?\*\//, "")));
  } catch {
    return "unknown";
  }
  if (typeof parsed.current === "string") return "not_added";
  // Only this app's block: another app may have an embed of the same name.
  const ours = Object.values(parsed.current.blocks ?? {}).filter((b) => b.type.startsWith(`shopify://apps/${appHandle}/blocks/${blockHandle}/`));
  if (!ours.length) return "not_added";
  return ours.some((b) => b.disabled !== true) ? "enabled" : "disabled";
}

/** The theme editor, opened on the app embeds with ours switched on (the merchant saves). */
export function activateEmbedUrl(shop: string): string {
  return `https://${shop}/admin/themes/current/editor?context=apps&activateAppId=${encodeURIComponent(config().apiKey)}/${STOREFRONT_POLICY.embedBlockHandle}`;
}

export interface EmbedView {
  state: EmbedState;
  themeName: string | null;
  error: string | null;
  /** the theme editor with the embed switched on (the merchant saves) */
  activateUrl: string;
}

/**
 * The embed in the live theme, read from Shopify: the one source of the Storefront page and the
 * home page. Never throws: a theme that cannot be read is "unknown" with the reason.
 */
export async function liveThemeEmbed(shop: string): Promise<EmbedView> {
  const activateUrl = activateEmbedUrl(shop);
  try {
    const answer = themeAnswerSchema.parse(await adminQuery(shop, THEME_QUERY, {}, { maxWaitMs: STOREFRONT_POLICY.adminWaitMs }));
    const theme = answer.themes.nodes[0];
    if (!theme) return { state: "unknown", themeName: null, error: "The store has no published theme.", activateUrl };
    const content = theme.files.nodes.find((f) => f.filename === "config/settings_data.json")?.body.content;
    return { state: content ? embedStateIn(content) : "not_added", themeName: theme.name, error: null, activateUrl };
  } catch (error) {
    logger().warn({ shop, err: messageOf(error) }, "live theme not readable");
    return { state: "unknown", themeName: null, error: "The live theme could not be read from Shopify just now.", activateUrl };
  }
}

export async function storefrontOverview(shop: string) {
  const row = await prisma().shop.findUnique({ where: { domain: shop }, select: { settings: true, serviceKeyEnc: true } });
  const settings = parseSettings(row?.settings ?? {});
  const [embed, tracker, events] = await Promise.all([liveThemeEmbed(shop), trackerStatus(shop), storefrontEventCounts(shop)]);
  return {
    connected: Boolean(row?.serviceKeyEnc),
    embed,
    tracker: { ...tracker, mode: settings.trackerMode, onStorefront: trackerOnStorefront(embed.state, tracker.publishedAt) },
    events: { enabled: settings.storefrontEvents, ...events, lastEventAt: events.lastEventAt?.toISOString() ?? null },
  };
}

export type StorefrontOverview = Awaited<ReturnType<typeof storefrontOverview>>;
