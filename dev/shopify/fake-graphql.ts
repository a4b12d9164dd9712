import {
  execute,
  parse,
  validate,
  type DocumentNode,
  type GraphQLError,
  type GraphQLTypeResolver,
} from "graphql";
import { adminSchema } from "./admin-schema";
import { MAX_COST, operationOf, queryCost, QueryCostError } from "./query-cost";

/**
 * The fake Admin's GraphQL as Shopify runs it, from Shopify's schema and documentation (not from
 * the app): a document is parsed and validated against the kept schema (an unknown field fails
 * with Shopify's `undefinedField` error), its requested cost is computed (query-cost.ts) and
 * refused above 1,000 with MAX_COST_EXCEEDED, the shop's leaky bucket must hold the requested cost
 * (else THROTTLED), and the answer is the resolver's data projected through the schema's executor
 * (only the fields asked for, enums and non-null fields checked), with `extensions.cost`.
 *
 * Sources (read 2026-11-26): https://shopify.dev/docs/apps/build/apis/graphql-admin/rate-limits
 * (cost rules, bucket, THROTTLED, extensions.cost) and https://shopify.dev/docs/api/usage/limits.
 */

const DOCS = "https://shopify.dev/api/usage/rate-limits";

export type ShopifyErrorBody = { errors: Record<string, unknown>[]; extensions?: Record<string, unknown> };

export interface Prepared {
  document: DocumentNode;
  operationName: string | null;
  requested: number;
}

/**
 * Parsed, valid and within the single-query limit (`maxCost`, Shopify's 1,000 unless a test lowers
 * it); otherwise the error body Shopify answers.
 */
export function prepare(query: string, variables: Record<string, unknown>, operationName?: string | null, maxCost = MAX_COST): Prepared | ShopifyErrorBody {
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    const e = error as GraphQLError;
    return { errors: [{ message: e.message, locations: e.locations ?? [] }] };
  }
  const problems = validate(adminSchema(), document);
  if (problems.length) return { errors: problems.map(asShopifyError) };
  const operation = operationOf(document, operationName);
  if (!operation) return { errors: [{ message: operationName ? `No operation named "${operationName}"` : "An operation name is required" }] };
  let requested: number;
  try {
    requested = queryCost(adminSchema(), document, variables, { operationName }).requested;
  } catch (error) {
    if (error instanceof QueryCostError) return { errors: [{ message: error.message, extensions: { code: "BAD_REQUEST" } }] };
    throw error;
  }
  if (requested > maxCost) {
    return {
      errors: [
        {
          message:
            `Query cost is ${requested}, which exceeds the single query max cost limit (${maxCost}).\n\n` +
            `See ${DOCS} for more information on how the\ncost of a query is calculated.\n\n` +
            "To query larger amounts of data with fewer limits, bulk operations should be used instead.\n" +
            "See https://shopify.dev/tutorials/perform-bulk-operations-with-admin-api for usage details.\n",
          extensions: { code: "MAX_COST_EXCEEDED", cost: requested, maxCost, documentation: DOCS },
        },
      ],
    };
  }
  return { document, operationName: operation.name?.value ?? null, requested };
}

/** The problems Shopify finds in a document (none: valid against the schema). */
export function documentProblems(query: string): string[] {
  try {
    return validate(adminSchema(), parse(query)).map((e) => String(asShopifyError(e).message));
  } catch (error) {
    return [(error as Error).message];
  }
}

/** graphql-js's validation messages in Shopify's (graphql-ruby's) words where they differ. */
function asShopifyError(error: GraphQLError): Record<string, unknown> {
  const locations = error.locations ?? [];
  const unknownField = /^Cannot query field "(\w+)" on type "(\w+)"/.exec(error.message);
  if (unknownField) {
    const [, fieldName, typeName] = unknownField;
    return { message: `Field '${fieldName}' doesn't exist on type '${typeName}'`, locations, extensions: { code: "undefinedField", typeName, fieldName } };
  }
  const unknownArgument = /^Unknown argument "(\w+)" on field "(\w+)\.(\w+)"/.exec(error.message);
  if (unknownArgument) {
    const [, argumentName, , fieldName] = unknownArgument;
    return {
      message: `Field '${fieldName}' doesn't accept argument '${argumentName}'`,
      locations,
      extensions: { code: "argumentNotAccepted", name: fieldName, typeName: "Field", argumentName },
    };
  }
  return { message: error.message, locations };
}

/** An object's type: its `__typename`, else the type its Shopify GID names. */
const typeOf: GraphQLTypeResolver<unknown, unknown> = (value) => {
  const v = value as { __typename?: string; id?: unknown } | null;
  if (v?.__typename) return v.__typename;
  const fromId = typeof v?.id === "string" ? /^gid:\/\/shopify\/(\w+)\//.exec(v.id)?.[1] : undefined;
  return fromId;
};

/**
 * The answer to a prepared operation from `root` (the resolver's data, shaped as the schema's
 * fields): only what was selected, checked against the schema's types.
 */
export function answer(prepared: Prepared, variables: Record<string, unknown>, root: unknown): { data?: unknown; errors?: Record<string, unknown>[] } {
  const result = execute({
    schema: adminSchema(),
    document: prepared.document,
    operationName: prepared.operationName,
    variableValues: variables,
    rootValue: root ?? {},
    typeResolver: typeOf,
  });
  if ("then" in result) throw new Error("fake admin: resolvers must answer synchronously");
  if (!result.errors?.length) return { data: result.data };
  return {
    data: result.data,
    errors: result.errors.map((e) => ({ message: e.message, locations: e.locations ?? [], path: e.path ?? [] })),
  };
}

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/**
 * Shopify's leaky bucket, per app and store: the bucket must hold a query's requested cost before it
 * runs; the difference with the actual cost is given back after. Standard plan: 100 points a second
 * (the rate-limits page); a bucket of 1,000 points.
 */
export class CostBuckets {
  private readonly levels = new Map<string, { available: number; at: number }>();
  /** The level a shop's bucket starts at (the maximum unless configured). */
  private fill: number | undefined;
  private settings: Omit<ThrottleStatus, "currentlyAvailable"> = { maximumAvailable: 1_000, restoreRate: 100 };

  /** Every shop's bucket full again, at Shopify's standard size and rate. */
  reset(): void {
    this.levels.clear();
    this.fill = undefined;
    this.settings = { maximumAvailable: 1_000, restoreRate: 100 };
  }

  /** Sets the bucket's size and restore rate for every shop; `currentlyAvailable` fills (or empties) it now. */
  configure(bucket: Partial<ThrottleStatus>): void {
    const { currentlyAvailable, ...rest } = bucket;
    this.settings = { ...this.settings, ...rest };
    const now = Date.now();
    if (currentlyAvailable !== undefined) {
      this.fill = currentlyAvailable;
      for (const shop of this.levels.keys()) this.levels.set(shop, { available: currentlyAvailable, at: now });
    }
  }

  status(shop: string): ThrottleStatus {
    const level = this.level(shop);
    return { ...this.settings, currentlyAvailable: Math.floor(level.available) };
  }

  /** Takes `cost` from the shop's bucket; false (nothing taken) when it does not hold that much. */
  take(shop: string, cost: number): boolean {
    const level = this.level(shop);
    if (level.available < cost) return false;
    level.available -= cost;
    return true;
  }

  refund(shop: string, points: number): void {
    const level = this.level(shop);
    level.available = Math.min(this.settings.maximumAvailable, level.available + points);
  }

  private level(shop: string): { available: number; at: number } {
    const now = Date.now();
    const known = this.levels.get(shop) ?? { available: this.fill ?? this.settings.maximumAvailable, at: now };
    known.available = Math.min(this.settings.maximumAvailable, known.available + ((now - known.at) / 1000) * this.settings.restoreRate);
    known.at = now;
    this.levels.set(shop, known);
    return known;
  }
}

export function throttledBody(requested: number, status: ThrottleStatus): ShopifyErrorBody {
  return {
    errors: [{ message: "Throttled", extensions: { code: "THROTTLED", documentation: DOCS } }],
    extensions: { cost: { requestedQueryCost: requested, actualQueryCost: null, throttleStatus: status } },
  };
}

/** The actual cost of an answer (what was returned), for the refund. */
export function actualCost(prepared: Prepared, variables: Record<string, unknown>, data: unknown): number {
  try {
    return queryCost(adminSchema(), prepared.document, variables, { operationName: prepared.operationName, data: data ?? null }).actual ?? prepared.requested;
  } catch {
    return prepared.requested;
  }
}
