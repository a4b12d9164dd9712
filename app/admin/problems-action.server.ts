import { z } from "zod";
import { describeShop } from "../shops/shops.server";
import { isRowId } from "./calls";
import { deadLetterIdsForReason, discardProblems, replayProblems } from "./problems.server";

const idSchema = z.string().refine(isRowId, { error: "Not a problem id." });
const problemActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("replay"), id: idSchema }),
  z.object({ intent: z.literal("discard"), id: idSchema }),
  z.object({ intent: z.literal("replay-reason"), key: z.string().regex(/^[0-9a-f]{32}$/, { error: "Not a problem group." }) }),
]);

export interface ProblemActionResult {
  ok: boolean;
  toast: string;
  error?: boolean;
  at: number;
}

/** Replay one, replay all of a reason, discard one: only ever the signed-in shop's dead letters. */
export async function problemAction(shop: string, form: FormData): Promise<ProblemActionResult> {
  const at = Date.now();
  const parsed = problemActionSchema.safeParse(Object.fromEntries(form.entries()));
  if (!parsed.success) return { ok: false, toast: "That action is not possible.", error: true, at };
  const a = parsed.data;
  if (a.intent === "discard") {
    const n = await discardProblems(shop, [a.id]);
    return n ? { ok: true, toast: "Discarded", at } : { ok: false, toast: "Already handled", error: true, at };
  }
  const ids = a.intent === "replay" ? [a.id] : await deadLetterIdsForReason(shop, a.key);
  const { replayed: n, superseded } = await replayProblems(shop, ids);
  if (!n && !superseded) return { ok: false, toast: "Already handled", error: true, at };
  // A paused or disconnected shop's replayed items wait (shown as retrying) until it is reconnected.
  const waiting = n > 0 && !(await describeShop(shop)).connected;
  const sent = waiting
    ? `${n === 1 ? "Queued: it" : `${n} queued: they`} will be sent once your marketing account is reconnected`
    : n === 1
      ? "Sending again"
      : `${n} sending again`;
  // Older than what the service already has: sending it would go backwards.
  const skipped = superseded ? `${superseded} skipped: newer data was already sent` : "";
  const toast = n && skipped ? `${sent}; ${skipped}` : n ? sent : `Not sent: newer data was already sent`;
  return { ok: true, toast: waiting ? `${toast}.` : toast, at };
}
