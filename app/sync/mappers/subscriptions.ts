/**
 * Subscription contracts, their billing attempts and skipped cycles → the service.
 *
 * Every state a contract goes through reaches the service distinguishably (SUBSCRIPTION_STATES,
 * the one place the choice is made; docs/event-mapping.md shows it):
 * - by the subscription event's action where the interface has one (created, cancelled, expired,
 *   renewed, renewal_failed);
 * - otherwise by a custom event named after the state (subscription_paused, …), beside a
 *   `subscription/updated` so the subscription itself is seen to change;
 * - and always by the customer event's `subscriptions[]` (status, plan, interval), the only
 *   place the interface carries a subscription's state: a contract whose entry changed sends a
 *   `customer/updated` with every known contract of the customer.
 * A status change and a billing attempt are occurrences (SyncPlan.occurrence): the content hash
 * never drops a pause that follows a resume, nor this month's renewal because last month's read
 * the same.
 *
 * The payloads name the customer only by id, so the person is `referenceId` = customer id.
 */
import type { CustomerEvent, ServiceCall, SubscriptionAction, SubscriptionLineItem } from "../../services/marketing/schemas";
import { fromMinor, multiplyMinor } from "../money";
import type {
  SubscriptionBillingAttemptPayload,
  SubscriptionBillingCyclePayload,
  SubscriptionContractPayload,
} from "../payloads";
import { amount, compact, currencyOf, lineUrl, personRef, type PersonRef } from "./common";
import { customerEventBody, customEventBody, eventCall, subscriptionEventBody } from "../event-bodies";
import { priorOf, type SubscriptionSyncState, type SyncContext, type SyncPlan } from "../plan-contract";

interface StateEntry {
  /** The Shopify topics that report this state. */
  topics: readonly string[];
  /** A contract status that, reached on any contract topic, means this state. */
  status: string | null;
  /** subscription/<action>, when the interface has one that fits. */
  action: SubscriptionAction | null;
  /** Custom event (POST /api/events) for a state the subscription endpoint has no action for. */
  eventName: string | null;
  meaning: string;
}

export const SUBSCRIPTION_STATES = {
  created: {
    topics: ["subscription_contracts/create"],
    status: null,
    action: "created",
    eventName: null,
    meaning: "a customer subscribed (the contract is created)",
  },
  updated: {
    topics: ["subscription_contracts/update"],
    status: null,
    action: "updated",
    eventName: null,
    meaning: "lines, prices or plan changed; the status did not",
  },
  paused: {
    topics: ["subscription_contracts/pause"],
    status: "paused",
    action: "updated",
    eventName: "subscription_paused",
    meaning: "the contract is paused: no billing until it is resumed",
  },
  resumed: {
    topics: ["subscription_contracts/activate"],
    status: "active",
    action: "updated",
    eventName: "subscription_resumed",
    meaning: "a paused or failed contract is active again",
  },
  cancelled: {
    topics: ["subscription_contracts/cancel"],
    status: "cancelled",
    action: "cancelled",
    eventName: null,
    meaning: "the contract is cancelled",
  },
  expired: {
    topics: ["subscription_contracts/expire"],
    status: "expired",
    action: "expired",
    eventName: null,
    meaning: "the contract reached its last billing cycle",
  },
  failed: {
    topics: ["subscription_contracts/fail"],
    status: "failed",
    action: "updated",
    eventName: "subscription_failed",
    meaning: "billing failed for good (the dunning attempts ran out); a failed payment is renewal_failed",
  },
  renewed: {
    topics: ["subscription_billing_attempts/success"],
    status: null,
    action: "renewed",
    eventName: null,
    meaning: "a billing attempt succeeded: the subscription renewed",
  },
  renewal_failed: {
    topics: ["subscription_billing_attempts/failure", "subscription_billing_attempts/challenged"],
    status: null,
    action: "renewal_failed",
    eventName: null,
    meaning: "a billing attempt failed, or the bank asks the customer to confirm it (3-D Secure): a dunning email's moment",
  },
  skipped: {
    topics: ["subscription_billing_cycles/skip"],
    status: null,
    action: null,
    eventName: "subscription_skipped",
    meaning: "one billing cycle is skipped; the contract stays active",
  },
} as const satisfies Record<string, StateEntry>;
export type SubscriptionState = keyof typeof SUBSCRIPTION_STATES;

const STATE_OF_TOPIC: ReadonlyMap<string, SubscriptionState> = new Map(
  (Object.entries(SUBSCRIPTION_STATES) as [SubscriptionState, StateEntry][]).flatMap(([state, e]) => e.topics.map((t) => [t, state] as const)),
);
const STATE_OF_STATUS: ReadonlyMap<string, SubscriptionState> = new Map(
  (Object.entries(SUBSCRIPTION_STATES) as [SubscriptionState, StateEntry][]).flatMap(([state, e]) => (e.status ? [[e.status, state] as const] : [])),
);

/** Every topic of a subscription (registered in app/sync/topics.server.ts). */
export const SUBSCRIPTION_TOPICS: readonly string[] = [...STATE_OF_TOPIC.keys()];

export function subscriptionStateOfTopic(topic: string): SubscriptionState | undefined {
  return STATE_OF_TOPIC.get(topic);
}

export function subscriptionObjectKey(id: string): string {
  return `subscription:${id}`;
}

type CustomerSubscription = NonNullable<CustomerEvent["subscriptions"]>[number];

/** One contract as the customer event's subscriptions[] shows it. */
function subscriptionEntry(s: SubscriptionSyncState): CustomerSubscription {
  return compact({
    plan_id: s.planId,
    plan_name: s.planName,
    plan_interval: s.interval,
    plan_interval_count: s.intervalCount,
    plan_amount: s.amount,
    status: s.status,
    currency: s.currency,
    start_date: s.startedAt,
    end_date: s.endedAt,
    canceled_at: s.cancelledAt,
  }) as CustomerSubscription;
}

/**
 * The customer event's `subscriptions[]`: every contract of the customer known to the app, in
 * contract id order; `own` replaces the stored state of that contract. Undefined when none.
 */
export function customerSubscriptions(ctx: SyncContext, own?: { id: string; state: SubscriptionSyncState }): CustomerSubscription[] | undefined {
  const all = new Map((ctx.customerSubscriptions ?? []).map((s) => [s.id, s.state]));
  if (own) all.set(own.id, own.state);
  if (all.size === 0) return undefined;
  // Ids are the Map's keys, so two are never equal.
  const ids = [...all.keys()].sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
  return ids.map((id) => subscriptionEntry(all.get(id)!));
}

function lineItems(s: SubscriptionContractPayload, currency: string | undefined, ctx: SyncContext): SubscriptionLineItem[] {
  return s.lines.map((l, i) => {
    const price = l.current_price === null ? null : typeof l.current_price === "string" ? l.current_price : l.current_price.amount;
    const image = typeof l.variant_image === "string" ? l.variant_image : (l.variant_image?.src ?? undefined);
    return compact({
      id: l.product_id ?? l.id ?? `line-${i + 1}`,
      name: l.title ?? l.variant_title ?? "Subscription item",
      url: lineUrl(ctx.storefrontUrl, l.variant_id),
      brand: l.vendor,
      variant_id: l.variant_id,
      image_url: image,
      price: amount(price, currency),
      quantity: l.quantity,
    }) as SubscriptionLineItem;
  });
}

/**
 * Subscription `url`: the customer's account page on the store, where Shopify customer accounts
 * list a customer's subscriptions (Shopify sends no link of the contract itself).
 */
export function subscriptionUrl(storefrontUrl: string): string {
  return `${storefrontUrl.replace(/\/+$/, "")}/account`;
}

/** Σ price × quantity of the lines, the amount billed per cycle; undefined without prices. */
function cycleAmount(s: SubscriptionContractPayload, currency: string | undefined): number | null {
  let total = 0n;
  for (const l of s.lines) {
    const price = l.current_price === null ? null : typeof l.current_price === "string" ? l.current_price : l.current_price.amount;
    if (price === null || l.quantity === null) return null;
    total += multiplyMinor(price, l.quantity, currency);
  }
  return s.lines.length > 0 ? fromMinor(total, currency) : null;
}

function customEvent(ref: PersonRef, ctx: SyncContext, eventName: string, properties: Record<string, unknown>): ServiceCall {
  return { op: "event.custom", body: customEventBody(ref, ctx.settings.source, { eventName, properties }) };
}

/** Which state a contract webhook reports: a status change speaks louder than the topic. */
function contractState(topic: string, priorStatus: string | null, status: string | null): SubscriptionState {
  const own = STATE_OF_TOPIC.get(topic) ?? "updated";
  if (own === "created" || priorStatus === null || status === priorStatus) return own;
  // status is the payload's status ?? priorStatus: not null once priorStatus is not.
  return STATE_OF_STATUS.get(status!) ?? own;
}

/** subscription_contracts/* */
export function mapSubscription(topic: string, s: SubscriptionContractPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "subscription");
  const objectKey = subscriptionObjectKey(s.id);
  const customerId = s.customer_id ?? prior?.customerId ?? null;
  const priorStatus = prior?.status ?? null;
  const status = s.status ?? priorStatus;
  // status falls back on priorStatus, so it is null only when priorStatus is too.
  const changed = status !== priorStatus;
  const state = contractState(topic, priorStatus, status);
  const currency = currencyOf(s.currency_code, prior?.currency, ctx.currency);
  const firstPlan = s.lines.find((l) => l.selling_plan_id || l.selling_plan_name);
  // Without updated_at (Shopify's samples have none) the time of planning stands in; a repeat
  // keeps the time first recorded.
  const at = s.updated_at ?? ctx.now.toISOString();
  const endedNow = status === "cancelled" || status === "expired" || status === "failed";
  const nextState: SubscriptionSyncState = {
    kind: "subscription",
    customerId,
    status,
    currency: currency ?? null,
    interval: s.billing_policy?.interval ?? prior?.interval ?? null,
    intervalCount: s.billing_policy?.interval_count ?? prior?.intervalCount ?? null,
    amount: cycleAmount(s, currency) ?? prior?.amount ?? null,
    planId: firstPlan?.selling_plan_id ?? prior?.planId ?? null,
    planName: firstPlan?.selling_plan_name ?? prior?.planName ?? null,
    startedAt: prior?.startedAt ?? s.created_at ?? (state === "created" ? at : null),
    // Stryker disable next-line OptionalChaining: an unchanged non-null status is a prior's, so prior is set
    endedAt: endedNow ? (changed ? at : (prior?.endedAt ?? at)) : null,
    // Stryker disable next-line OptionalChaining: as for endedAt
    cancelledAt: status === "cancelled" ? (changed ? at : (prior?.cancelledAt ?? at)) : null,
    changes: (prior?.changes ?? 0) + (changed ? 1 : 0),
  };
  const ref = personRef(null, customerId);
  if (!ref) return { objectKey, objectUpdatedAt: s.updated_at, calls: [], nextState, skipped: "subscription contract names no customer" };

  const entry: StateEntry = SUBSCRIPTION_STATES[state];
  const calls: ServiceCall[] = [];
  if (entry.action) {
    const products = lineItems(s, currency, ctx);
    const body = subscriptionEventBody(ref, ctx.settings.source, {
      id: s.id,
      url: subscriptionUrl(ctx.storefrontUrl),
      currency,
      products: products.length > 0 ? products : undefined,
    });
    calls.push(eventCall("subscription", entry.action, body));
  }
  if (entry.eventName) {
    calls.push(
      customEvent(ref, ctx, entry.eventName, {
        subscription_id: s.id,
        status,
        plan_interval: nextState.interval,
        plan_interval_count: nextState.intervalCount,
        occurred_at: at,
      }),
    );
  }
  calls.push(customerStatusCall(ref, customerId!, { id: s.id, state: nextState }, ctx));
  return {
    objectKey,
    // Contract payloads carry no updated_at in the samples; null = apply in arrival order.
    objectUpdatedAt: s.updated_at,
    calls,
    nextState,
    ...(changed ? { occurrence: `status:${nextState.changes}:${status}` } : {}),
  };
}

/** customer/updated carrying the customer's subscriptions[] (and nothing else of the customer). */
function customerStatusCall(ref: PersonRef, customerId: string, own: { id: string; state: SubscriptionSyncState }, ctx: SyncContext): ServiceCall {
  const body = customerEventBody(ref, ctx.settings.source, { id: customerId, subscriptions: customerSubscriptions(ctx, own) });
  return eventCall("customer", "updated", body);
}

const NOT_SYNCED = "the contract was not synced yet: its customer is unknown";

/** subscription_billing_attempts/success|failure|challenged → subscription/renewed|renewal_failed. */
export function mapBillingAttempt(topic: string, a: SubscriptionBillingAttemptPayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "subscription");
  const objectKey = subscriptionObjectKey(a.subscription_contract_id);
  const ref = personRef(null, prior?.customerId ?? null);
  if (!ref) return { objectKey, objectUpdatedAt: null, calls: [], nextState: ctx.prior, skipped: NOT_SYNCED };
  const action = SUBSCRIPTION_STATES[STATE_OF_TOPIC.get(topic) as "renewed" | "renewal_failed"].action;
  const body = subscriptionEventBody(ref, ctx.settings.source, {
    id: a.subscription_contract_id,
    url: subscriptionUrl(ctx.storefrontUrl),
    currency: currencyOf(prior?.currency, ctx.currency),
  });
  const attempt = a.id ?? a.idempotency_key ?? a.order_id ?? ctx.now.toISOString();
  return {
    objectKey,
    // An event, not a version of the contract.
    objectUpdatedAt: null,
    calls: [eventCall("subscription", action, body)],
    nextState: ctx.prior,
    occurrence: `${topic}:${attempt}`,
  };
}

/** subscription_billing_cycles/skip → custom event subscription_skipped. */
export function mapBillingCycleSkip(c: SubscriptionBillingCyclePayload, ctx: SyncContext): SyncPlan {
  const prior = priorOf(ctx.prior, "subscription");
  const objectKey = subscriptionObjectKey(c.subscription_contract_id);
  const ref = personRef(null, prior?.customerId ?? null);
  if (!ref) return { objectKey, objectUpdatedAt: null, calls: [], nextState: ctx.prior, skipped: NOT_SYNCED };
  const call = customEvent(ref, ctx, SUBSCRIPTION_STATES.skipped.eventName, {
    subscription_id: c.subscription_contract_id,
    cycle_index: c.cycle_index,
    cycle_start_at: c.cycle_start_at,
    cycle_end_at: c.cycle_end_at,
    billing_date: c.billing_attempt_expected_date,
  });
  return {
    objectKey,
    objectUpdatedAt: null,
    calls: [call],
    nextState: ctx.prior,
    occurrence: `skip:${c.cycle_index ?? c.cycle_start_at ?? ctx.now.toISOString()}`,
  };
}
