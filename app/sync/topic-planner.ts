/**
 * A sync topic's planner: the payload schema its body must match, the mapper it feeds, and the
 * keys of the objects a plan of it reads and writes. Each topic's planner is a column of its line
 * in the registry (app/sync/topics.server.ts).
 */
import type { z } from "zod";
import type { SyncContext, SyncPlan } from "./plan-contract";

/** A webhook body that does not match the topic's schema. `issues` are zod's. */
export class InvalidPayloadError extends Error {
  override readonly name = "InvalidPayloadError";
  constructor(
    readonly topic: string,
    readonly issues: z.core.$ZodIssue[],
  ) {
    const first = issues[0];
    const where = first ? `${first.path.join(".") || "(body)"}: ${first.message}` : "invalid";
    super(`Invalid ${topic} payload (${issues.length} issue${issues.length === 1 ? "" : "s"}; ${where})`);
  }
}

/**
 * What a plan of a body touches, known from the body alone (no stored state): its object, the
 * objects it reads (relatedKeys), and for a subscription contract the customer it names.
 */
export interface PlanKeys {
  objectKey: string;
  relatedKeys?: string[];
  customerId?: string | null;
}

/** A body parsed once: its keys (to lock and load), then its plan with the states loaded. */
export interface ReadWebhook {
  keys: PlanKeys;
  plan(ctx: SyncContext): SyncPlan;
}

export interface Planner {
  (body: unknown, ctx: SyncContext, topic: string): SyncPlan;
  /** Parses the body (throws InvalidPayloadError) without running the mapper. */
  read(body: unknown, ctx: Omit<SyncContext, "prior">, topic: string): ReadWebhook;
}

function parse<S extends z.ZodType>(schema: S, body: unknown, topic: string): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new InvalidPayloadError(topic, result.error.issues);
  return result.data;
}

/** A topic's planner: its payload schema, the mapper it feeds, and the keys a plan of it touches. */
export function planner<S extends z.ZodType>(
  schema: S,
  map: (data: z.output<S>, ctx: SyncContext, topic: string) => SyncPlan,
  keys: (data: z.output<S>, ctx: Omit<SyncContext, "prior">) => PlanKeys,
): Planner {
  const plan = (body: unknown, ctx: SyncContext, topic: string) => map(parse(schema, body, topic), ctx, topic);
  return Object.assign(plan, {
    read(body: unknown, ctx: Omit<SyncContext, "prior">, topic: string): ReadWebhook {
      const data = parse(schema, body, topic);
      return { keys: keys(data, ctx), plan: (full: SyncContext) => map(data, full, topic) };
    },
  });
}
