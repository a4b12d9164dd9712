/**
 * The one place each marketing-service event body is built, and the event call that carries it.
 * Every body is the person (email or referenceId), the shop's `source`, then the kind's own
 * fields in the order given; null, undefined and "" are left out (the service's schemas are
 * strict: optional ≠ nullable). The mappers and the storefront's pixel events build through here,
 * so nothing else writes `source` into an event body. Pure.
 */
import type {
  CartEvent,
  CustomerEvent,
  CustomEvent,
  EventActionsByType,
  EventBodies,
  EventType,
  OrderEvent,
  ProductEvent,
  ServiceCall,
  SubscriptionEvent,
  UserEvent,
} from "../services/marketing/schemas";
import { compact, type PersonRef } from "./mappers/common";

/** The envelope every event shares: who it is about and which app sent it. */
type Envelope = "email" | "referenceId" | "uuid" | "source";
/** A kind's own fields as its schema types them, where an optional one may also be null (left out). */
export type BodyFields<T> = {
  [K in keyof T as K extends Envelope ? never : K]: undefined extends T[K] ? T[K] | null : T[K];
};

function envelope(person: PersonRef, source: string, fields: object): unknown {
  return compact({ ...person, source, ...fields });
}

export function cartEventBody(person: PersonRef, source: string, fields: BodyFields<CartEvent>): CartEvent {
  return envelope(person, source, fields) as CartEvent;
}

export function productEventBody(person: PersonRef, source: string, fields: BodyFields<ProductEvent>): ProductEvent {
  return envelope(person, source, fields) as ProductEvent;
}

export function orderEventBody(person: PersonRef, source: string, fields: BodyFields<OrderEvent>): OrderEvent {
  return envelope(person, source, fields) as OrderEvent;
}

export function customerEventBody(person: PersonRef, source: string, fields: BodyFields<CustomerEvent>): CustomerEvent {
  return envelope(person, source, fields) as CustomerEvent;
}

export function userEventBody(person: PersonRef, source: string, fields: BodyFields<UserEvent>): UserEvent {
  return envelope(person, source, fields) as UserEvent;
}

export function subscriptionEventBody(
  person: PersonRef,
  source: string,
  fields: BodyFields<SubscriptionEvent>
): SubscriptionEvent {
  return envelope(person, source, fields) as SubscriptionEvent;
}

/** A custom event's properties are its fields: they are left out when empty too. */
export function customEventBody(
  person: PersonRef,
  source: string,
  { properties, ...fields }: BodyFields<CustomEvent> & { properties: Record<string, unknown> }
): CustomEvent {
  return envelope(person, source, { ...fields, properties: compact(properties) }) as CustomEvent;
}

/** Typed constructor of an `event` service call. */
export function eventCall<T extends EventType>(
  type: T,
  action: EventActionsByType[T],
  body: EventBodies[T]
): ServiceCall {
  return { op: "event", type, action, body } as ServiceCall;
}
