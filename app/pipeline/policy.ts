/** The delivery pipeline's numbers, in one place. */
export const PIPELINE_POLICY = {
  /** A claimed row belongs to its worker this long; a crashed worker's rows are taken over after it. */
  leaseMs: 60_000,
  /** Service calls claimed per poll, and so in flight per worker. */
  batchSize: 64,
  /** Deliveries planned per transaction: small, because on PGlite a transaction holds the only connection. */
  planBatchSize: 32,
  /** Idle wait between polls when there is nothing to do. */
  pollMs: 250,
  /** Attempts per service call before it becomes a dead letter. */
  maxAttempts: 8,
  /** Exponential backoff with full jitter: random(0, min(cap, base * 2^(attempt-1))). */
  backoffBaseMs: 2_000,
  backoffCapMs: 15 * 60_000,
  /** Delivered calls and finished deliveries are deleted after this many days. */
  retentionDays: 14,
  pruneEveryMs: 60 * 60_000,
  /** PGlite has no autovacuum: refresh the queue tables' statistics this often. */
  analyzeEveryMs: 30_000,
} as const;

export type PipelinePolicy = { -readonly [K in keyof typeof PIPELINE_POLICY]: number };

export function backoffMs(attempt: number, policy: Pick<PipelinePolicy, "backoffBaseMs" | "backoffCapMs">): number {
  const ceiling = Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(Math.random() * ceiling);
}
