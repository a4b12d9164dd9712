import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";

/**
 * The process's Prometheus metrics (prom-client). Counters count what THIS process did (sum them
 * across processes); the queue gauges describe the shared database and read the same from every
 * process (take their max). Shop domains appear only on the per-shop lag gauge, for the slowest few.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "marketing_sync_" });

export const webhooksAnswered = new Counter({
  name: "marketing_sync_webhooks_answered_total",
  help: "Webhook deliveries answered, by HTTP status (200: recorded and acknowledged).",
  labelNames: ["status"] as const,
  registers: [registry],
});

export const serviceCalls = new Counter({
  name: "marketing_sync_service_calls_total",
  help: "Calls to the marketing service finished by this process, by object kind, result and error class.",
  labelNames: ["kind", "result", "error_class"] as const,
  registers: [registry],
});

export const queueDepth = new Gauge({
  name: "marketing_sync_queue_depth",
  help: "Rows waiting in each queue of the shared database (webhooks to plan, calls to send, timers, history imports).",
  labelNames: ["queue"] as const,
  registers: [registry],
});

export const queueOldestAge = new Gauge({
  name: "marketing_sync_queue_oldest_age_seconds",
  help: "Age of the oldest row that is due in each queue (0 when none is due).",
  labelNames: ["queue"] as const,
  registers: [registry],
});

export const shopLag = new Gauge({
  name: "marketing_sync_shop_lag_seconds",
  help: "The slowest shops: age of their oldest due webhook or call.",
  labelNames: ["shop"] as const,
  registers: [registry],
});

export const historyImports = new Gauge({
  name: "marketing_sync_history_imports",
  help: "History imports by status (queued, running, failed in the last day).",
  labelNames: ["status"] as const,
  registers: [registry],
});

export const historyImportObjects = new Gauge({
  name: "marketing_sync_history_import_objects",
  help: "Objects recorded so far by history imports under way, and the objects their current exports hold.",
  labelNames: ["measure"] as const,
  registers: [registry],
});

/** `retry`/`dead` errors read "<kind>: message" (or "gave up after …; last: <kind>: …"): the kind is the class. */
export function errorClassOf(error: string | undefined): string {
  if (!error) return "none";
  const match = /^(?:gave up after \d+ attempts; last: )?([a-z_]+):/.exec(error);
  return match?.[1] ?? "other";
}

export function countServiceCall(kind: string, result: string, error?: string): void {
  serviceCalls.inc({ kind, result, error_class: result === "delivered" ? "none" : errorClassOf(error) });
}
