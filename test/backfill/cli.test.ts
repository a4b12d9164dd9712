import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "~/db.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { appProcessEnv, prepareConnectedDataDir, ROOT_DIR } from "../support/processes";

const run = promisify(execFile);
const shop = "cli-support.myshopify.com";
/** Installed, never connected to the marketing service. */
const unconnected = "cli-unconnected.myshopify.com";

/** The support CLI as support staff run it: a process on the app's PGlite directory (app stopped). */
describe("support CLI", () => {
  let emulator: Emulator;
  let dataDir: string;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    dataDir = mkdtempSync(path.join(tmpdir(), "ms-cli-"));
    await prepareConnectedDataDir(dataDir, shop, { url: emulator.url, apiKey: emulator.apiKey });
    const db = openDatabase({ kind: "pglite", dataDir });
    try {
      await db.prisma.shop.create({ data: { domain: unconnected } });
      await db.prisma.outboundCall.create({
        data: { shop, objectKey: "customer:1", kind: "customer", status: "dead", call: { op: "person.delete", idOrEmail: "x@example.com" }, lastError: "gave up" },
      });
      // Two dead letters of one outage (the pipeline's give-up message), of different customers.
      for (const [n, attempts, minutes] of [[2, 97, 1439], [3, 12, 2]] as const) {
        await db.prisma.outboundCall.create({
          data: {
            shop,
            objectKey: `customer:${n}`,
            kind: "customer",
            status: "dead",
            call: { op: "person.upsert", body: { email: `outage.${n}@example.com`, source: "shopify" } },
            attempts,
            lastError: `gave up after ${attempts} attempts; last: server_error: Server Error (retried for ${minutes} min)`,
            cause: "Gave up retrying: server_error: Server Error",
          },
        });
      }
      // A reminder whose checkout could not be mapped: nothing to replay, but support must see it.
      await db.sql.query(
        `INSERT INTO "AbandonmentTimer" (shop, "checkoutToken", "dueAt", snapshot, status, attempts, "lastError", "updatedAt")
         VALUES ($1, 'tok-cli', now(), '{}', 'failed', 1, 'could not map the checkout: no line items', now())`,
        [shop],
      );
      // The counters of that reminder and of two customers: one skipped (nothing new), one unusable.
      await db.sql.query(
        `INSERT INTO "SyncCounter" (shop, kind, received, delivered, skipped, unusable, failed, dead)
         VALUES ($1, 'customer', 5, 2, 1, 1, 7, 2), ($1, 'checkout', 0, 0, 0, 1, 0, 0)`,
        [shop],
      );
    } finally {
      await db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) =>
    run(process.execPath, ["--import", "tsx", "app/bin/cli.server.ts", ...args], {
      cwd: ROOT_DIR,
      env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url }), PATH: process.env.PATH ?? "", NODE_ENV: "test" },
      timeout: 60_000,
    }).catch((e: { code: number; stdout: string; stderr: string }) => e);

  it("explains every command", async () => {
    const out = await cli("--help");
    for (const command of ["shops", "status", "problems", "resync", "replay", "reconcile", "reencrypt-keys", "export-customer"]) expect(out.stdout).toContain(command);
    const help = (await cli("resync", "--help")).stdout.replace(/\s+/g, " ");
    expect(help).toMatch(/--orders-since/);
    expect(help).toContain("only the last 60 days of orders unless it was granted read_all_orders");
    expect((await cli("reconcile", "--help")).stdout).toMatch(/--shop <domain>/);
  });

  it("lists shops and a shop's status as tables", async () => {
    const shops = await cli("shops");
    expect(shops.stdout).toMatch(new RegExp(`${shop}.*connected.*\\b3\\b`));
    const status = await cli("status", "--shop", shop);
    expect(status.stdout).toContain(`${shop}: connected`);
    expect(status.stdout).toContain("no history import yet");
    // Per kind: received, delivered, skipped, could not be used, failed attempts, dead, waiting.
    const cells = (kind: string) =>
      status.stdout
        .split("\n")
        .find((line) => line.includes(`│ ${kind} `))
        ?.split("│")
        .map((c) => c.trim())
        .filter(Boolean);
    expect(status.stdout).toContain("could not be used");
    expect(cells("customer")).toEqual(["customer", "5", "2", "1", "1", "7", "2", "0", "—"]);
    expect(cells("checkout")).toEqual(["checkout", "0", "0", "0", "1", "0", "0", "0", "—"]);
  });

  it("lists a shop's dead letters by cause, e-mails masked, with the ids that replay --ids takes", async () => {
    const text = (await cli("problems", "--shop", shop)).stdout;
    expect(text).toContain("Gave up retrying: server_error: Server Error (2)");
    expect(text).toContain("gave up (1)");
    expect(text).toContain("o•••@example.com");
    expect(text).not.toContain("outage.2@example.com");
    expect(text).toContain("Could not be used (1)");
    expect(text).toContain("could not map the checkout: no line items");
    const { groups } = JSON.parse((await cli("problems", "--shop", shop, "--search", "customer:3", "--json")).stdout) as {
      groups: { reason: string; problems: { id: string; object: string }[] }[];
    };
    expect(groups).toHaveLength(1);
    expect(groups[0].problems).toHaveLength(1);
    expect((await cli("replay", "--shop", shop, "--ids", groups[0].problems[0].id)).stdout).toContain("1 replayed, 0 skipped");
    expect((await cli("problems", "--shop", shop)).stdout).toContain("Gave up retrying: server_error: Server Error (1)");
    const unknown = await cli("problems", "--shop", "nobody.myshopify.com");
    expect("code" in unknown && unknown.code).toBe(2);
   }, 120_000);

  it("replays dead letters, queues one history import at a time, and fails clearly on bad input", async () => {
    expect((await cli("replay", "--shop", shop)).stdout).toContain("2 replayed, 0 skipped");
    expect((await cli("resync", "--shop", shop, "--kinds", "customers")).stdout).toMatch(/history import .* queued/);
    const again = await cli("resync", "--shop", shop);
    expect("code" in again && again.code).toBe(2);
    expect(again.stderr).toMatch(/already under way/);
    const unknown = await cli("status", "--shop", "nobody.myshopify.com");
    expect("code" in unknown && unknown.code).toBe(2);
    // Logs share stderr (info level in this environment); the refusal is its last line.
    expect(unknown.stderr.trim().split("\n").at(-1)).toMatch(/^The app does not know nobody\.myshopify\.com/);
    // No Shopify session in this directory: the sweep cannot ask Shopify, and says so in one line.
    const sweep = await cli("reconcile", "--shop", shop);
    expect("code" in sweep && sweep.code).toBe(2);
    // Logs share stderr (and may be flushed after it): the refusal is one whole line of it.
    expect(sweep.stderr.split("\n")).toContainEqual(expect.stringMatching(/^The reconciliation of cli-support\.myshopify\.com failed: /));
    expect((await cli("status", "--shop", shop)).stdout).toMatch(/reconciliation: last sweep — .*last error: /);
    const bad = await cli("resync", "--shop", shop, "--orders-since", "12");
    expect("code" in bad && bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--orders-since takes 60, 90, 365 or all/);
   }, 120_000);

  it("reconcile of a sweep that failed past its deadline says the sweep was given up (exit 2), not that objects were queued", async () => {
    // The worker's sweep: started 7 h ago (the deadline is 6 h), its pages failing since; an older sweep queued 3.
    const db = openDatabase({ kind: "pglite", dataDir });
    try {
      await db.sql.query(
        `INSERT INTO "ReconcileState" (shop, "dueAt", "sweptThrough", "startedAt", attempts, "lastError", "lastSweepAt", "lastEnqueued")
         VALUES ($1, now() + interval '10 minutes', now() - interval '2 days', now() - interval '7 hours', 9, 'Shopify answered with errors: Internal error', now() - interval '2 days', 3)
         ON CONFLICT (shop) DO UPDATE SET "dueAt" = EXCLUDED."dueAt", "sweptThrough" = EXCLUDED."sweptThrough", "startedAt" = EXCLUDED."startedAt",
           attempts = EXCLUDED.attempts, "lastError" = EXCLUDED."lastError", "lastSweepAt" = EXCLUDED."lastSweepAt", "lastEnqueued" = EXCLUDED."lastEnqueued",
           "lockedBy" = NULL, "lockedUntil" = NULL`,
        [shop],
      );
    } finally {
      await db.close();
    }
    const sweep = await cli("reconcile", "--shop", shop);
    expect({ code: "code" in sweep ? sweep.code : 0, stdout: sweep.stdout }).toEqual({ code: 2, stdout: "" });
    expect(sweep.stderr.split("\n")).toContainEqual(expect.stringMatching(/^The reconciliation of cli-support\.myshopify\.com failed: gave up this sweep after 10 attempts: /));
  }, 90_000);

  it("resync refuses a shop that was installed but never connected: nothing could reach the service", async () => {
    const notConnected = await cli("resync", "--shop", unconnected, "--run");
    expect("code" in notConnected && notConnected.code).toBe(2);
    expect(notConnected.stderr.split("\n")).toContainEqual(`${unconnected} is not connected to the marketing service, so a history import would send nothing. Connecting it (the app's Connection page) starts one.`);
    expect(notConnected.stdout).not.toMatch(/queued|imported/);
    expect((await cli("status", "--shop", unconnected)).stdout).toContain("no history import yet");
  });

  it("resync --orders-since says Shopify shows 60 days of orders without read_all_orders, and imports those", async () => {
    const db = openDatabase({ kind: "pglite", dataDir });
    try {
      await db.sql.query(`UPDATE "BackfillRun" SET status = 'failed' WHERE shop = $1`, [shop]);
      await db.sql.query(`UPDATE "Shop" SET scopes = 'read_customers,read_orders,read_products' WHERE domain = $1`, [shop]);
    } finally {
      await db.close();
    }
    const clamped = await cli("resync", "--shop", shop, "--kinds", "orders", "--orders-since", "365");
    expect("code" in clamped).toBe(false);
    expect(clamped.stdout).toContain("orders: those of the last 60 days");
    expect(clamped.stderr).toContain(`warning: asked for 365 days of orders, but ${shop} has not granted read_all_orders`);
    const check = openDatabase({ kind: "pglite", dataDir });
    try {
      const [run] = await check.sql.query<{ days: number }>(
        `SELECT round(extract(epoch FROM now() - "ordersSince") / 86400)::int AS days FROM "BackfillRun" WHERE shop = $1 AND status = 'queued'`,
        [shop],
      );
      expect(run?.days).toBe(60);
      await check.sql.query(`UPDATE "BackfillRun" SET status = 'failed' WHERE shop = $1`, [shop]);
      await check.sql.query(`UPDATE "Shop" SET scopes = 'read_customers,read_orders,read_products,read_all_orders' WHERE domain = $1`, [shop]);
    } finally {
      await check.close();
    }
    const all = await cli("resync", "--shop", shop, "--kinds", "orders", "--orders-since", "all");
    expect(all.stdout).toContain("orders: all of them");
    expect(all.stderr).not.toContain("warning:");
  }, 120_000);

  it("export-customer refuses a shop the app does not know, as the other commands do", async () => {
    const typo = await cli("export-customer", "--shop", "cli-suport.myshopify.com", "--customer", "1");
    expect("code" in typo && typo.code).toBe(2);
    expect(typo.stderr.trim().split("\n").at(-1)).toMatch(/^The app does not know cli-suport\.myshopify\.com/);
    expect(typo.stdout).toBe("");
    const known = await cli("export-customer", "--shop", shop, "--customer", "1");
    expect("code" in known).toBe(false);
    expect(JSON.parse(known.stdout)).toMatchObject({ rowCount: expect.any(Number) });
  });
});
