import type { z } from "zod";
import { adminGraphqlRequest } from "../shopify/admin-api.server";

/**
 * One Admin GraphQL call for a shop with its offline session, bounded by a timeout, its answer
 * parsed with `schema`. GraphQL errors (top-level `errors`) become an Error naming them.
 */
export async function adminGraphql<T extends z.ZodType>(shop: string, query: string, variables: Record<string, unknown>, schema: T): Promise<z.output<T>> {
  const body = await adminGraphqlRequest(shop, query, variables);
  if (body.errors) throw new Error(`Admin API: ${JSON.stringify(body.errors).slice(0, 300)}`);
  return schema.parse(body);
}
