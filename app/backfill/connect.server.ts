import { storeConnection, type ConnectionChange, type ConnectionResult } from "../shops/connection.server";
import { requestBackfill } from "./backfill.server";

const IMPORT_REASON: Record<Exclude<ConnectionChange, "same">, string> = {
  first: "replaced by the import of the first connection",
  reconnected: "replaced by the import of the reconnection (its objects were ignored while disconnected)",
  switched: "replaced by the import into the newly connected marketing account",
};

/**
 * Connects a shop to the marketing service (shops/connection.server.ts storeConnection). The first
 * connection, a reconnection after a disconnection and a switch to another account start a history
 * import; a switch has forgotten what was sent, so the import sends everything to the new account.
 * Throws ConnectionError with the merchant's message.
 */
export async function connectShop(
  domain: string,
  input: { apiKey: string; baseUrl?: string; /** false: skip the history import (tests) */ importHistory?: boolean },
): Promise<ConnectionResult> {
  const result = await storeConnection(domain, input);
  if (result.change !== "same" && input.importHistory !== false) await startHistoryBackfill(domain, IMPORT_REASON[result.change]);
  return result;
}

/**
 * Imports the store's history (customers, products, orders of the last year). A connection
 * replaces an import already under way: what it recorded before the connection may have been
 * ignored (not connected) or sent to the previous account.
 */
export async function startHistoryBackfill(domain: string, replacing: string): Promise<void> {
  await requestBackfill(domain, {}, { replacing });
}
