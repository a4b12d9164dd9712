import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildConfig, ConfigError, DEV_SECRETS } from "~/config.server";

const run = promisify(execFile);
const REAL = { SHOPIFY_API_KEY: "real-key", SHOPIFY_API_SECRET: "real-secret-0123456789", ENCRYPTION_KEY: "b".repeat(64) };
const PUBLIC = { SHOPIFY_APP_URL: "https://sync.example.com", ...REAL };
const DEV_KEY_HEX = Buffer.from(DEV_SECRETS.ENCRYPTION_KEY, "base64").toString("hex");
const DEV_KEY_B64URL = Buffer.from(DEV_SECRETS.ENCRYPTION_KEY, "base64").toString("base64url"); // unpadded
const ROOT = path.resolve(import.meta.dirname, "../..");

describe("configuration", () => {
  it("runs on development defaults with a local app URL and says which secrets it defaulted", () => {
    const cfg = buildConfig({});
    expect(cfg.appUrl).toBe("http://localhost:3000");
    expect(cfg.database.kind).toBe("pglite");
    expect(cfg.defaultedSecrets).toEqual(["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "ENCRYPTION_KEY"]);
    expect(cfg.encryptionKey).toHaveLength(32);
  });

  it("allows development secrets in production mode only when asked explicitly, and only on a local URL", () => {
    const cfg = buildConfig({ NODE_ENV: "production", ALLOW_DEV_SECRETS: "1" });
    expect(cfg.defaultedSecrets).toEqual(["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "ENCRYPTION_KEY"]);
    expect(buildConfig({ NODE_ENV: "production", SHOPIFY_APP_URL: "http://localhost:3000", ...REAL }).defaultedSecrets).toEqual([]);
  });

  it("runs on a public URL with real secrets, previous ones for rotation, and no overrides", () => {
    const cfg = buildConfig({ ...PUBLIC, NODE_ENV: "production", SHOPIFY_API_SECRET_PREVIOUS: "old-secret-987654", ENCRYPTION_KEY_PREVIOUS: "c".repeat(64) });
    expect(cfg.apiSecretPrevious).toBe("old-secret-987654");
    expect(cfg.encryptionKeyPrevious).toEqual(Buffer.from("c".repeat(64), "hex"));
    expect(cfg.adminApiOrigin).toBeUndefined();
  });

  it("lets tests and the demo point the Admin API and App Bridge at a local fake", () => {
    const cfg = buildConfig({ SHOPIFY_ADMIN_API_ORIGIN: "http://127.0.0.1:4020", APP_BRIDGE_URL: "http://127.0.0.1:4020/cdn/app-bridge.js" });
    expect(cfg.adminApiOrigin).toBe("http://127.0.0.1:4020");
    expect(cfg.appBridgeUrl).toBe("http://127.0.0.1:4020/cdn/app-bridge.js");
  });

  it("binds the loopback interface on the development secrets, every interface otherwise", () => {
    expect(buildConfig({}).host).toBe("127.0.0.1");
    expect(buildConfig({ NODE_ENV: "production", ALLOW_DEV_SECRETS: "1" }).host).toBe("127.0.0.1");
    expect(buildConfig({ ...PUBLIC, NODE_ENV: "production" }).host).toBe("0.0.0.0");
    expect(buildConfig({ ...PUBLIC, HOST: "10.0.0.5" }).host).toBe("10.0.0.5");
  });

  it("uses PostgreSQL when DATABASE_URL is set", () => {
    expect(buildConfig({ DATABASE_URL: "postgresql://u@db:5432/app" }).database).toEqual({
      kind: "postgres",
      url: "postgresql://u@db:5432/app",
    });
  });

  it("takes a worker's claim sizes from the environment, and only those that are set", () => {
    expect(buildConfig({}).workerPolicy).toEqual({});
    expect(buildConfig({ WORKER_BATCH_SIZE: "16", WORKER_FAIR_SHARE_SHOPS: "0", BACKFILL_CHUNK: "50" }).workerPolicy).toEqual({
      batchSize: 16,
      fairShareShops: 0,
      backfillChunk: 50,
    });
  });

  it.each([
    [{ WORKER_BATCH_SIZE: "0" }, /WORKER_BATCH_SIZE/],
    [{ WORKER_PLAN_BATCH_SIZE: "many" }, /WORKER_PLAN_BATCH_SIZE/],
    [{ WORKER_FAIR_SHARE_SHOPS: "-1" }, /WORKER_FAIR_SHARE_SHOPS/],
    [{ SHOPIFY_APP_URL: "https://sync.example.com" }, /SHOPIFY_API_KEY is required/],
    [
      { SHOPIFY_APP_URL: "https://sync.example.com", SHOPIFY_API_KEY: "k", SHOPIFY_API_SECRET: DEV_SECRETS.SHOPIFY_API_SECRET },
      /SHOPIFY_API_SECRET is the development value/,
    ],
    // A deployer who forgot SHOPIFY_APP_URL: the app looks local, but it is a production process.
    [{ NODE_ENV: "production" }, /SHOPIFY_API_KEY is required because NODE_ENV=production/],
    // Real secrets do not make a forgotten SHOPIFY_APP_URL right: the app would start on localhost.
    [{ NODE_ENV: "production", ...REAL }, /SHOPIFY_APP_URL is required because NODE_ENV=production/],
    // The published development secrets never listen beyond this machine.
    [{ HOST: "0.0.0.0" }, /HOST 0.0.0.0 is refused with the development secrets/],
    [{ NODE_ENV: "production", ...REAL, SHOPIFY_API_SECRET: DEV_SECRETS.SHOPIFY_API_SECRET }, /SHOPIFY_API_SECRET is the development value/],
    // The development encryption key in every encoding, outside local use.
    [{ ...PUBLIC, ENCRYPTION_KEY: DEV_SECRETS.ENCRYPTION_KEY }, /ENCRYPTION_KEY is the development value/],
    [{ ...PUBLIC, ENCRYPTION_KEY: DEV_KEY_HEX }, /ENCRYPTION_KEY is the development value/],
    [{ ...PUBLIC, ENCRYPTION_KEY: DEV_KEY_HEX.toUpperCase() }, /ENCRYPTION_KEY is the development value/],
    [{ ...PUBLIC, ENCRYPTION_KEY: DEV_KEY_B64URL }, /ENCRYPTION_KEY is the development value/],
    [{ NODE_ENV: "production", ...REAL, ENCRYPTION_KEY: DEV_KEY_HEX }, /ENCRYPTION_KEY is the development value/],
    [{ ...PUBLIC, ENCRYPTION_KEY_PREVIOUS: DEV_KEY_HEX }, /ENCRYPTION_KEY_PREVIOUS is the development value/],
    [{ ...PUBLIC, SHOPIFY_API_SECRET_PREVIOUS: DEV_SECRETS.SHOPIFY_API_SECRET }, /SHOPIFY_API_SECRET_PREVIOUS is the development value/],
    // The test/demo overrides: the token exchange (client secret included) must never leave for them.
    [{ ...PUBLIC, SHOPIFY_ADMIN_API_ORIGIN: "http://127.0.0.1:4020" }, /SHOPIFY_ADMIN_API_ORIGIN is for local tests and demos only/],
    [{ SHOPIFY_ADMIN_API_ORIGIN: "https://collector.example.net" }, /SHOPIFY_ADMIN_API_ORIGIN is for local tests and demos only/],
    [{ ...PUBLIC, APP_BRIDGE_URL: "http://127.0.0.1:4020/cdn/app-bridge.js" }, /APP_BRIDGE_URL is for local tests and demos only/],
    [{ ...PUBLIC, ALLOW_DEV_SECRETS: "1" }, /ALLOW_DEV_SECRETS is refused/],
    [{ SHOPIFY_APP_URL: "not a url" }, /SHOPIFY_APP_URL/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL/],
    [{ ENCRYPTION_KEY: "short" }, /ENCRYPTION_KEY must be 32 bytes/],
    [{ MARKETING_API_URL: "ftp://x" }, /MARKETING_API_URL/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ PORT: "http" }, /PORT/],
    [{ SCOPES: "read orders" }, /SCOPES must be a comma-separated list/],
  ])("rejects %o naming the variable", (env, message) => {
    expect(() => buildConfig(env)).toThrow(ConfigError);
    expect(() => buildConfig(env)).toThrow(message);
  });

  it("stops start-up with one clear line on a bad value", async () => {
    const failure = await run(process.execPath, [path.join(ROOT, "build/server/serve.js")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: "production", PORT: "eighty" },
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect("code" in failure && failure.code).toBe(1);
    expect(failure.stderr.trim().split("\n")).toHaveLength(1);
    expect(failure.stderr).toMatch(/^Invalid configuration: PORT/);
  });

  it("stops a production start-up with real secrets that forgot SHOPIFY_APP_URL, instead of serving on localhost", async () => {
    const failure = await run(process.execPath, [path.join(ROOT, "build/server/serve.js")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: "production", ...REAL, PGLITE_DATA_DIR: "memory://", PORT: "0" },
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect("code" in failure && failure.code).toBe(1);
    expect(failure.stderr.trim().split("\n")).toEqual([
      "Invalid configuration: SHOPIFY_APP_URL is required because NODE_ENV=production (ALLOW_DEV_SECRETS=1 permits a local trial)",
    ]);
  });

  it("stops a production start-up that forgot SHOPIFY_APP_URL and the secrets, naming the variable", async () => {
    const failure = await run(process.execPath, ["--import", "tsx", path.join(ROOT, "app/bin/serve.server.ts")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: "production" },
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect("code" in failure && failure.code).toBe(1);
    expect(failure.stderr.trim().split("\n")).toEqual([
      "Invalid configuration: SHOPIFY_API_KEY is required because NODE_ENV=production (ALLOW_DEV_SECRETS=1 permits development secrets for a local trial)",
    ]);
  });
});
