/**
 * What a shop's granted access scopes let the app read. Shopify's Order docs: "Only the last 60
 * days' worth of orders from a store are accessible ... by default"; older ones need
 * `read_all_orders`, which Shopify grants only to apps it approved (Partner Dashboard → API access).
 */
export const ALL_ORDERS_SCOPE = "read_all_orders";
export const ORDER_WINDOW_DAYS = 60;

/** Days of orders the shop's tokens can see: null for all of them. Unknown scopes (null): not limited here. */
export function orderWindowDays(grantedScopes: string | null | undefined): number | null {
  if (grantedScopes === null || grantedScopes === undefined) return null;
  return grantedScopes.split(",").map((s) => s.trim()).includes(ALL_ORDERS_SCOPE) ? null : ORDER_WINDOW_DAYS;
}

/** The period an import can really cover: the one asked for, within what the shop lets the app see. */
export function reachableOrderDays(requested: number | null, grantedScopes: string | null | undefined): number | null {
  const window = orderWindowDays(grantedScopes);
  if (window === null) return requested;
  return requested === null ? window : Math.min(requested, window);
}
