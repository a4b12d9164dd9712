import type { z } from "zod";
import { config } from "../config.server";

/**
 * One Admin GraphQL call for a shop with its offline session, bounded by a timeout, its answer
 * parsed with `schema`. GraphQL errors (top-level `errors`) become an Error naming them.
 */
export async function adminGraphql<T extends z.ZodType>(shop: string, query: string, variables: Record<string, unknown>, schema: T): Promise<z.output<T>> {
  // Loaded on first use: the worker's modules must not configure the Shopify app when imported.
  const { unauthenticated } = await import("../shopify.server");
  const { admin } = await unauthenticated.admin(shop);
  const response = await admin.graphql(query, { variables, signal: AbortSignal.timeout(config().marketingApiTimeoutMs) });
  const body = (await response.json()) as { errors?: unknown };
  if (body.errors) throw new Error(`Admin API: ${JSON.stringify(body.errors).slice(0, 300)}`);
  return schema.parse(body);
}
