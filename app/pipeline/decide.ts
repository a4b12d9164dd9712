import { createHash } from "node:crypto";
import { stringify } from "safe-stable-stringify";
import type { ServiceCall } from "../services/marketing/schemas";
import type { AbandonmentInstruction, SyncPlan } from "../sync/plan-contract";
import { DELIVERY_OUTCOME, type DeliveryOutcome } from "./status";

/** What the last applied version of a Shopify object left (a row of ObjectState). */
export interface ObjectMemory {
  lastUpdatedAt: Date | null;
  /** Hash of the last planned content per kind of call (see callKind). */
  contentHashes: Record<string, string>;
  state: unknown;
}

export interface Decision {
  outcome: DeliveryOutcome;
  detail: string | null;
  /** Calls to queue, in plan order. */
  calls: ServiceCall[];
  /** The object's memory after this delivery; null when it must not change (stale). */
  next: ObjectMemory | null;
  abandonment?: AbandonmentInstruction;
}

/**
 * The pure heart of planning: given a delivery's plan and what the object's last applied
 * version left, decide what to send and what to remember. An older version than the one applied
 * is stale; a call whose content equals the last one of its kind is not sent again.
 */
export function decide(plan: SyncPlan, memory: ObjectMemory | undefined): Decision {
  const version = plan.objectUpdatedAt ? new Date(plan.objectUpdatedAt) : null;
  if (version && memory?.lastUpdatedAt && version < memory.lastUpdatedAt) {
    return {
      outcome: DELIVERY_OUTCOME.stale,
      detail: `older than the version applied (${memory.lastUpdatedAt.toISOString()})`,
      calls: [],
      next: null,
    };
  }
  const previous = memory?.contentHashes ?? {};
  const hashed = plan.calls.map((call) => ({ call, kind: callKind(call), hash: contentHash(call) }));
  // A new occurrence (a renewal, a pause after a resume) is news even when its calls read like the
  // last ones; a repeat of the same occurrence is not. A deletion is never "the same as last time":
  // a contact re-created since must go again.
  const changed = plan.occurrence
    ? previous[OCCURRENCE_KEY] === plan.occurrence
      ? []
      : plan.calls
    : hashed.filter((h) => h.call.op === "person.delete" || previous[h.kind] !== h.hash).map((h) => h.call);
  const outcome =
    plan.calls.length === 0
      ? DELIVERY_OUTCOME.ignored
      : changed.length === 0
        ? DELIVERY_OUTCOME.unchanged
        : DELIVERY_OUTCOME.planned;
  // A deletion starts the object's history over: a re-created contact must be sent again.
  const restart = plan.calls.some((c) => c.op === "person.delete" || (c.op === "event" && c.action === "deleted"));
  return {
    outcome,
    detail: plan.skipped ?? null,
    calls: changed,
    next: {
      lastUpdatedAt: version ?? memory?.lastUpdatedAt ?? null,
      contentHashes: {
        ...(restart ? {} : previous),
        ...Object.fromEntries(hashed.map((h) => [h.kind, h.hash])),
        ...(plan.occurrence ? { [OCCURRENCE_KEY]: plan.occurrence } : {}),
      },
      state: plan.nextState ?? memory?.state ?? null,
    },
    abandonment: plan.abandonment,
  };
}

/** Where the last occurrence of the object is remembered (no call kind looks like it). */
const OCCURRENCE_KEY = "#occurrence";

/** Calls of one kind replace each other: an unchanged one need not be sent again. */
export function callKind(call: ServiceCall): string {
  if (call.op === "event") return `event:${call.type}:${call.action}`;
  if (call.op === "event.custom") return `custom:${call.body.eventName}`;
  return call.op;
}

// Send times and delivery controls (whether to ask for double opt-in again) are not content:
// they would make every re-delivery look changed.
// `silent` (history imports) is not content either: a later live change must not look different.
const NOT_CONTENT = new Set(["occurred_at", "occurredAt", "modified_at", "skipDoubleOptIn", "silent"]);

/**
 * Stable across a round trip through jsonb, which reorders keys: JSON with sorted keys. The format
 * is stored (ObjectState.contentHashes), so a change to it makes every object look changed once.
 */
export function contentHash(call: ServiceCall): string {
  const json = stringify(call, (key, value: unknown) => (NOT_CONTENT.has(key) ? undefined : value));
  return createHash("sha256").update(String(json)).digest("hex");
}
