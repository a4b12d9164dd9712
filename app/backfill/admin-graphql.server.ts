/**
 * Admin GraphQL for the app's own reads (bulk exports, lookups of unknown objects, reconciliation),
 * within each shop's cost budget: Shopify answers every query with
 * `extensions.cost.throttleStatus` (currentlyAvailable, restoreRate); a query that would overdraw
 * the bucket waits for it to refill first, and a THROTTLED answer waits and tries again — each
 * wait bounded, so a shop throttled for minutes fails the step (retried later), never a worker.
 * A MAX_COST_EXCEEDED answer (Shopify charges more than the documented rules show) halves the
 * document's page size, when it has one, and asks again: the smaller page is kept for the next
 * runs of the document in this process.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { logger } from "../logger.server";
import { adminGraphqlRequest, type AdminAnswer } from "../shopify/admin-api.server";

/** Shopify's budget could not be had within the wait allowed: try again later. */
export class AdminThrottled extends Error {
  override readonly name = "AdminThrottled";
}

/** Shopify answered, but not with data (HTTP error, GraphQL errors other than THROTTLED). */
export class AdminApiError extends Error {
  override readonly name = "AdminApiError";
}

const throttleStatus = z.object({
  maximumAvailable: z.number(),
  currentlyAvailable: z.number(),
  restoreRate: z.number(),
});
const costSchema = z.looseObject({
  requestedQueryCost: z.number().nullish(),
  actualQueryCost: z.number().nullish(),
  throttleStatus: throttleStatus.nullish(),
});
const extensionsSchema = z.looseObject({ cost: costSchema.nullish() }).nullish();
const graphqlError = z.looseObject({ message: z.string(), extensions: z.looseObject({ code: z.string().nullish() }).nullish() });

interface Bucket {
  available: number;
  maximum: number;
  restoreRate: number;
  at: number;
}

// Per process: each process keeps its own estimate (others' spending shows up in the next answer).
const buckets = new Map<string, Bucket>();
// Each document's requested cost as Shopify reported it (it depends on the document only): the
// next run of the same document waits for that much. Bounded: the app has a few dozen documents.
const requestedCosts = new Map<string, number>();
// Each paged document's page size after MAX_COST_EXCEEDED answers (absent: its default).
const pageSizes = new Map<string, number>();
const MAX_REMEMBERED_DOCUMENTS = 200;

function estimate(b: Bucket, now: number): number {
  return Math.min(b.maximum, b.available + ((now - b.at) / 1000) * b.restoreRate);
}

function remember(shop: string, extensions: unknown): z.infer<typeof costSchema> | undefined {
  const parsed = extensionsSchema.safeParse(extensions);
  const cost = parsed.success ? parsed.data?.cost : undefined;
  const t = cost?.throttleStatus;
  if (t) buckets.set(shop, { available: t.currentlyAvailable, maximum: t.maximumAvailable, restoreRate: t.restoreRate, at: Date.now() });
  return cost ?? undefined;
}

/** Milliseconds until the shop's bucket holds `cost` points (0: now; Infinity: it never refills). */
function waitFor(shop: string, cost: number): number {
  const b = buckets.get(shop);
  if (!b) return 0;
  const missing = Math.min(cost, b.maximum) - estimate(b, Date.now());
  if (missing <= 0) return 0;
  return b.restoreRate > 0 ? Math.ceil((missing / b.restoreRate) * 1000) : Infinity;
}

export interface AdminQueryOptions {
  /** What the query is expected to cost; default: what Shopify reported for this document before (10 the first time). */
  cost?: number;
  /** Longest wait for the budget, in all, before giving up with AdminThrottled. */
  maxWaitMs?: number;
  /**
   * The variable sizing the document's page (`$first: Int = 179`, the default written in the
   * document): halved when Shopify answers MAX_COST_EXCEEDED. Without it that answer is an error.
   */
  pageVariable?: string;
}

/** The page size a document declares as its variable's default (`$first: Int = 179`). */
function declaredPageSize(query: string, variable: string): number | undefined {
  const found = new RegExp(`\\$${variable}\\s*:\\s*Int!?\\s*=\\s*(\\d+)`).exec(query)?.[1];
  return found === undefined ? undefined : Number(found);
}

/** The page size a paged document is sent with now (undefined: not paged, or its default). */
export function currentPageSize(query: string, variable: string): number | undefined {
  return pageSizes.get(query) ?? declaredPageSize(query, variable);
}

const DEFAULT_MAX_WAIT_MS = 30_000;
const MAX_TRIES = 5;

/**
 * One Admin GraphQL query for an installed shop (its offline session). Returns `data`; throws
 * AdminThrottled when the budget does not come back in time, AdminApiError on errors, and
 * whatever the transport threw on timeouts and network failures. Each try has the timeout.
 */
export async function adminQuery(shop: string, query: string, variables: Record<string, unknown>, options: AdminQueryOptions = {}): Promise<unknown> {
  const cost = options.cost ?? requestedCosts.get(query) ?? 10;
  let budgetMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const wait = async (ms: number, why: string) => {
    if (ms > budgetMs) {
      // The next attempt asks Shopify again rather than trusting an estimate (a bucket that never refills).
      buckets.delete(shop);
      throw new AdminThrottled(`Shopify's API budget for ${shop} is spent (${why}); retried later`);
    }
    budgetMs -= ms;
    await sleep(ms);
  };
  const paged = options.pageVariable;
  let pageSize = paged ? ((variables[paged] as number | undefined) ?? currentPageSize(query, paged)) : undefined;
  for (let attempt = 1; ; attempt++) {
    await wait(waitFor(shop, cost), "waiting for the cost bucket to refill");
    const answer = await send(shop, query, paged && pageSize !== undefined ? { ...variables, [paged]: pageSize } : variables);
    const spent = remember(shop, answer.extensions);
    if (spent?.requestedQueryCost && !requestedCosts.has(query) && requestedCosts.size < MAX_REMEMBERED_DOCUMENTS) {
      requestedCosts.set(query, spent.requestedQueryCost);
    }
    const errors = z.array(graphqlError).safeParse(answer.errors);
    const list = errors.success ? errors.data : [];
    if (list.some((e) => e.extensions?.code === "THROTTLED")) {
      if (attempt >= MAX_TRIES) throw new AdminThrottled(`Shopify kept throttling ${shop} after ${attempt} tries; retried later`);
      // Refill what this query asks for (at least a second when Shopify gives no figures).
      const needed = waitFor(shop, spent?.requestedQueryCost ?? requestedCosts.get(query) ?? cost);
      await wait(needed === 0 ? 1_000 : needed, "THROTTLED");
      continue;
    }
    const tooCostly = list.find((e) => e.extensions?.code === "MAX_COST_EXCEEDED");
    if (tooCostly && paged && pageSize !== undefined && pageSize > 1) {
      // Not the same query again: half the page costs about half (the rest comes on the next pages).
      pageSize = Math.floor(pageSize / 2);
      if (pageSizes.has(query) || pageSizes.size < MAX_REMEMBERED_DOCUMENTS) pageSizes.set(query, pageSize);
      requestedCosts.delete(query);
      logger().warn({ shop, pageSize, err: tooCostly.message }, "Shopify refused a query's cost; asking again with half the page");
      continue;
    }
    if (list.length || answer.data === undefined || answer.data === null) {
      throw new AdminApiError(`Shopify answered with errors: ${list.map((e) => e.message).join("; ") || "no data"}`);
    }
    return answer.data;
  }
}

/** Shopify's answer whole (THROTTLED included); tokens and timeouts are app/shopify's business. */
function send(shop: string, query: string, variables: Record<string, unknown>): Promise<AdminAnswer> {
  return adminGraphqlRequest(shop, query, variables);
}

/** Tests: forget what was learnt about the shops' buckets. */
export function forgetAdminBudgets(): void {
  buckets.clear();
  requestedCosts.clear();
  pageSizes.clear();
}
