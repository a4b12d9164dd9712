/**
 * The parts of Shopify's admin action extension API (the `shopify` global of API version
 * 2026-04) this extension uses. Shopify's own types (@shopify/ui-extensions) are not installed in
 * this repository; these follow its ActionExtensionApi (`close`, `data`) and Data
 * (`selected: {id}[]`, the segment's gid on the customer segment details target).
 */
export interface ActionExtensionApi {
  extension: { target: string };
  /** The segment the Use segment modal was opened on. */
  data: { selected: { id: string }[] };
  /** Closes the modal, as the merchant's "x" does. */
  close(): void;
}

/** The API Shopify's extension runtime puts on the global object. */
export const shopifyApi = (): ActionExtensionApi => (globalThis as unknown as { shopify: ActionExtensionApi }).shopify;
