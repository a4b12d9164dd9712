import type { MarketingServiceError } from "../services/marketing/marketing-error";
import type { ServiceCall } from "../services/marketing/schemas";

/**
 * An email change the service cannot apply — the old contact is gone, or the new address already
 * has a contact — still carries the customer's latest data and consent. Dead-lettering it would lose
 * an unsubscribe (or a subscribe) for the address the customer now uses, so the same body is sent
 * to the new address as a plain upsert. When the new address was taken, the old contact stays in the
 * service: an unsubscribe is sent to it too, so neither address keeps mailing a customer who opted
 * out. Empty: the error is handled as usual. Upserts are idempotent, so a retry may repeat them.
 */
export function emailChangeFallback(call: ServiceCall, error: MarketingServiceError): ServiceCall[] {
  if (call.op !== "person.upsert" || call.body.emailChange === undefined) return [];
  const oldGone = error.kind === "person_not_found";
  const newTaken = error.status === 422 && !error.local && error.errors?.emailChange !== undefined;
  if (!oldGone && !newTaken) return [];
  // An id would address the old contact again.
  const { emailChange, id: _oldId, ...body } = call.body;
  const toNew: ServiceCall = { op: "person.upsert", body: { ...body, email: emailChange } };
  if (!newTaken || body.statusDetails !== "unsubscribed") return [toNew];
  const { source, status, statusDetails, skipDoubleOptIn } = body;
  return [toNew, { op: "person.upsert", body: { email: call.body.email, source, status, statusDetails, skipDoubleOptIn } }];
}
