/** Every status and outcome a queue row can have, named once. */

export const DELIVERY_STATUS = { queued: "queued", running: "running", done: "done" } as const;

/** What planning made of a delivery. */
export const DELIVERY_OUTCOME = {
  planned: "planned",
  /** older than the version already applied */
  stale: "stale",
  /** nothing changed since the last call of each kind */
  unchanged: "unchanged",
  /** nothing to send for it */
  ignored: "ignored",
  /** a body or a plan that cannot be used, with the reason */
  invalid: "invalid",
  /** a lifecycle or compliance request carried out */
  handled: "handled",
} as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOME)[keyof typeof DELIVERY_OUTCOME];

export const CALL_STATUS = {
  queued: "queued",
  running: "running",
  delivered: "delivered",
  /** gave up: replayable by support */
  dead: "dead",
  /** refused by the service for good (blocked person, checkout bought meanwhile) */
  refused: "refused",
  /** a dead letter that a later call of the same kind made obsolete; never sent again */
  superseded: "superseded",
} as const;
export type CallStatus = (typeof CALL_STATUS)[keyof typeof CALL_STATUS];

/** A history import run (BackfillRun). */
export const BACKFILL_STATUS = { queued: "queued", running: "running", done: "done", failed: "failed" } as const;
export type BackfillStatus = (typeof BACKFILL_STATUS)[keyof typeof BACKFILL_STATUS];

export const TIMER_STATUS = {
  pending: "pending",
  running: "running",
  sent: "sent",
  cancelled: "cancelled",
  /** could not be turned into a call, with the reason */
  failed: "failed",
} as const;

/** A recorded delivery leased for planning (also what the unknown-object lookup reads and writes). */
export interface ClaimedDelivery {
  id: string;
  receivedAt: Date;
  triggeredAt: Date | null;
  shop: string;
  topic: string;
  eventId: string;
  rawBody: string;
  attempts: number;
  /** webhook; backfill, lookup, reconcile: recorded by the app, their events go out silent (no automations for old news). */
  source: string;
}
