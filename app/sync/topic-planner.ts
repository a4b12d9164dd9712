/**
 * A sync topic's planner: the payload schema its body must match and the mapper it feeds. Each
 * topic's planner is a column of its line in the registry (app/sync/topics.server.ts).
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

export type Planner = (body: unknown, ctx: SyncContext, topic: string) => SyncPlan;

function parse<S extends z.ZodType>(schema: S, body: unknown, topic: string): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw new InvalidPayloadError(topic, result.error.issues);
  return result.data;
}

/** A topic's planner: its payload schema and the mapper it feeds. */
export function planner<S extends z.ZodType>(schema: S, map: (data: z.output<S>, ctx: SyncContext, topic: string) => SyncPlan): Planner {
  return (body, ctx, topic) => map(parse(schema, body, topic), ctx, topic);
}
