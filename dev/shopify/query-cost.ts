import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isCompositeType,
  isListType,
  Kind,
  typeFromAST,
  valueFromAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/**
 * Shopify's calculated query cost, as shopify.dev documents it ("GraphQL Admin API rate limits",
 * https://shopify.dev/docs/apps/build/apis/graphql-admin/rate-limits, read 2026-11-26):
 *
 * - a field returning a scalar or an enum costs 0, an object 1 (plus what is selected in it);
 * - an interface or a union costs the maximum of its possible selections;
 * - a connection is sized by its `first` / `last` argument: 2, plus that many times the cost of
 *   one node's selection (`nodes { … }` or `edges { node { … } }`), plus what else is selected on it
 *   (`pageInfo`: an object, 1);
 * - a mutation costs 10;
 * - a single query may request at most 1,000 (MAX_COST); the bucket must hold the requested cost
 *   before the query runs, and is refunded the difference with the actual cost (the same rules
 *   applied to what was returned: the nodes a connection really had, no cost for a null object).
 *
 * Lists of objects that are not connections (e.g. `selectedOptions`) count as one object.
 */
export const MAX_COST = 1_000;
export const MUTATION_COST = 10;
/** Shopify's largest page (`first` / `last` above it is refused). */
export const MAX_PAGE_SIZE = 250;

export class QueryCostError extends Error {
  override readonly name = "QueryCostError";
}

export interface QueryCost {
  requested: number;
  /** With `data`: the cost of what was returned. */
  actual?: number;
}

interface Context {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

/** The operation `operationName` of `document` (or its only one). */
export function operationOf(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
}

/**
 * The requested cost of one operation of a valid document (and, given the answer's `data`, its
 * actual cost). Throws QueryCostError where Shopify refuses a connection's size.
 */
export function queryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> = {},
  options: { operationName?: string | null; data?: unknown } = {},
): QueryCost {
  const operation = operationOf(document, options.operationName);
  if (!operation) throw new QueryCostError("the document has no operation of that name");
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const ctx: Context = { schema, fragments, variables: withDefaults(schema, operation, variables) };
  if (operation.operation === "mutation") {
    const count = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD && s.name.value !== "__typename").length;
    return { requested: count * MUTATION_COST, actual: options.data === undefined ? undefined : count * MUTATION_COST };
  }
  const root = operation.operation === "query" ? schema.getQueryType() : schema.getSubscriptionType();
  if (!root) throw new QueryCostError(`the schema has no ${operation.operation} type`);
  const requested = selectionCost(ctx, root, operation.selectionSet, undefined);
  const actual = options.data === undefined ? undefined : selectionCost(ctx, root, operation.selectionSet, options.data ?? null);
  return { requested, actual };
}

function withDefaults(schema: GraphQLSchema, operation: OperationDefinitionNode, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...given };
  for (const v of operation.variableDefinitions ?? []) {
    const name = v.variable.name.value;
    if (out[name] === undefined && v.defaultValue) {
      const type = typeFromAST(schema, v.type);
      if (type) out[name] = valueFromAST(v.defaultValue, type as Parameters<typeof valueFromAST>[1]);
    }
  }
  return out;
}

/**
 * Cost of a selection set on `type`. `data` undefined: requested; otherwise the returned value
 * (null: nothing returned, nothing charged).
 */
function selectionCost(ctx: Context, type: GraphQLCompositeType, set: SelectionSetNode, data: unknown): number {
  const candidates: readonly GraphQLObjectType[] = isAbstractType(type) ? ctx.schema.getPossibleTypes(type) : [type as GraphQLObjectType];
  let best = 0;
  for (const concrete of candidates) {
    let sum = 0;
    for (const field of collectFields(ctx, concrete, set)) sum += fieldCost(ctx, concrete, field, data);
    best = Math.max(best, sum);
  }
  return best;
}

/** The fields of `set` that apply to the object type `concrete` (fragments followed). */
function collectFields(ctx: Context, concrete: GraphQLObjectType, set: SelectionSetNode, out: FieldNode[] = []): FieldNode[] {
  for (const s of set.selections) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) {
      if (!s.typeCondition || applies(ctx, concrete, s.typeCondition.name.value)) collectFields(ctx, concrete, s.selectionSet, out);
    } else {
      const fragment = ctx.fragments.get(s.name.value);
      if (fragment && applies(ctx, concrete, fragment.typeCondition.name.value)) collectFields(ctx, concrete, fragment.selectionSet, out);
    }
  }
  return out;
}

function applies(ctx: Context, concrete: GraphQLObjectType, condition: string): boolean {
  if (condition === concrete.name) return true;
  const type = ctx.schema.getType(condition);
  return Boolean(type && isAbstractType(type) && ctx.schema.isSubType(type, concrete));
}

function fieldCost(ctx: Context, parent: GraphQLObjectType, node: FieldNode, data: unknown): number {
  if (node.name.value.startsWith("__")) return 0;
  const def = parent.getFields()[node.name.value];
  if (!def || !node.selectionSet) return 0;
  const named = getNamedType(def.type);
  if (!isCompositeType(named)) return 0;
  const key = node.alias?.value ?? node.name.value;
  const value = data === undefined ? undefined : data === null || typeof data !== "object" ? null : (data as Record<string, unknown>)[key];
  if (value === null) return 0;
  if (isConnection(def)) return connectionCost(ctx, def, node, value);
  // An object (a list of objects that is not a connection counts once).
  const one = isListType(getNullableType(def.type)) && Array.isArray(value) ? (value.find((v) => v !== null) ?? null) : value;
  return 1 + selectionCost(ctx, named, node.selectionSet, one);
}

function isConnection(def: GraphQLField<unknown, unknown>): boolean {
  return getNamedType(def.type).name.endsWith("Connection") && def.args.some((a) => a.name === "first" || a.name === "last");
}

function argument(ctx: Context, node: FieldNode, name: string): unknown {
  const arg = node.arguments?.find((a) => a.name.value === name);
  if (!arg) return undefined;
  if (arg.value.kind === Kind.VARIABLE) return ctx.variables[arg.value.name.value] ?? undefined;
  if (arg.value.kind === Kind.INT) return Number(arg.value.value);
  return undefined;
}

function connectionCost(ctx: Context, def: GraphQLField<unknown, unknown>, node: FieldNode, value: unknown): number {
  const first = argument(ctx, node, "first");
  const last = argument(ctx, node, "last");
  const size = first ?? last;
  if (typeof size !== "number") throw new QueryCostError(`you must provide one of first or last for the ${def.name} connection`);
  if (size > MAX_PAGE_SIZE || size < 0) throw new QueryCostError(`the ${first !== undefined ? "first" : "last"} argument of ${def.name} must be between 0 and ${MAX_PAGE_SIZE}`);
  const connection = getNamedType(def.type) as GraphQLObjectType;
  const returned = value as Record<string, unknown> | undefined;
  let cost = 2;
  for (const f of collectFields(ctx, connection, node.selectionSet!)) {
    const key = f.alias?.value ?? f.name.value;
    const fdef = connection.getFields()[f.name.value];
    if (!fdef || !f.selectionSet || !isCompositeType(getNamedType(fdef.type))) continue;
    const items = returned === undefined ? undefined : ((returned[key] as unknown[] | null | undefined) ?? []);
    if (f.name.value === "nodes") {
      cost += perItem(items, size, (item) => 1 + selectionCost(ctx, getNamedType(fdef.type) as GraphQLCompositeType, f.selectionSet!, item));
    } else if (f.name.value === "edges") {
      // The edge itself is free: each item costs its node.
      const edge = getNamedType(fdef.type) as GraphQLObjectType;
      cost += perItem(items, size, (item) => {
        let c = 0;
        for (const e of collectFields(ctx, edge, f.selectionSet!)) c += fieldCost(ctx, edge, e, item);
        return c;
      });
    } else {
      cost += fieldCost(ctx, connection, f, returned);
    }
  }
  return cost;
}

function perItem(items: unknown[] | undefined, size: number, cost: (item: unknown) => number): number {
  if (items === undefined) return size * cost(undefined);
  return items.reduce<number>((sum, item) => sum + (item === null ? 0 : cost(item)), 0);
}
