/** What a connection does, in the merchant's words: shared by the Connection page and its action. */

/** "first" / "reconnected" / "switched" start a history import; "same" only replaces the key (see connectShop, app/backfill/connect.server.ts). */
export type ConnectionChange = "first" | "same" | "reconnected" | "switched";

/**
 * What the history import sends (app/backfill: customers, products, orders of the last 365 days,
 * or of the days Shopify lets the app read: 60 without read_all_orders).
 */
export function importedText(ordersWindow: number | null): string {
  return `customers (with their consent), products and orders of the last ${ordersWindow === null ? "year" : `${ordersWindow} days`}`;
}

/** What the import cannot catch up on after a disconnection (they are not in Shopify's exports as changes). */
export const NOT_CAUGHT_UP =
  "Not caught up: abandoned checkouts and carts, deletions, products taken off sale, refunds and subscription changes made while disconnected.";

export interface ConnectionNotice {
  title: string;
  body: string;
}

/** The banner shown after a key was saved, saying what the connection did. */
export function connectionNotice(change: ConnectionChange, account: string, previous: string | null, ordersWindow: number | null = null): ConnectionNotice {
  const IMPORTED = importedText(ordersWindow);
  const progress = "(progress under Store history), without starting automations.";
  switch (change) {
    case "first":
      return { title: `Connected to ${account}: importing your store's history`, body: `Your store's ${IMPORTED} are being imported ${progress}` };
    case "reconnected":
      return {
        title: `Reconnected to ${account}: catching up on what changed while disconnected`,
        body: `Your store's ${IMPORTED} are being imported again ${progress} What ${account} already has is not sent again. ${NOT_CAUGHT_UP}`,
      };
    case "switched":
      return {
        title: `Switched to ${account}: importing your store's history into it`,
        body: `Your store's ${IMPORTED} are being imported into ${account} ${progress} ${previous ?? "The previous account"} keeps what it already received and gets nothing more from this store.`,
      };
    case "same":
      return {
        title: `API key of ${account} replaced`,
        body: "Same marketing account: syncing goes on with the new key (anything that waited for a valid key is sent now); nothing is imported again.",
      };
  }
}
