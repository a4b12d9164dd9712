import { expect } from "vitest";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { answerConsentFromWebhooks } from "../../dev/shopify/webhook-customers";
import { connectShop } from "~/backfill/connect.server";
import { startWorker, type Worker } from "~/jobs/index.server";
import type { PipelinePolicy } from "~/pipeline/policy";
import { startTestApp, type TestApp } from "./app";
import type { DatabaseKind } from "./database";
import { sendWebhook, type TestWebhookDelivery as WebhookDelivery } from "./webhooks";

/** Fast retries for tests: the behaviour is the same, the waits are milliseconds. */
export const FAST_POLICY: Partial<PipelinePolicy> = { backoffBaseMs: 5, backoffCapMs: 50, pollMs: 10, maxAttempts: 5, backfillPollMs: 20 };

export interface PipelineHarness {
  app: TestApp;
  emulator: Emulator;
  workers: Worker[];
  startWorkers(count?: number, policy?: Partial<PipelinePolicy>): Worker[];
  stopWorkers(): Promise<void>;
  /** Installs and connects a shop to the emulator's default account. */
  connect(shop: string, apiKey?: string): Promise<void>;
  send(delivery: Omit<WebhookDelivery, "body"> & { body: string | object }): Promise<Response>;
  /** Sends a signed webhook, expects it acknowledged (200), then waits until every worker is idle. */
  deliver(delivery: Omit<WebhookDelivery, "body"> & { body: string | object }): Promise<void>;
  /** Between tests: stops the workers and forgets what the emulator received. */
  reset(): Promise<void>;
  /** Waits until every worker is idle. */
  settle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startPipelineHarness(
  options: { database?: DatabaseKind; env?: Record<string, string>; trackerScripts?: boolean } = {},
): Promise<PipelineHarness> {
  const emulator = await startEmulator({ port: 0, trackerScripts: options.trackerScripts });
  const app = await startTestApp({ database: options.database, env: { MARKETING_API_URL: emulator.url, ...options.env } });
  const workers: Worker[] = [];
  const recordConsent = answerConsentFromWebhooks(app.admin);
  // A test policy retries within milliseconds: such a retry is still work under way, so settle()
  // waits for it (a policy with real backoff would wait minutes; there nothing ahead counts).
  const retryHorizon = new WeakMap<Worker, number>();
  const harness: PipelineHarness = {
    app,
    emulator,
    workers,
    startWorkers(count = 1, policy = FAST_POLICY) {
      const started = Array.from({ length: count }, () => startWorker({ policy }));
      const cap = policy.backoffCapMs ?? Infinity;
      for (const w of started) retryHorizon.set(w, cap <= 1_000 ? cap + 20 : 0);
      workers.push(...started);
      return started;
    },
    async stopWorkers() {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    },
    async connect(shop, apiKey = emulator.apiKey) {
      await connectShop(shop, { apiKey, baseUrl: emulator.url, importHistory: false });
    },
    send: (delivery) => {
      recordConsent(delivery);
      return sendWebhook(app.url, delivery);
    },
    async deliver(delivery) {
      expect((await harness.send(delivery)).status).toBe(200);
      await harness.settle();
    },
    async reset() {
      await harness.stopWorkers();
      emulator.reset();
    },
    // A deadline for a hang, below the tests' own (120 s) so its message shows: a busy machine
    // took over 30 s to replay 2,400 calls (2026-11-28).
    async settle(timeoutMs = 100_000) {
      await Promise.all(workers.map((w) => w.idle({ timeoutMs, dueWithinMs: retryHorizon.get(w) })));
    },
    async close() {
      await harness.stopWorkers();
      await app.close();
      await emulator.close();
    },
  };
  return harness;
}

let customerSeq = 1000;

/** A customers/* body as Shopify sends it, with the fields the tests vary. */
export function customerBody(over: {
  id?: string;
  email?: string | null;
  firstName?: string;
  updatedAt?: string;
  consent?: "subscribed" | "not_subscribed" | "unsubscribed";
  consentUpdatedAt?: string;
  tags?: string;
}): Record<string, unknown> {
  const id = over.id ?? String(++customerSeq);
  return {
    id: Number(id),
    admin_graphql_api_id: `gid://shopify/Customer/${id}`,
    email: over.email === undefined ? `customer${id}@example.com` : over.email,
    first_name: over.firstName ?? "Ada",
    last_name: "Lovelace",
    phone: null,
    tags: over.tags ?? "",
    state: "enabled",
    currency: "USD",
    created_at: "2026-01-01T10:00:00-05:00",
    updated_at: over.updatedAt ?? "2026-01-01T10:00:00-05:00",
    verified_email: true,
    email_marketing_consent: {
      state: over.consent ?? "subscribed",
      opt_in_level: "single_opt_in",
      consent_updated_at: over.consentUpdatedAt ?? "2026-01-01T10:00:00-05:00",
    },
    addresses: [],
    default_address: null,
  };
}
