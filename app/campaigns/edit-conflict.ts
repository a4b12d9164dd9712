/** The Details of a campaign the app's page edits. */
export const DETAIL_KEYS = ["name", "subject", "previewText", "senderName", "senderEmail", "replyToName", "replyToEmail"] as const;
export type DetailKey = (typeof DETAIL_KEYS)[number];
export type DetailValues = Record<DetailKey, string>;

/** Two values of a field are the same when they differ only in surrounding spaces (or one is missing and the other blank). */
export const sameDetail = (a: string | undefined, b: string | undefined) => (a ?? "").trim() === (b ?? "").trim();

/**
 * What a save from the page would change, from the values the page loaded (`loaded`), the form it
 * sends (`form`) and the campaign as it is now (`now`): `changed`, the fields the merchant changed
 * that still differ from now; `clash`, the fields the merchant changed that were also changed
 * elsewhere meanwhile (the email editor, a colleague) to something else. Fields the merchant did not
 * touch are never written, so a change made elsewhere is not overwritten with the page's old value.
 */
export function detailChanges(
  form: Partial<Record<DetailKey, string>>,
  loaded: DetailValues,
  now: DetailValues,
): { changed: DetailKey[]; clash: DetailKey[] } {
  const touched = DETAIL_KEYS.filter((k) => !sameDetail(form[k], loaded[k]));
  return {
    changed: touched.filter((k) => !sameDetail(now[k], form[k])),
    clash: touched.filter((k) => !sameDetail(now[k], loaded[k]) && !sameDetail(now[k], form[k])),
  };
}
