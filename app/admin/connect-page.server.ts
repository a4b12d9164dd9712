import { z } from "zod";
import { connectShop } from "../backfill/connect.server";
import { ConnectionError, disconnectShop } from "../shops/connection.server";
import { connectionNotice, type ConnectionNotice } from "../shops/connection-text";
import { sweepSignupsSoon } from "../signups/signups.server";
import { removeTracker, syncTracker } from "../storefront/tracker.server";
import { fieldErrors } from "./forms";
import { orderWindow } from "./history.server";

const connectFormSchema = z.object({
  apiKey: z
    .string({ error: "Paste your API key." })
    .trim()
    .min(1, { error: "Paste your API key." })
    .min(8, { error: "This is too short to be an API key; paste the whole key." })
    .max(200, { error: "This is too long to be an API key." })
    .regex(/^\S+$/, { error: "An API key has no spaces; paste just the key." }),
});

/** Shopify did not remove the tracker at disconnect: the merchant knows it still runs, for now. */
const TRACKER_STILL_ON: ConnectionNotice = {
  title: "Your online store still loads the tracker, for now",
  body: "Shopify did not confirm its removal, so visits to your store can still be recorded in the marketing account. The app keeps trying until it is gone.",
};

/** `notice`: after a connection, what it did (import started, account switched), for the page's banner. */
export type ConnectionActionResult =
  | { ok: true; toast: string; at: number; notice?: ConnectionNotice }
  | { ok: false; errors: Record<string, string>; reason?: string; toast?: string; error?: boolean; at: number };

/** The connection page's actions: connect (verify, then store the key) and disconnect. */
export async function connectionAction(shop: string, form: FormData): Promise<ConnectionActionResult> {
  const at = Date.now();
  if (form.get("intent") === "disconnect") {
    await disconnectShop(shop);
    const removal = await removeTracker(shop); // the storefront stops loading this account's tracker (retried by the worker)
    const toast = "Disconnected: nothing more is sent to the marketing service";
    return removal.status === "removed" ? { ok: true, toast, at } : { ok: true, toast, at, notice: TRACKER_STILL_ON };
  }
  const parsed = connectFormSchema.safeParse({ apiKey: form.get("apiKey") ?? undefined });
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error), at };
  try {
    const { account, change, previous } = await connectShop(shop, { apiKey: parsed.data.apiKey });
    await syncTracker(shop); // this account's tracker on the storefront (never throws; the worker retries)
    await sweepSignupsSoon(shop); // the signups' count (and customers, if chosen) within seconds, not one interval later
    const name = account.company ?? account.email;
    const notice = connectionNotice(change, name, previous ? (previous.company ?? previous.email) : null, await orderWindow(shop));
    return { ok: true, toast: `Connected to ${name}`, at, notice };
  } catch (error) {
    if (error instanceof ConnectionError) return { ok: false, errors: { apiKey: error.message }, reason: error.reason, at };
    throw error;
  }
}
