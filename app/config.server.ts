import path from "node:path";
import { z } from "zod";
import { PROJECT_ROOT } from "./project-root.server";

/**
 * The app's whole configuration, read once from the environment and validated.
 * A missing or bad value stops start-up with one line naming the variable.
 *
 * Development secrets (published in this repository) are used only for local use: the app URL is
 * local AND either NODE_ENV is not "production" or ALLOW_DEV_SECRETS=1 says so explicitly (a
 * local trial of the production build). A public app URL never runs on them, in any encoding, and
 * a production process that forgot SHOPIFY_APP_URL (so looks local) stops instead of falling back.
 */

export const DEV_SECRETS = {
  SHOPIFY_API_KEY: "marketing-sync-dev-app",
  SHOPIFY_API_SECRET: "marketing-sync-dev-secret-not-for-production",
  // 32 bytes, base64; only ever used for local use.
  ENCRYPTION_KEY: "ZGV2LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24tdXNlISE=",
} as const;

const DEFAULT_SCOPES =
  "write_customers,read_orders,read_all_orders,read_products,read_customer_events,write_pixels,read_own_subscription_contracts,read_customer_merge,write_app_proxy,read_themes,write_marketing_events";

const booleanFlag = z
  .enum(["1", "0", "true", "false", "yes", "no", "on", "off"])
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

const encryptionKey = z.string().refine(
  (v) => decodeKey(v)?.length === 32,
  "must be 32 bytes, given as 64 hex characters or base64",
);

const envSchema = z.object({
  SHOPIFY_APP_URL: z.url({ protocol: /^https?$/ }).default("http://localhost:3000"),
  SHOPIFY_API_KEY: z.string().min(1).optional(),
  SHOPIFY_API_SECRET: z.string().min(8).optional(),
  // During a rotation of the app secret: webhooks signed with the previous one are still accepted.
  SHOPIFY_API_SECRET_PREVIOUS: z.string().min(8).optional(),
  ENCRYPTION_KEY: encryptionKey.optional(),
  // During a rotation of the encryption key: stored secrets sealed with it are still readable.
  ENCRYPTION_KEY_PREVIOUS: encryptionKey.optional(),
  ALLOW_DEV_SECRETS: booleanFlag.default(false),
  NODE_ENV: z.string().optional(),
  SCOPES: z
    .string()
    .regex(/^[a-z_]+(,[a-z_]+)*$/, "must be a comma-separated list of scopes")
    .default(DEFAULT_SCOPES),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  PGLITE_DATA_DIR: z.string().min(1).default(path.join(PROJECT_ROOT, ".data/pglite")),
  MARKETING_API_URL: z.url({ protocol: /^https?$/ }).default("http://127.0.0.1:4010"),
  MARKETING_API_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Unset: every interface, or only the loopback one while development secrets are in use.
  HOST: z.string().min(1).optional(),
  RUN_WORKER_IN_PROCESS: booleanFlag.default(true),
  // Lines of a history export recorded per import step (default 500); smaller steps checkpoint more often.
  BACKFILL_CHUNK: z.coerce.number().int().min(1).max(10_000).optional(),
  // Every worker's claims (app/pipeline/policy.ts): calls in flight, deliveries planned per
  // transaction, shops one claim serves (0: first come, first served, to compare against).
  WORKER_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).optional(),
  WORKER_PLAN_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).optional(),
  WORKER_FAIR_SHARE_SHOPS: z.coerce.number().int().min(0).max(10_000).optional(),
  // `npm run worker`'s own port for /healthz, /readyz and /metrics (0: any free port, logged).
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  // Bearer token for /metrics; without it only a direct local connection may read the metrics.
  METRICS_TOKEN: z.string().min(16).optional(),
  // Proxies of the app's own (a load balancer, a PaaS router) that append to X-Forwarded-For after
  // Shopify's app proxy: the storefront's per-address rate limit reads the entry before theirs.
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  // Tests and the demo only (local app URL, local target): Shopify Admin API calls (token
  // exchange with the client secret, GraphQL) go to this origin; App Bridge is loaded from here.
  SHOPIFY_ADMIN_API_ORIGIN: z.url({ protocol: /^https?$/ }).optional(),
  APP_BRIDGE_URL: z.url({ protocol: /^https?$/ }).optional(),
});

export type AppConfig = ReturnType<typeof buildConfig>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export function decodeKey(value: string): Buffer | undefined {
  if (/^[0-9a-f]{64}$/i.test(value)) return Buffer.from(value, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return Buffer.from(value, value.includes("-") || value.includes("_") ? "base64url" : "base64");
  return undefined;
}

const DEV_KEY_BYTES = decodeKey(DEV_SECRETS.ENCRYPTION_KEY)!;

function isLocalUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host.endsWith(".localhost");
}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function buildConfig(env: Record<string, string | undefined>) {
  // Empty strings count as unset: `FOO= npm start` should behave like no FOO.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0]);
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}`);
  }
  const e = parsed.data;
  const local = isLocalUrl(e.SHOPIFY_APP_URL);
  const production = e.NODE_ENV === "production";
  const devAllowed = local && (!production || e.ALLOW_DEV_SECRETS);
  const why = !local ? `SHOPIFY_APP_URL (${e.SHOPIFY_APP_URL}) is not local` : "NODE_ENV=production (ALLOW_DEV_SECRETS=1 permits development secrets for a local trial)";
  if (e.ALLOW_DEV_SECRETS && !local) throw new ConfigError(`Invalid configuration: ALLOW_DEV_SECRETS is refused because ${why}`);
  const isDevValue = (name: keyof typeof DEV_SECRETS | "SHOPIFY_API_SECRET_PREVIOUS" | "ENCRYPTION_KEY_PREVIOUS", value: string) =>
    name.startsWith("ENCRYPTION_KEY")
      ? decodeKey(value)!.equals(DEV_KEY_BYTES)
      : value === DEV_SECRETS[name.replace("_PREVIOUS", "") as keyof typeof DEV_SECRETS];
  const defaulted: string[] = [];
  const secret = (name: keyof typeof DEV_SECRETS): string => {
    const value = e[name];
    if (value) {
      if (!devAllowed && isDevValue(name, value)) {
        throw new ConfigError(`Invalid configuration: ${name} is the development value, refused because ${why}`);
      }
      return value;
    }
    if (!devAllowed) throw new ConfigError(`Invalid configuration: ${name} is required because ${why}`);
    defaulted.push(name);
    return DEV_SECRETS[name];
  };
  for (const name of ["SHOPIFY_API_SECRET_PREVIOUS", "ENCRYPTION_KEY_PREVIOUS"] as const) {
    const value = e[name];
    if (value && !devAllowed && isDevValue(name, value)) {
      throw new ConfigError(`Invalid configuration: ${name} is the development value, refused because ${why}`);
    }
  }
  for (const name of ["SHOPIFY_ADMIN_API_ORIGIN", "APP_BRIDGE_URL"] as const) {
    const value = e[name];
    if (value && (!local || !isLocalUrl(value))) {
      throw new ConfigError(`Invalid configuration: ${name} is for local tests and demos only (a local SHOPIFY_APP_URL and a local target)`);
    }
  }
  const apiKey = secret("SHOPIFY_API_KEY");
  const apiSecret = secret("SHOPIFY_API_SECRET");
  const encryptionKeyValue = secret("ENCRYPTION_KEY");
  // A production process that forgot SHOPIFY_APP_URL would look local (and start on localhost).
  if (production && !cleaned.SHOPIFY_APP_URL && !e.ALLOW_DEV_SECRETS) {
    throw new ConfigError("Invalid configuration: SHOPIFY_APP_URL is required because NODE_ENV=production (ALLOW_DEV_SECRETS=1 permits a local trial)");
  }
  // The development secrets are published: a server running on them answers only this machine.
  const onDevSecrets = isDevValue("SHOPIFY_API_SECRET", apiSecret) || isDevValue("ENCRYPTION_KEY", encryptionKeyValue);
  const host = e.HOST ?? (onDevSecrets ? "127.0.0.1" : "0.0.0.0");
  if (onDevSecrets && !isLoopbackHost(host)) {
    throw new ConfigError(`Invalid configuration: HOST ${host} is refused with the development secrets (they are published): use 127.0.0.1`);
  }
  return {
    appUrl: e.SHOPIFY_APP_URL,
    apiKey,
    apiSecret,
    apiSecretPrevious: e.SHOPIFY_API_SECRET_PREVIOUS,
    encryptionKey: decodeKey(encryptionKeyValue)!,
    encryptionKeyPrevious: e.ENCRYPTION_KEY_PREVIOUS ? decodeKey(e.ENCRYPTION_KEY_PREVIOUS)! : undefined,
    scopes: e.SCOPES.split(","),
    database: e.DATABASE_URL
      ? ({ kind: "postgres", url: e.DATABASE_URL } as const)
      : ({ kind: "pglite", dataDir: e.PGLITE_DATA_DIR } as const),
    marketingApiUrl: e.MARKETING_API_URL,
    marketingApiTimeoutMs: e.MARKETING_API_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    port: e.PORT,
    host,
    runWorkerInProcess: e.RUN_WORKER_IN_PROCESS,
    /** What the environment sets of every worker's pipeline policy (unset: the policy's own). */
    workerPolicy: definedOnly({
      backfillChunk: e.BACKFILL_CHUNK,
      batchSize: e.WORKER_BATCH_SIZE,
      planBatchSize: e.WORKER_PLAN_BATCH_SIZE,
      fairShareShops: e.WORKER_FAIR_SHARE_SHOPS,
    }),
    workerPort: e.WORKER_PORT,
    metricsToken: e.METRICS_TOKEN,
    trustedProxyHops: e.TRUSTED_PROXY_HOPS,
    adminApiOrigin: e.SHOPIFY_ADMIN_API_ORIGIN,
    appBridgeUrl: e.APP_BRIDGE_URL,
    production,
    /** Names of secrets that fell back to development values (for one start-up warning). */
    defaultedSecrets: defaulted,
  };
}

function definedOnly<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number };
}

// Read once per process (one copy of this module: see app/db.server.ts).
let cached: AppConfig | undefined;

/** The process configuration; throws ConfigError (one clear line) on a bad environment. */
export function config(): AppConfig {
  cached ??= buildConfig(process.env);
  return cached;
}

/** For tests that change the environment between cases. */
export function resetConfigForTests(): void {
  cached = undefined;
}
