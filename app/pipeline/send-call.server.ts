import { database } from "../db.server";
import { messageOf } from "../errors";
import { logger } from "../logger.server";
import type { MarketingClient } from "../services/marketing/client.server";
import { isMarketingServiceError, isPermanentRefusalForPerson, type MarketingServiceError } from "../services/marketing/marketing-error";
import type { ServiceCall } from "../services/marketing/schemas";
import { pauseShop } from "../shops/connection.server";
import { isCompleted } from "./abandonment.server";
import { emailChangeFallback } from "./email-change-fallback";
import { nextTry, type PipelinePolicy } from "./policy";

/** A queued service call as the lane claimed it. */
export interface ClaimedCall {
  id: string;
  shop: string;
  objectKey: string;
  kind: string;
  call: unknown;
  attempts: number;
  createdAt: Date;
  retryFrom: Date;
  /** Planned from imported history: after the shop's live calls. */
  background: boolean;
}

/**
 * What became of one try. `cause`: what a dead letter failed of, the same for every call of one
 * outage (the Problems page groups by it); the error itself when not given.
 */
export type CallResult =
  | { status: "delivered" }
  | { status: "retry"; error: string; response?: unknown; delayMs: number; giveBackAttempt?: boolean; holdShopMs?: number }
  | { status: "dead"; error: string; cause?: string; response?: unknown }
  | { status: "refused"; error: string; response?: unknown }
  | { status: "paused"; error: string };

/** The service clients of one claim, per shop (null: not connected). */
export type ClientFor = (shop: string) => Promise<MarketingClient | null>;

/** Errors that mean the shop's key no longer works: stop the shop, keep its calls. */
const PAUSING = new Set(["unauthenticated", "account_inactive"]);

/** Sends one claimed call to the service and says what became of it; writes nothing of the call. */
export async function sendCall(c: ClaimedCall, policy: PipelinePolicy, clientFor: ClientFor): Promise<CallResult> {
  // The client validates the call before sending it (a bad one fails as a local validation error).
  const call = c.call as ServiceCall;
  try {
    if (isAbandonedCart(call) && Date.now() - c.createdAt.getTime() > policy.reminderMaxAgeMs)
      return { status: "refused", error: `reminder not sent: more than ${Math.round(policy.reminderMaxAgeMs / 3_600_000)} h old` };
    if (await abandonedCartAlreadyBought(c, call))
      return { status: "refused", error: "checkout completed by an order before sending" };
    const client = await clientFor(c.shop);
    if (!client) return { status: "paused", error: "shop is not connected" };
    try {
      await client.perform(call);
    } catch (error) {
      const resend = isMarketingServiceError(error) ? emailChangeFallback(call, error) : [];
      if (!isMarketingServiceError(error) || !resend.length) throw error;
      // Ids only: the addresses are personal data.
      logger().info({ shop: c.shop, callId: c.id, objectKey: c.objectKey, err: error.kind }, "email change not applicable; sent to the new address");
      for (const next of resend) await client.perform(next);
    }
    return { status: "delivered" };
  } catch (error) {
    if (!isMarketingServiceError(error)) {
      const message = messageOf(error);
      return retryOrDie(c, policy, `unexpected: ${message}`);
    }
    if (PAUSING.has(error.kind)) {
      await pauseShop(c.shop, `${error.kind}: ${error.message}`);
      return { status: "paused", error: error.kind };
    }
    // Deleting a person the service does not have (never synced, or already deleted) has done
    // what it was for: a redaction or a deletion must not become a dead letter for that.
    if (call.op === "person.delete" && error.kind === "person_not_found") return { status: "delivered" };
    const reason = describeError(error);
    if (isRefusalForUnreachablePerson(call, error)) return { status: "refused", error: reason, response: error.body };
    if (error.retryable) {
      // A 429 that says when to come back is flow control, not a failure of the call: it does not
      // use up attempts (a backlog draining under a rate limit for hours would otherwise die of
      // them long before the deadline); the deadline still bounds it.
      const flowControl = error.kind === "rate_limited" && error.retryAfterMs !== undefined;
      return retryOrDie(c, policy, reason, error.body, error.retryAfterMs, flowControl);
    }
    return { status: "dead", error: reason, response: error.body };
  }
}

/** What support reads: the kind, the message, and the per-field messages when there are some. */
function describeError(error: MarketingServiceError): string {
  const fields = Object.entries(error.errors ?? {}).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
  return `${error.kind}: ${error.message}${fields.length ? ` (${fields.join("; ")})` : ""}`;
}

/**
 * Retries until the deadline (24 h after the call was planned or replayed, by default) or the
 * attempt bound; a retry that would only start after the deadline gives up now (policy.ts decides).
 */
function retryOrDie(
  c: ClaimedCall,
  policy: PipelinePolicy,
  error: string,
  response?: unknown,
  retryAfterMs?: number,
  flowControl = false
): CallResult {
  const next = nextTry("serviceCall", { attempts: c.attempts, since: c.retryFrom, retryAfterMs, flowControl }, policy);
  if (next.giveUp) {
    const tried = Math.round((Date.now() - c.retryFrom.getTime()) / 60_000);
    // Each dead letter of one outage has its own count and minutes: the cause leaves them out.
    return { status: "dead", error: `gave up after ${c.attempts} attempts; last: ${error} (retried for ${tried} min)`, cause: `Gave up retrying: ${error}`, response };
  }
  const delayMs = next.delayMs;
  return { status: "retry", error, response, delayMs, giveBackAttempt: flowControl, ...(flowControl ? { holdShopMs: delayMs } : {}) };
}

/**
 * The service refuses to change the status of a blocked or hard-bounced person. Retrying cannot
 * help and replaying would not either, so such a refusal is recorded and not retried.
 */
function isRefusalForUnreachablePerson(call: ServiceCall, error: MarketingServiceError): boolean {
  return call.op === "person.upsert" && isPermanentRefusalForPerson(error);
}

function isAbandonedCart(call: ServiceCall): call is Extract<ServiceCall, { op: "event"; type: "cart" }> {
  return call.op === "event" && call.type === "cart" && call.action === "abandoned";
}

/** Right before a cart/abandoned goes out: was the checkout bought meanwhile? */
async function abandonedCartAlreadyBought(c: ClaimedCall, call: ServiceCall): Promise<boolean> {
  if (!isAbandonedCart(call)) return false;
  const cartId = String((call.body as { id?: unknown }).id ?? "");
  const checkoutToken = c.objectKey.startsWith("checkout:") ? c.objectKey.slice("checkout:".length) : undefined;
  return isCompleted(database().sql, c.shop, [cartId, checkoutToken]);
}
