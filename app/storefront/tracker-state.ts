/**
 * Whether the tracker runs on the storefront, in one place for every page that says so (Storefront,
 * Sync health): it runs only where the live theme's embed is on and a snippet was published to the
 * metafield the embed reads. The embed's state is read from the theme (onboarding.server.ts); a
 * published snippet alone does not reach any visitor. Pure: the browser bundle uses it too.
 */

/** The app embed in the live theme's config/settings_data.json. */
export type EmbedState = "enabled" | "disabled" | "not_added" | "unknown";

export type TrackerOnStorefrontState = "running" | "embed_off" | "embed_missing" | "not_published" | "unknown";

export interface TrackerOnStorefront {
  state: TrackerOnStorefrontState;
  /** a badge's word */
  label: string;
  tone: "success" | "attention" | "critical" | undefined;
  /** one sentence saying why */
  line: string;
}

export function trackerOnStorefront(embed: EmbedState, publishedAt: string | null): TrackerOnStorefront {
  if (embed === "unknown") {
    return { state: "unknown", label: "Unknown", tone: undefined, line: "Your live theme could not be read just now, so whether the tracker runs on your storefront is not known." };
  }
  if (embed === "disabled") {
    return { state: "embed_off", label: "Not running", tone: "attention", line: "The tracker does not run on your storefront: its embed is switched off in your live theme." };
  }
  if (embed === "not_added") {
    return { state: "embed_missing", label: "Not running", tone: "critical", line: "The tracker does not run on your storefront: your live theme does not have its embed." };
  }
  if (!publishedAt) {
    return {
      state: "not_published",
      label: "Not running",
      tone: "attention",
      line: "The embed is on, but no tracker from your marketing account is published to it yet, so it loads nothing.",
    };
  }
  return { state: "running", label: "Running", tone: "success", line: "The tracker runs on your storefront: the embed is on in your live theme and loads your marketing account's tracker." };
}
