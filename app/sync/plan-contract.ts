/**
 * The planning contract between the mappers and the pipeline: the context a mapper plans with, the
 * per-object sync state it reads and leaves, and the plan it returns. Pure: no I/O.
 */
import { z } from "zod";
import { lineItemSchema, type ServiceCall } from "../services/marketing/schemas";
import { consentMemorySchema } from "./consent";
import type { ShopSettings } from "./settings";

export interface SyncContext {
  shopDomain: string;
  /** Primary storefront origin, e.g. https://shop.example.com (no trailing slash needed). */
  storefrontUrl: string;
  /** Shop currency (ISO 4217), used where a payload carries none (products). */
  currency?: string;
  settings: ShopSettings;
  /** What this object's last applied plan left (its `nextState`). */
  prior: ObjectSyncState | null;
  /** The states of the plan's relatedKeys (read, never written), e.g. the kept customer of a merge. */
  related?: Readonly<Record<string, ObjectSyncState | null>>;
  now: Date;
  /**
   * The other subscription contracts of the customer this delivery concerns (customer and
   * subscription topics), as their last plans left them: the customer event's `subscriptions[]`.
   */
  customerSubscriptions?: ReadonlyArray<{ id: string; state: SubscriptionSyncState }>;
  /** The segments the shop mirrors as contact tags: numeric segment id → tag (Settings). */
  segmentTags?: Readonly<Record<string, string>>;
}

const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/);

export const customerSyncStateSchema = z.object({
  kind: z.literal("customer"),
  /** Email the contact is known under in the service (identity for later events/deletes). */
  email: z.string().nullable(),
  /** The customer's tags as last known from Shopify (a full list is diffed against this). */
  tags: z.array(z.string()),
  consent: consentMemorySchema,
  deleted: z.boolean(),
  /**
   * Name and phone as Shopify last told them (customers/create|update, the Admin API): the upsert that
   * creates the contact carries them whichever topic it comes from (a consent or tags topic has none).
   */
  profile: z.object({ firstName: z.string(), lastName: z.string(), phone: z.string() }).partial().optional(),
  /** The store account as customers/enable|disable last told (absent: never told). */
  account: z.enum(["enabled", "disabled"]).optional(),
  /**
   * Tags of the mirrored Shopify segments the customer is in (customer.joined_segment|left_segment),
   * apart from `tags`: a full Shopify tag list is diffed against `tags` only, never removing these.
   */
  segmentTags: z.array(z.string()).optional(),
  /** When a live customer.left_segment last removed each segment tag: an imported join older than it is stale. */
  segmentsLeftAt: z.record(z.string(), z.string()).optional(),
});

export const orderSyncStateSchema = z.object({
  kind: z.literal("order"),
  email: z.string().nullable(),
  customerId: z.string().nullable(),
  currency: z.string().nullable(),
  status: z.string().nullable(),
  /** Order total (decimal string) and refunded sum so far, for refund status inference. */
  total: decimalString.nullable(),
  refunded: decimalString,
  refundIds: z.array(z.string()),
  /** Sticky flags: once seen paid/fulfilled, stays so (a later refund does not undo the fact). */
  paid: z.boolean(),
  fulfilled: z.boolean(),
  /** order/completed was sent — never twice. */
  completed: z.boolean(),
  /** order/created was sent — never twice, whichever topic arrived first. */
  created: z.boolean().default(false),
  deleted: z.boolean(),
  /** Shopify's `test: true`: nothing of this order (nor of its refunds) is sent. */
  test: z.boolean().optional(),
  /** The order's name ("#1001"): the admin names a refund's rows by it (a refunds body has only order_id). */
  name: z.string().optional(),
});

export const productSyncStateSchema = z.object({
  kind: z.literal("product"),
  /** The service currently knows this product as live (created/updated sent, not deleted since). */
  advertised: z.boolean(),
  deleted: z.boolean(),
});

export const checkoutSyncStateSchema = z.object({
  kind: z.literal("checkout"),
  email: z.string().nullable(),
  /** Completed or deleted: late updates must not restart the abandonment timer. */
  closed: z.boolean(),
});

export const cartSyncStateSchema = z.object({
  kind: z.literal("cart"),
  created: z.boolean(),
});

export const subscriptionSyncStateSchema = z.object({
  kind: z.literal("subscription"),
  customerId: z.string().nullable(),
  status: z.string().nullable(),
  /** What the customer event's subscriptions[] says of this contract (optional: older states lack it). */
  currency: z.string().nullable().default(null),
  interval: z.string().nullable().default(null),
  intervalCount: z.number().int().nullable().default(null),
  amount: z.number().nullable().default(null),
  planId: z.string().nullable().default(null),
  planName: z.string().nullable().default(null),
  startedAt: z.string().nullable().default(null),
  endedAt: z.string().nullable().default(null),
  cancelledAt: z.string().nullable().default(null),
  /** Status changes so far: each one is a new occurrence (SyncPlan.occurrence). */
  changes: z.number().int().default(0),
});

/** JSON-serialisable memory of one synced object; parse stored JSON with this schema. */
export const objectSyncStateSchema = z.discriminatedUnion("kind", [
  customerSyncStateSchema,
  orderSyncStateSchema,
  productSyncStateSchema,
  checkoutSyncStateSchema,
  cartSyncStateSchema,
  subscriptionSyncStateSchema,
]);
export type ObjectSyncState = z.infer<typeof objectSyncStateSchema>;
export type CustomerSyncState = z.infer<typeof customerSyncStateSchema>;
export type OrderSyncState = z.infer<typeof orderSyncStateSchema>;
export type ProductSyncState = z.infer<typeof productSyncStateSchema>;
export type CheckoutSyncState = z.infer<typeof checkoutSyncStateSchema>;
export type CartSyncState = z.infer<typeof cartSyncStateSchema>;
export type SubscriptionSyncState = z.infer<typeof subscriptionSyncStateSchema>;

/** What a checkout snapshot must hold for `mapAbandonedCheckout` (stored by the scheduler). */
export const abandonedCheckoutSnapshotSchema = z.object({
  token: z.string().min(1),
  cartToken: z.string().nullable(),
  /** Cart id used in cart events (cart token when known, so cart/created → abandoned share it). */
  cartId: z.string().min(1),
  email: z.string().nullable(),
  referenceId: z.string().nullable(),
  url: z.string().nullable(),
  currency: z.string().nullable(),
  total: z.number().nullable(),
  totalProducts: z.number().int(),
  products: z.array(lineItemSchema),
  updatedAt: z.string().nullable(),
});
export type AbandonedCheckoutSnapshot = z.infer<typeof abandonedCheckoutSnapshotSchema>;

export type AbandonmentInstruction =
  | { action: "schedule"; key: string; snapshot: AbandonedCheckoutSnapshot }
  | { action: "cancel"; keys: string[] };

export interface SyncPlan {
  objectKey: string;
  /** UTC ISO of the object version; null = not a version of the object (an event), apply always. */
  objectUpdatedAt: string | null;
  calls: ServiceCall[];
  nextState: ObjectSyncState | null;
  abandonment?: AbandonmentInstruction;
  /** Why nothing (or less than usual) is sent. */
  skipped?: string;
  /** Other objects whose state the plan reads (locked and loaded with the object, given as ctx.related). */
  relatedKeys?: string[];
  /**
   * The plan reports one occurrence (a billing attempt, a status change): its calls are sent even
   * when equal to the last of their kind, and only a repeat of the same occurrence is dropped.
   */
  occurrence?: string;
}

/** Narrows `prior` to the state kind a mapper owns (a mismatched kind counts as none). */
export function priorOf<K extends ObjectSyncState["kind"]>(
  prior: ObjectSyncState | null,
  kind: K,
): Extract<ObjectSyncState, { kind: K }> | null {
  return prior && prior.kind === kind ? (prior as Extract<ObjectSyncState, { kind: K }>) : null;
}
