import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from "graphql";

/**
 * Shopify's Admin GraphQL schema of the app's API version, from Shopify's own introspection
 * (shopify-schema/, see its README). Read once per process: the fake Admin answers from it and
 * tests validate the app's documents against it.
 */
export const ADMIN_API_VERSION = "2026-10";

const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), `../../shopify-schema/admin_${ADMIN_API_VERSION}.json.gz`);

let schema: GraphQLSchema | undefined;

export function adminSchema(): GraphQLSchema {
  if (!schema) {
    const introspection = JSON.parse(gunzipSync(readFileSync(FILE)).toString("utf8")) as { data: IntrospectionQuery };
    schema = buildClientSchema(introspection.data, { assumeValid: true });
  }
  return schema;
}
