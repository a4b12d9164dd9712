import { execFile } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Session } from "@shopify/shopify-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDatabase, openDatabase } from "~/db.server";
import { PrismaSessionStorage, openToken } from "~/shopify/session-storage.server";
import { decryptSecret, encryptSecret, keyId } from "~/secrets.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { applyTestEnv, TEST_ENCRYPTION_KEY } from "../support/env";
import { customerBody } from "../support/pipeline";
import { appProcessEnv, prepareConnectedDataDir, ROOT_DIR, spawnApp } from "../support/processes";
import { sendWebhook } from "../support/webhooks";

const run = promisify(execFile);
const KEY_A = TEST_ENCRYPTION_KEY;
const KEY_B = "b".repeat(64);
const bytes = (hex: string) => Buffer.from(hex, "hex");

/** The first scheme ("v1:", no key id, no associated data), as older versions stored it. */
function sealV1(plain: string, keyHex: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", bytes(keyHex), iv);
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64")}`;
}

describe("sealed secrets", () => {
  beforeAll(() => applyTestEnv());

  it("binds a ciphertext to its shop and purpose, and names its key", () => {
    const sealed = encryptSecret("mk_live_secret", "a.myshopify.com");
    expect(sealed).toMatch(new RegExp(`^v2:${keyId(bytes(KEY_A))}:`));
    expect(sealed).not.toContain("mk_live_secret");
    expect(decryptSecret(sealed, "a.myshopify.com")).toBe("mk_live_secret");
    // Copied into another shop's row, or read as another kind of secret: it does not open.
    expect(() => decryptSecret(sealed, "b.myshopify.com")).toThrow(/does not open/);
    expect(() => decryptSecret(sealed, "a.myshopify.com", "shopify-token")).toThrow(/does not open/);
  });

  it("still reads the first scheme (v1)", () => {
    expect(decryptSecret(sealV1("old-key", KEY_A), "any.myshopify.com")).toBe("old-key");
  });

  it("reads with the previous key during a rotation, and says which key is missing after it", () => {
    const sealedWithA = encryptSecret("rotating", "r.myshopify.com");
    applyTestEnv({ ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A });
    expect(decryptSecret(sealedWithA, "r.myshopify.com")).toBe("rotating");
    expect(decryptSecret(sealV1("older", KEY_A), "r.myshopify.com")).toBe("older");
    applyTestEnv({ ENCRYPTION_KEY: KEY_B });
    expect(() => decryptSecret(sealedWithA, "r.myshopify.com")).toThrow(/neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS/);
    applyTestEnv();
  });
});

describe("Shopify access tokens at rest", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    applyTestEnv();
    db = await createTestDatabase();
  });
  afterAll(() => db.destroy());

  it("stores them sealed and reads them back; legacy plain tokens still read", async () => {
    const storage = new PrismaSessionStorage();
    const shop = "tokens.myshopify.com";
    await storage.storeSession(new Session({ id: `offline_${shop}`, shop, state: "s", isOnline: false, accessToken: "shpat_plain_secret" }));
    const row = await db.prisma.session.findUniqueOrThrow({ where: { id: `offline_${shop}` } });
    expect(row.accessToken).toMatch(/^v2:/);
    expect(row.accessToken).not.toContain("shpat_plain_secret");
    expect((await storage.loadSession(`offline_${shop}`))?.accessToken).toBe("shpat_plain_secret");
    expect(openToken("shpat_legacy", shop)).toBe("shpat_legacy");
  });
});

describe("rotation with the re-encrypt command, and a wrong key at start-up", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-keys-"));
  const shop = "rotate.myshopify.com";
  let emulator: Emulator;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    await prepareConnectedDataDir(dataDir, shop, emulator); // sealed with KEY_A
    // A legacy v1 key and an unsealed session token, as an older version left them.
    const db = openDatabase({ kind: "pglite", dataDir });
    installDatabase(db);
    await db.prisma.shop.update({ where: { domain: shop }, data: { serviceKeyEnc: sealV1(emulator.apiKey, KEY_A) } });
    await db.prisma.session.create({ data: { id: `offline_${shop}`, shop, state: "", accessToken: "shpat_from_before" } });
    installDatabase(undefined);
    await db.close();
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string>) =>
    run(process.execPath, ["--import", "tsx", "app/bin/cli.server.ts", ...args], {
      cwd: ROOT_DIR,
      env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), PATH: process.env.PATH ?? "", NODE_ENV: "production", ...env },
      timeout: 60_000,
    }).catch((e: { code: number; stdout: string; stderr: string }) => e);

  async function readRows() {
    const db = openDatabase({ kind: "pglite", dataDir });
    try {
      return {
        shop: await db.prisma.shop.findUniqueOrThrow({ where: { domain: shop } }),
        session: await db.prisma.session.findUniqueOrThrow({ where: { id: `offline_${shop}` } }),
      };
    } finally {
      await db.close();
    }
  }

  it("a wrong key at start-up: one clear error, the shop paused, its work waiting instead of dying", async () => {
    const lines: string[] = [];
    const app = await spawnApp({
      env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), ENCRYPTION_KEY: "c".repeat(64) },
      onLine: (l) => lines.push(l),
    });
    try {
      expect(lines.filter((l) => l.includes("ENCRYPTION_KEY does not open the stored service keys"))).toHaveLength(1);
      expect((await sendWebhook(app.url, { topic: "customers/create", shop, body: customerBody({}) })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_500)); // the worker polls: give it the chance to misbehave
    } finally {
      await app.stop();
    }
    const { shop: row } = await readRows();
    expect(row.pausedAt).not.toBeNull();
    expect(row.pauseReason).toMatch(/cannot be decrypted/);
    expect(emulator.requests.filter((r) => r.path.startsWith("/api/people"))).toHaveLength(0);
    const db = openDatabase({ kind: "pglite", dataDir });
    try {
      expect(await db.prisma.outboundCall.count({ where: { shop, status: "dead" } })).toBe(0);
    } finally {
      await db.close();
    }
  }, 120_000);

  it("reencrypt-keys moves every secret to the new key; the right key lifts the pause", async () => {
    // Rotation: the new key current, the old one previous, then the command.
    const rotated = await cli(["reencrypt-keys"], { ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A });
    expect(rotated.stdout).toContain("re-sealed 1 service key(s) and 1 session(s)");
    const { shop: row, session } = await readRows();
    expect(row.serviceKeyEnc).toMatch(new RegExp(`^v2:${keyId(bytes(KEY_B))}:`));
    expect(session.accessToken).toMatch(new RegExp(`^v2:${keyId(bytes(KEY_B))}:`));

    // The old key can go: the app starts on the new key alone, resumes the shop and delivers.
    const app = await spawnApp({ env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), ENCRYPTION_KEY: KEY_B } });
    try {
      const deadline = Date.now() + 30_000;
      while (!emulator.requests.some((r) => r.path.startsWith("/api/")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      await app.stop();
    }
    const { shop: after } = await readRows();
    expect(after.pausedAt).toBeNull();
    expect(emulator.requests.some((r) => r.path.startsWith("/api/"))).toBe(true); // the waiting customer went out
  }, 120_000);

  it("the CLI refuses a PGlite directory a running app holds", async () => {
    const app = await spawnApp({ env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), ENCRYPTION_KEY: KEY_B } });
    try {
      const refused = await cli(["export-customer", "--shop", shop, "--customer", "1"], { ENCRYPTION_KEY: KEY_B });
      expect("code" in refused && refused.code).toBe(2);
      // One line naming who holds it (the app's lock, or PGlite's own postmaster.pid).
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stderr).toMatch(/is in use by (a running app: stop it first|process \d+)/);
    } finally {
      await app.stop();
    }
    const exported = await cli(["export-customer", "--shop", shop, "--customer", "1"], { ENCRYPTION_KEY: KEY_B });
    expect(JSON.parse(exported.stdout)).toMatchObject({ shop, customer: { id: "1" } });
  }, 120_000);
});
