import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { TEST_API_SECRET, TEST_ENCRYPTION_KEY } from "../support/env";
import { customerBody } from "../support/pipeline";
import { appProcessEnv, prepareConnectedDataDir, spawnApp, type AppProcess } from "../support/processes";
import { sendWebhook } from "../support/webhooks";

// The real server at its most verbose: whatever happens, no secret and no customer record may
// appear in its output.
const shop = "logs.myshopify.com";
const dataDir = mkdtempSync(path.join(tmpdir(), "ms-logs-"));
const lines: string[] = [];
let emulator: Emulator;
let app: AppProcess | undefined;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  await prepareConnectedDataDir(dataDir, shop, emulator);
  app = await spawnApp({
    env: appProcessEnv({ dataDir, marketingApiUrl: emulator.url, logLevel: "trace" }),
    onLine: (line) => lines.push(line),
  });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await emulator?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function until(check: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("never logs a key, a secret or a customer record, through deliveries, rejections and a revoked key", async () => {
  const email = "secretive.person@example.com";
  const customer = {
    ...customerBody({ id: "31337", email, firstName: "Zebulon" }),
    phone: "+15555550123",
    default_address: { address1: "1 Hidden Lane", city: "Nowhere", zip: "99999", country: "US" },
  };
  expect((await sendWebhook(app!.url, { topic: "customers/create", shop, body: customer })).status).toBe(200);
  expect((await sendWebhook(app!.url, { topic: "customers/create", shop, body: customer, secret: "wrong-secret-1234" })).status).toBe(401);
  await until(() => emulator.person(email) !== undefined);

  // The merchant's key stops working: the shop is paused, with a reason in the logs.
  emulator.state.keys.delete(emulator.apiKey);
  const next = customerBody({ id: "31338", email: "second.person@example.com" });
  expect((await sendWebhook(app!.url, { topic: "customers/create", shop, body: next })).status).toBe(200);
  await until(() => lines.some((l) => l.includes("shop paused")));

  const output = lines.join("\n");
  expect(output).toContain("service request"); // the verbose logs were really on
  for (const secret of [emulator.apiKey, TEST_API_SECRET, TEST_ENCRYPTION_KEY]) expect(output).not.toContain(secret);
  for (const personal of ["Zebulon", "+15555550123", "1 Hidden Lane", "Lovelace"]) expect(output).not.toContain(personal);
}, 120_000);
