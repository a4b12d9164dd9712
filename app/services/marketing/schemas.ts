/**
 * Zod schemas for every request body and response of the marketing service
 * (see docs/marketing-service-interface.md).
 *
 * Requests are strict: unknown keys are rejected and every rule of the spec is
 * checked, so a bad call fails locally with the field named in the issue path.
 * Where the spec asks for less than a tidy value, the schema normalises rather
 * than refuses (timestamps → full ISO 8601, currencies → upper case,
 * customFields.source dropped). Every transform maps a type to itself, so
 * `z.input` and `z.infer` have the same shape and mappers build the types directly.
 *
 * Responses are lenient: unknown fields pass through, person/campaign/account
 * ids are normalised to decimal strings (exact beyond 2^53), `tags: null` becomes `[]`, PHP-style
 * empty arrays in place of objects become `{}`.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------
// Shared primitives
// ---------------------------------------------------------------------------

/** §4.5 "mixed": the service casts numbers to strings. */
export const mixedSchema = z.union([z.string().min(1), z.number()], {
  error: (iss) => (iss.input === undefined ? "Required" : "Expected a non-empty string or a number"),
});
export type Mixed = z.infer<typeof mixedSchema>;

// The spec says only "email address". Real shoppers have addresses such as `a&b@shop.com`,
// `a=b@x.com` or `jörg@x.de`, which zod's default (ASCII, no &/=) refuses; so the rule is written
// out: it refuses only what is clearly not an address (no or several @, spaces, empty or dotted-out
// local part, a domain without a dot or with an empty label).
const LOCAL_PART = /^(?!\.)(?!.*\.\.)[^\s@"(),:;<>[\]\\\p{Cc}]{1,64}(?<!\.)$/u;
const DOMAIN_LABEL = /^(?!-)[\p{L}\p{M}\p{N}-]{1,63}(?<!-)$/u;

/** True for anything a mail system could take as an address (see the rule above). */
export function isEmailAddress(value: string): boolean {
  if (value.length > 254) return false;
  const at = value.lastIndexOf("@");
  if (at < 1) return false;
  const labels = value.slice(at + 1).split(".");
  return (
    LOCAL_PART.test(value.slice(0, at)) &&
    labels.length >= 2 &&
    labels.every((l) => DOMAIN_LABEL.test(l)) &&
    !/^\d+$/.test(labels[labels.length - 1]!)
  );
}

/** An email address as the service and §8 accept it (≤254 chars). */
export const emailSchema = z.string().max(254, { abort: true }).refine(isEmailAddress, "Invalid email address");

/** ISO 8601 datetime with an explicit offset (`Z` or ±hh:mm). Used as is for `scheduledAt`, where §4.2 demands it. */
export const isoDateTimeSchema = z.iso.datetime({ offset: true });

const FULL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const ISO_LIKE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * §4.5 says only "ISO 8601 strings". A full datetime with seconds and an offset is kept as given;
 * anything else ISO-like (no seconds, no offset, a date alone, `+0200`, a space for `T`) becomes a
 * full UTC string, reading a missing offset as UTC. Returns null for what is not a date at all.
 */
export function normaliseTimestamp(value: string): string | null {
  const s = value.trim();
  if (FULL_ISO.test(s) && !Number.isNaN(Date.parse(s))) return s;
  const m = ISO_LIKE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", sec = "00", frac = "", off] = m;
  const parts = [y, mo, d, h, mi, sec].map(Number) as [number, number, number, number, number, number];
  const local = Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5], Number(frac.padEnd(3, "0").slice(0, 3)));
  const back = new Date(local);
  // refuse 2024-02-30, 25:00 and the like instead of letting Date roll them over
  if (back.getUTCMonth() !== parts[1] - 1 || back.getUTCDate() !== parts[2] || back.getUTCHours() !== parts[3] || back.getUTCMinutes() !== parts[4] || back.getUTCSeconds() !== parts[5]) return null;
  let offsetMinutes = 0;
  if (off && off.toUpperCase() !== "Z") {
    const digits = off.slice(1).replace(":", "");
    offsetMinutes = (off[0] === "-" ? -1 : 1) * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
  }
  return new Date(local - offsetMinutes * 60_000).toISOString();
}

/** Event-body timestamp: normalised by `normaliseTimestamp`, refused only when it is not a date. */
export const eventTimestampSchema = z.string().transform((value, ctx) => {
  const normalised = normaliseTimestamp(value);
  if (normalised === null) {
    ctx.addIssue({ code: "custom", message: "Expected an ISO 8601 timestamp" });
    return z.NEVER;
  }
  return normalised;
});

/** ISO 4217 currency code; `usd` and ` eur ` are normalised (the spec does not ask for upper case). */
export const currencySchema = z.string().trim().toUpperCase().regex(/^[A-Z]{3}$/, "Expected a three-letter ISO 4217 currency code");

/** Y-m-d, and a real calendar date. */
export const ymdDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "Expected a date in format Y-m-d")
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, "Expected a valid calendar date");

const pageSchema = z.number().int().min(1);
const perPageSchema = z.number().int().min(1).max(100);

// ---------------------------------------------------------------------------
// People — requests
// ---------------------------------------------------------------------------

export const personStatuses = ["active", "inactive"] as const;
export const personStatusSchema = z.enum(personStatuses);
export type PersonStatus = z.infer<typeof personStatusSchema>;

/** statusDetails values the service reports. */
export const personStatusDetailsValues = ["confirmed", "unconfirmed", "unsubscribed", "blocked"] as const;
/** statusDetails values a caller may set (`blocked` is set by the service only). */
export const settableStatusDetails = ["confirmed", "unconfirmed", "unsubscribed"] as const;
export const settableStatusDetailsSchema = z.enum(settableStatusDetails);
export type SettableStatusDetails = z.infer<typeof settableStatusDetailsSchema>;

/** `filter[status]` values, including the aliases. */
export const personStatusFilters = ["confirmed", "unconfirmed", "unsubscribed", "blocked", "active", "inactive"] as const;
export const personStatusFilterSchema = z.enum(personStatusFilters);
export type PersonStatusFilter = z.infer<typeof personStatusFilterSchema>;

export const customFieldValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type CustomFieldValue = z.infer<typeof customFieldValueSchema>;

/** One event tracked through POST /api/people: `eventName` plus free properties. */
export const personUpsertEventSchema = z.looseObject({ eventName: z.string().min(1) });
export type PersonUpsertEvent = z.infer<typeof personUpsertEventSchema>;

/**
 * A person or campaign id in a request: digits (exact at any size), or a number while it is exact
 * (§2.2/§2.4 type ids as integers; a JS number above 2^53 has already lost digits, so it is refused).
 */
export const serviceIdSchema = z.union([
  z.string().regex(/^[1-9]\d*$/, "Expected an id of digits"),
  z.number().int().positive().max(Number.MAX_SAFE_INTEGER, "Ids above 2^53 must be given as strings"),
]);
export type ServiceId = z.infer<typeof serviceIdSchema>;

export const personUpsertSchema = z
  .strictObject({
    id: serviceIdSchema.optional(),
    email: emailSchema.optional(),
    emailChange: emailSchema.optional(),
    source: z.string().min(1),
    // §2.2: the reserved custom field `source` is filled from the top-level `source`; §4.1 only says
    // the two collide. Sending both would leave the service to pick one, so the client drops it.
    customFields: z
      .record(z.string().min(1), customFieldValueSchema)
      .transform(({ source: _reserved, ...fields }) => fields)
      .optional(),
    tags: z.record(z.string().min(1), z.boolean()).optional(),
    series: z.record(z.string().min(1), z.boolean()).optional(),
    events: z.array(personUpsertEventSchema).optional(),
    skipDoubleOptIn: z.boolean().optional(),
    status: personStatusSchema.optional(),
    statusDetails: settableStatusDetailsSchema.optional(),
  })
  .superRefine(
    (v, ctx) => {
      if (typeof v !== "object" || v === null) return;
      if (v.id === undefined && v.email === undefined) {
        const message = "The email field is required when id is not present.";
        ctx.addIssue({ code: "custom", path: ["email"], message });
        ctx.addIssue({ code: "custom", path: ["id"], message: "The id field is required when email is not present." });
      }
      if (v.status && v.statusDetails) {
        const consistent = (v.status === "active") === (v.statusDetails === "confirmed");
        if (!consistent) {
          ctx.addIssue({
            code: "custom",
            path: ["statusDetails"],
            message: `statusDetails "${v.statusDetails}" contradicts status "${v.status}".`,
          });
        }
      }
    },
    { when: () => true },
  );
export type PersonUpsert = z.infer<typeof personUpsertSchema>;

/** Client-side filters for GET /api/people. Segment and tag names prefixed `-` are excluded. */
export const peopleListFiltersSchema = z.strictObject({
  segments: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  tags: z.array(z.string().min(1)).optional(),
  email: z.string().min(1).optional(),
  status: personStatusFilterSchema.optional(),
  /** filter[field-<name>] */
  fields: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).optional(),
  page: pageSchema.optional(),
  perPage: perPageSchema.optional(),
});
export type PeopleListFilters = z.infer<typeof peopleListFiltersSchema>;

/** Client-side filters for GET /api/people/{idOrEmail}/events. */
export const personEventsFiltersSchema = z.strictObject({
  event: z.string().min(1).max(100).optional(),
  search: z.string().min(1).max(255).optional(),
  dateFrom: ymdDateSchema.optional(),
  dateTo: ymdDateSchema.optional(),
  page: pageSchema.optional(),
  perPage: perPageSchema.optional(),
});
export type PersonEventsFilters = z.infer<typeof personEventsFiltersSchema>;

/** A person id (positive integer) or an email address. */
export const idOrEmailSchema = z.union([serviceIdSchema, emailSchema]);
export type IdOrEmail = z.infer<typeof idOrEmailSchema>;

// ---------------------------------------------------------------------------
// Campaigns — requests
// ---------------------------------------------------------------------------

export const campaignStatuses = ["draft", "sent", "scheduled", "sending", "preparing", "paused", "failed"] as const;
export type CampaignStatus = (typeof campaignStatuses)[number];
/** List filter values: `preparing` is not accepted (`sending` covers it). */
export const campaignStatusFilters = ["draft", "sent", "scheduled", "sending", "paused", "failed", "all"] as const;
export const campaignSortFields = ["name", "status", "createdAt"] as const;

export const campaignIdSchema = serviceIdSchema;

export const campaignListQuerySchema = z
  .strictObject({
    status: z.enum(campaignStatusFilters).optional(),
    page: pageSchema.optional(),
    perPage: perPageSchema.optional(),
    sort: z.enum(campaignSortFields).optional(),
    order: z.enum(["asc", "desc"]).optional(),
  })
  .superRefine(
    (v, ctx) => {
      if (typeof v === "object" && v && v.order !== undefined && v.sort === undefined) {
        ctx.addIssue({ code: "custom", path: ["order"], message: "order requires sort" });
      }
    },
    { when: () => true },
  );
export type CampaignListQuery = z.infer<typeof campaignListQuerySchema>;

export const campaignCreateSchema = z.strictObject({
  name: z.string().trim().min(1),
  templateId: z.string().min(1).optional(),
});
export type CampaignCreate = z.infer<typeof campaignCreateSchema>;

export const campaignCloneSchema = z.strictObject({ name: z.string().trim().min(1).optional() });
export type CampaignClone = z.infer<typeof campaignCloneSchema>;

export const nameEmailSchema = z.strictObject({ name: z.string().optional(), email: emailSchema.optional() });

export const campaignUpdateSchema = z
  .strictObject({
    name: z.string().trim().min(1).optional(),
    subject: z.string().optional(),
    previewText: z.string().optional(),
    sender: nameEmailSchema.optional(),
    replyTo: nameEmailSchema.optional(),
  })
  .superRefine(
    (v, ctx) => {
      if (typeof v === "object" && v && Object.values(v).every((x) => x === undefined)) {
        ctx.addIssue({ code: "custom", path: ["_body"], message: "At least one field must be given." });
      }
    },
    { when: () => true },
  );
export type CampaignUpdate = z.infer<typeof campaignUpdateSchema>;

export const campaignSendSchema = z.strictObject({ force: z.boolean().optional() });
export type CampaignSend = z.infer<typeof campaignSendSchema>;

export const campaignScheduleSchema = z.strictObject({
  scheduledAt: isoDateTimeSchema.refine((s) => Date.parse(s) > Date.now(), "scheduledAt must be in the future"),
  force: z.boolean().optional(),
});
export type CampaignSchedule = z.infer<typeof campaignScheduleSchema>;

export const testSendSchema = z.strictObject({
  recipients: z
    .array(emailSchema)
    .min(1)
    .max(10)
    .refine((r) => new Set(r.map((x) => x.toLowerCase())).size === r.length, "Recipients must be unique"),
});
export type TestSend = z.infer<typeof testSendSchema>;

export const templatesListQuerySchema = z.strictObject({
  page: pageSchema.optional(),
  perPage: perPageSchema.optional(),
});
export type TemplatesListQuery = z.infer<typeof templatesListQuerySchema>;

export const websiteTrackerModes = ["modern", "legacy", "compat"] as const;
export const websiteTrackerModeSchema = z.enum(websiteTrackerModes);
export type WebsiteTrackerMode = z.infer<typeof websiteTrackerModeSchema>;

// ---------------------------------------------------------------------------
// Events — requests
// ---------------------------------------------------------------------------

export const addressSchema = z.strictObject({
  label: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  phone: z.string().optional(),
  company: z.string().optional(),
  address1: z.string().optional(),
  address2: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postal_code: z.string().optional(),
  country: z.string().optional(),
});
export type Address = z.infer<typeof addressSchema>;

const lineItemShape = {
  id: mixedSchema,
  name: z.string().min(1),
  url: z.string().optional(),
  image_url: z.string().optional(),
  brand: z.string().optional(),
  variant_id: mixedSchema.optional(),
  price: z.number().optional(),
  total: z.number().optional(),
  discounts: z.number().optional(),
  taxes: z.number().optional(),
  fees: z.number().optional(),
  shipping: z.number().optional(),
  quantity: z.number().int().optional(),
};
/** Line item of cart and order events (`sku` allowed). */
export const lineItemSchema = z.strictObject({ ...lineItemShape, sku: z.string().optional() });
export type LineItem = z.infer<typeof lineItemSchema>;
/** Line item of subscription events (no `sku` in the spec). */
export const subscriptionLineItemSchema = z.strictObject(lineItemShape);
export type SubscriptionLineItem = z.infer<typeof subscriptionLineItemSchema>;

/** Fields common to every event endpoint (§4.5). */
const commonEventShape = {
  email: emailSchema.optional(),
  referenceId: mixedSchema.optional(),
  uuid: z.guid().optional(),
  source: z.string().min(1),
  silent: z.boolean().optional(),
  test: z.boolean().optional(),
};

export const EMAIL_REQUIRED_MESSAGE = "The email field is required when reference id is not present.";

/** Every event needs a person handle: email, referenceId or uuid. */
function requirePersonHandle(v: unknown, ctx: z.RefinementCtx): void {
  if (typeof v !== "object" || v === null) return;
  const o = v as Record<string, unknown>;
  if (o.email === undefined && o.referenceId === undefined && o.uuid === undefined) {
    ctx.addIssue({ code: "custom", path: ["email"], message: EMAIL_REQUIRED_MESSAGE });
  }
}
const always = { when: () => true } as const;

const ts = eventTimestampSchema.optional();

export const customEventSchema = z
  .strictObject({
    ...commonEventShape,
    eventName: z.string().min(1),
    properties: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine(requirePersonHandle, always);
export type CustomEvent = z.infer<typeof customEventSchema>;

export const cartActions = ["created", "updated", "abandoned"] as const;
export const cartActionSchema = z.enum(cartActions);
export type CartAction = z.infer<typeof cartActionSchema>;
export const cartEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    occurredAt: ts,
    products: z.array(lineItemSchema).optional(),
    total: z.number().optional(),
    total_products: z.number().int().optional(),
    url: z.string().optional(),
    currency: currencySchema.optional(),
    modified_at: ts,
  })
  .superRefine(requirePersonHandle, always);
export type CartEvent = z.infer<typeof cartEventSchema>;

export const productActions = ["viewed", "created", "updated", "deleted"] as const;
export const productActionSchema = z.enum(productActions);
export type ProductAction = z.infer<typeof productActionSchema>;
export const productVariantSchema = z.strictObject({
  id: mixedSchema,
  sku: z.string().optional(),
  price: z.number().optional(),
  barcode: z.string().optional(),
  options: z.array(z.string()).optional(),
});
export type ProductVariant = z.infer<typeof productVariantSchema>;
export const productEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    modified_at: ts,
    created_at: ts,
    name: z.string().optional(),
    description: z.string().optional(),
    url: z.string().optional(),
    image_url: z.string().optional(),
    sku: z.string().optional(),
    barcode: z.string().optional(),
    vendor: z.string().optional(),
    type: z.string().optional(),
    brand: z.string().optional(),
    public_id: z.string().optional(),
    variant_id: z.string().optional(),
    currency: currencySchema.optional(),
    price: z.number().optional(),
    categories: z.array(z.string()).optional(),
    tags: z.array(z.string()).optional(),
    variants: z.array(productVariantSchema).optional(),
  })
  .superRefine(requirePersonHandle, always);
export type ProductEvent = z.infer<typeof productEventSchema>;

export const orderActions = ["created", "updated", "deleted", "completed"] as const;
export const orderActionSchema = z.enum(orderActions);
export type OrderAction = z.infer<typeof orderActionSchema>;
export const orderEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    occurred_at: ts,
    products: z.array(lineItemSchema).optional(),
    currency: currencySchema.optional(),
    publicId: mixedSchema.optional(),
    total: z.number().optional(),
    shipping: z.number().optional(),
    discounts: z.number().optional(),
    taxes: z.number().optional(),
    fees: z.number().optional(),
    status: z.string().optional(),
    url: z.string().optional(),
    phone: z.string().optional(),
    billing_address: addressSchema.optional(),
    shipping_address: addressSchema.optional(),
    payment_gateway: z.string().optional(),
    _ls: z.string().optional(),
  })
  .superRefine(requirePersonHandle, always);
export type OrderEvent = z.infer<typeof orderEventSchema>;

export const customerUserSchema = z.strictObject({
  id: mixedSchema.optional(),
  username: z.string().optional(),
  email: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  display_name: z.string().optional(),
  role: z.string().optional(),
  url: z.string().optional(),
  avatar_url: z.string().optional(),
  status: z.string().optional(),
  created_at: ts,
  modified_at: ts,
  last_login: ts,
});
export const customerSubscriptionSchema = z.strictObject({
  plan: z.string().optional(),
  plan_name: z.string().optional(),
  plan_interval: z.string().optional(),
  status: z.string().optional(),
  currency: currencySchema.optional(),
  plan_id: mixedSchema.optional(),
  plan_amount: z.number().optional(),
  plan_interval_count: z.number().int().optional(),
  start_date: ts,
  end_date: ts,
  trial_end_date: ts,
  canceled_at: ts,
});

export const customerActions = ["created", "updated", "deleted"] as const;
export const customerActionSchema = z.enum(customerActions);
export type CustomerAction = z.infer<typeof customerActionSchema>;
export const customerEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    is_contact: z.boolean().optional(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    name: z.string().optional(),
    customer_email: z.string().optional(),
    status: z.string().optional(),
    phone: z.string().optional(),
    url: z.string().optional(),
    avatar_url: z.string().optional(),
    currency: currencySchema.optional(),
    payment_gateway: z.string().optional(),
    crm: z.string().optional(),
    created_at: ts,
    modified_at: ts,
    user_id: mixedSchema.optional(),
    public_id: mixedSchema.optional(),
    purchase_count: z.number().int().optional(),
    purchase_value: z.number().optional(),
    address: addressSchema.optional(),
    billing_address: addressSchema.optional(),
    shipping_address: addressSchema.optional(),
    user: customerUserSchema.optional(),
    plan: z.string().optional(),
    plan_name: z.string().optional(),
    plan_interval: z.string().optional(),
    plan_id: mixedSchema.optional(),
    plan_amount: z.number().optional(),
    plan_interval_count: z.number().int().optional(),
    subscriptions: z.array(customerSubscriptionSchema).optional(),
  })
  .superRefine(requirePersonHandle, always);
export type CustomerEvent = z.infer<typeof customerEventSchema>;

export const userActions = ["created", "updated", "deleted"] as const;
export const userActionSchema = z.enum(userActions);
export type UserAction = z.infer<typeof userActionSchema>;
export const userEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    is_contact: z.boolean().optional(),
    username: z.string().optional(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    display_name: z.string().optional(),
    role: z.string().optional(),
    url: z.string().optional(),
    avatar_url: z.string().optional(),
    status: z.string().optional(),
    created_at: ts,
    modified_at: ts,
    deleted_at: ts,
    last_login: ts,
  })
  .superRefine(requirePersonHandle, always);
export type UserEvent = z.infer<typeof userEventSchema>;

export const subscriptionActions = [
  "created",
  "updated",
  "deleted",
  "renewed",
  "cancelled",
  "expired",
  "renewal_failed",
] as const;
export const subscriptionActionSchema = z.enum(subscriptionActions);
export type SubscriptionAction = z.infer<typeof subscriptionActionSchema>;
export const subscriptionEventSchema = z
  .strictObject({
    ...commonEventShape,
    id: mixedSchema,
    url: z.string().optional(),
    currency: currencySchema.optional(),
    products: z.array(subscriptionLineItemSchema).optional(),
  })
  .superRefine(requirePersonHandle, always);
export type SubscriptionEvent = z.infer<typeof subscriptionEventSchema>;

export const eventTypes = ["cart", "product", "order", "customer", "user", "subscription"] as const;
export type EventType = (typeof eventTypes)[number];

export const eventActions = {
  cart: cartActions,
  product: productActions,
  order: orderActions,
  customer: customerActions,
  user: userActions,
  subscription: subscriptionActions,
} as const;

export const eventBodySchemas = {
  cart: cartEventSchema,
  product: productEventSchema,
  order: orderEventSchema,
  customer: customerEventSchema,
  user: userEventSchema,
  subscription: subscriptionEventSchema,
} as const;

export interface EventBodies {
  cart: CartEvent;
  product: ProductEvent;
  order: OrderEvent;
  customer: CustomerEvent;
  user: UserEvent;
  subscription: SubscriptionEvent;
}
export interface EventActionsByType {
  cart: CartAction;
  product: ProductAction;
  order: OrderAction;
  customer: CustomerAction;
  user: UserAction;
  subscription: SubscriptionAction;
}

// ---------------------------------------------------------------------------
// ServiceCall — one outbound call the sync pipeline can queue
// ---------------------------------------------------------------------------

const eventCall = <T extends EventType, A extends z.ZodType, B extends z.ZodType>(type: T, action: A, body: B) =>
  z.strictObject({ op: z.literal("event"), type: z.literal(type), action, body });

export const typedEventCallSchema = z.discriminatedUnion("type", [
  eventCall("cart", cartActionSchema, cartEventSchema),
  eventCall("product", productActionSchema, productEventSchema),
  eventCall("order", orderActionSchema, orderEventSchema),
  eventCall("customer", customerActionSchema, customerEventSchema),
  eventCall("user", userActionSchema, userEventSchema),
  eventCall("subscription", subscriptionActionSchema, subscriptionEventSchema),
]);
export type TypedEventCall = z.infer<typeof typedEventCallSchema>;

export const serviceCallSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("person.upsert"), body: personUpsertSchema }),
  z.strictObject({ op: z.literal("person.delete"), idOrEmail: z.string().min(1) }),
  z.strictObject({ op: z.literal("event.custom"), body: customEventSchema }),
  typedEventCallSchema,
]);
export type ServiceCall = z.infer<typeof serviceCallSchema>;
export type ServiceCallOp = ServiceCall["op"];

// ---------------------------------------------------------------------------
// Responses (lenient)
// ---------------------------------------------------------------------------

/**
 * Person, campaign and account ids (§2 "integer"; samples render some as strings) are read as
 * decimal strings: they may pass 2^53, where a JS number changes them. The response text is parsed
 * losslessly (client.server.ts), so an unsafe integer arrives here as its exact digits.
 */
export const responseIdSchema = z.union([z.number().int(), z.string().regex(/^-?\d+$/)]).transform((v) => String(v));
/** String id that may be rendered as a number. */
export const stringIdSchema = z.union([z.string(), z.number()]).transform((v) => String(v));
/** PHP renders an empty map as `[]`; treat null/[]/missing as `{}`. */
const looseMap = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown()), z.null()])
  .optional()
  .transform((v): Record<string, unknown> => (v && !Array.isArray(v) ? v : {}));
/** §2.1 from/to: an empty page may carry 0, null or nothing — all read as null (no record). */
const nullableInt = z.union([z.number(), z.string().regex(/^-?\d+$/), z.null()]).optional().transform((v) => (v === null || v === undefined || Number(v) === 0 ? null : Number(v)));

export const paginationMetaSchema = z.looseObject({
  currentPage: z.coerce.number(),
  lastPage: z.coerce.number(),
  from: nullableInt,
  to: nullableInt,
  total: z.coerce.number(),
  perPage: z.coerce.number(),
  path: z.string().optional(),
});
export type PaginationMeta = z.infer<typeof paginationMetaSchema>;

export const paginationLinksSchema = z.looseObject({
  next: z.string().nullable().optional().transform((v) => v ?? null),
  prev: z.string().nullable().optional().transform((v) => v ?? null),
  first: z.string().optional(),
  last: z.string().optional(),
});
export type PaginationLinks = z.infer<typeof paginationLinksSchema>;

export const paginatedSchema = <T extends z.ZodType>(item: T) =>
  z.looseObject({ data: z.array(item), meta: paginationMetaSchema, links: paginationLinksSchema });
export interface Page<T> {
  data: T[];
  meta: PaginationMeta;
  links: PaginationLinks;
}

export const seriesRefSchema = z.looseObject({ id: stringIdSchema, name: z.string().nullable().optional() });

export const personSchema = z.looseObject({
  id: responseIdSchema,
  email: z.string(),
  status: z.string(),
  statusDetails: z.string().optional(),
  customFields: looseMap,
  tags: z
    .array(z.string())
    .nullable()
    .optional()
    .transform((t) => t ?? []),
  series: z.array(seriesRefSchema).optional(),
  timestamp: z.coerce.number().optional(),
  eventUuid: z.string().optional(),
});
export type Person = z.infer<typeof personSchema>;

export const personResponseSchema = z.looseObject({ data: personSchema });
export const peopleListResponseSchema = paginatedSchema(personSchema);
export const personCheckResponseSchema = z.looseObject({ exists: z.boolean(), email: z.string() });
export type PersonCheck = z.infer<typeof personCheckResponseSchema>;

export const personEventRecordSchema = z.looseObject({
  timestamp: z.coerce.number(),
  event: z.string(),
  properties: looseMap,
});
export type PersonEventRecord = z.infer<typeof personEventRecordSchema>;
export const personEventsResponseSchema = paginatedSchema(personEventRecordSchema);

const nameEmailResponse = z
  .looseObject({ name: z.string().nullable().optional(), email: z.string().nullable().optional() })
  .nullable()
  .optional();

export const campaignSchema = z.looseObject({
  id: responseIdSchema,
  name: z.string(),
  status: z.string(),
  subject: z.string().nullable().optional(),
  previewText: z.string().nullable().optional(),
  sender: nameEmailResponse,
  replyTo: nameEmailResponse,
  builderReviewed: z.boolean().optional(),
  createdAt: z.string().optional(),
  scheduledAt: z.string().nullable().optional().transform((v) => v ?? null),
  sentAt: z.string().nullable().optional().transform((v) => v ?? null),
  links: z
    .looseObject({ campaignUrl: z.string().optional(), editorUrl: z.string().optional() })
    .optional(),
});
export type Campaign = z.infer<typeof campaignSchema>;
export const campaignResponseSchema = z.looseObject({ data: campaignSchema });
export const campaignListResponseSchema = paginatedSchema(campaignSchema);

export const testSendResponseSchema = z.looseObject({
  data: z.looseObject({ recipients: z.array(z.string()) }),
});
export type TestSendResult = z.infer<typeof testSendResponseSchema>["data"];

export const templateSchema = z.looseObject({
  id: stringIdSchema,
  name: z.string(),
  description: z.string().nullable().optional(),
  previewUrl: z.string().nullable().optional(),
  createdAt: z.string().optional(),
});
export type Template = z.infer<typeof templateSchema>;
export const templateListResponseSchema = paginatedSchema(templateSchema);

export const accountSchema = z.looseObject({
  id: responseIdSchema,
  company: z.string().nullable().optional(),
  email: z.string(),
  phone: z.string().nullable().optional(),
  status: z.string(),
  createdAt: z.string().optional(),
  timezone: z.string().optional(),
  plan: z.looseObject({ marketing: z.string().nullable().optional() }).nullable().optional(),
  logoUrl: z.string().nullable().optional(),
});
export type Account = z.infer<typeof accountSchema>;
export const accountResponseSchema = z.looseObject({ data: accountSchema });

export const authenticatedResponseSchema = z.looseObject({
  data: z.looseObject({ authenticated: z.boolean() }),
});

export const websiteTrackerSchema = z.looseObject({
  mode: z.string(),
  snippet: z.string(),
  // §2.7 types it as an integer; before any event a service may send null, nothing or 0: all read as null
  lastEventTrackedAt: z.union([z.number(), z.string(), z.null()]).optional().transform((v) => (v === null || v === undefined || Number(v) === 0 ? null : Number(v))),
});
export type WebsiteTracker = z.infer<typeof websiteTrackerSchema>;
export const websiteTrackerResponseSchema = z.looseObject({ data: websiteTrackerSchema });

export const eventResponseSchema = z.looseObject({ success: z.boolean(), timestamp: z.coerce.number() });
export type EventResult = z.infer<typeof eventResponseSchema>;

// Error bodies are read field by field: a field of an unexpected shape (`links: null`, an amount
// sent as "29.00") is dropped on its own and never costs the message, the errors or the kind.
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const amountSchema = z.union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/).transform(Number)]);

export const upgradeSchema = z.looseObject({
  level: lenient(z.string()),
  levelName: lenient(z.string()),
  monthlyAmount: lenient(amountSchema),
  proratedAmount: lenient(amountSchema),
});
export type UpgradeInfo = z.infer<typeof upgradeSchema>;

export const errorLinksSchema = z.looseObject({
  campaignUrl: lenient(z.string()),
  editorUrl: lenient(z.string()),
});
export type ErrorLinks = z.infer<typeof errorLinksSchema>;

/** `errors`: field → messages; a single string becomes a one-item list, entries of other shapes are skipped. */
const errorMessagesSchema = z.record(z.string(), z.unknown()).transform((e) => {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(e)) {
    const messages = (Array.isArray(v) ? v : [v]).filter((m): m is string => typeof m === "string");
    if (messages.length) out[k] = messages;
  }
  return out;
});

/** §7 error body. Every field is optional (a not-found body carries only `message`) and parsed on its own. */
export const errorBodySchema = z
  .looseObject({
    message: lenient(z.string()),
    errors: lenient(errorMessagesSchema),
    status_code: lenient(z.coerce.number().int()),
    links: lenient(errorLinksSchema),
    upgrade: lenient(upgradeSchema),
  })
  .catch({});
export type ErrorBody = z.infer<typeof errorBodySchema>;
