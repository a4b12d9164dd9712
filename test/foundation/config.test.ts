import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildConfig, ConfigError, DEV_SECRETS } from "~/config.server";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

describe("configuration", () => {
  it("runs on development defaults with a local app URL and says which secrets it defaulted", () => {
    const cfg = buildConfig({});
    expect(cfg.appUrl).toBe("http://localhost:3000");
    expect(cfg.database.kind).toBe("pglite");
    expect(cfg.defaultedSecrets).toEqual(["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "ENCRYPTION_KEY"]);
    expect(cfg.encryptionKey).toHaveLength(32);
  });

  it("uses PostgreSQL when DATABASE_URL is set", () => {
    expect(buildConfig({ DATABASE_URL: "postgresql://u@db:5432/app" }).database).toEqual({
      kind: "postgres",
      url: "postgresql://u@db:5432/app",
    });
  });

  it.each([
    [{ SHOPIFY_APP_URL: "https://sync.example.com" }, /SHOPIFY_API_KEY is required/],
    [
      { SHOPIFY_APP_URL: "https://sync.example.com", SHOPIFY_API_KEY: "k", SHOPIFY_API_SECRET: DEV_SECRETS.SHOPIFY_API_SECRET },
      /SHOPIFY_API_SECRET is the development value/,
    ],
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
});
