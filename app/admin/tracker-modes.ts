/** The storefront tracker's modes in the merchant's words: the Settings choice and the Storefront page say the same. */
export const TRACKER_MODES = [
  { value: "modern", label: "Modern (no cookies before consent, recommended)", short: "Modern" },
  { value: "legacy", label: "Legacy (cookie-based)", short: "Legacy" },
  { value: "compat", label: "Compatibility (both)", short: "Compatibility" },
] as const;

/** "modern" → "Modern (no cookies before consent, recommended)"; `short` → "Modern". */
export function trackerModeLabel(mode: string | null | undefined, short = false): string {
  const found = TRACKER_MODES.find((m) => m.value === mode);
  if (!found) return mode ?? "unknown";
  return short ? found.short : found.label;
}
