import { z } from "zod";
import { ConnectionError, connectShop, disconnectShop } from "../shops/connection.server";
import { removeTracker, syncTracker } from "../storefront/tracker.server";
import { fieldErrors } from "./forms";

const connectFormSchema = z.object({
  apiKey: z
    .string({ error: "Paste your API key." })
    .trim()
    .min(1, { error: "Paste your API key." })
    .min(8, { error: "This is too short to be an API key; paste the whole key." })
    .max(200, { error: "This is too long to be an API key." })
    .regex(/^\S+$/, { error: "An API key has no spaces; paste just the key." }),
});

export type ConnectionActionResult =
  | { ok: true; toast: string; at: number }
  | { ok: false; errors: Record<string, string>; reason?: string; toast?: string; error?: boolean; at: number };

/** The connection page's actions: connect (verify, then store the key) and disconnect. */
export async function connectionAction(shop: string, form: FormData): Promise<ConnectionActionResult> {
  const at = Date.now();
  if (form.get("intent") === "disconnect") {
    await disconnectShop(shop);
    await removeTracker(shop); // the storefront stops loading this account's tracker (best effort)
    return { ok: true, toast: "Disconnected: nothing more is sent to the marketing service", at };
  }
  const parsed = connectFormSchema.safeParse({ apiKey: form.get("apiKey") ?? undefined });
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error), at };
  try {
    const account = await connectShop(shop, { apiKey: parsed.data.apiKey });
    await syncTracker(shop); // this account's tracker on the storefront (never throws; the worker retries)
    return { ok: true, toast: `Connected to ${account.company ?? account.email}`, at };
  } catch (error) {
    if (error instanceof ConnectionError) return { ok: false, errors: { apiKey: error.message }, reason: error.reason, at };
    throw error;
  }
}
