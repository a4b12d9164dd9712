import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { startFakeAdmin, type FakeAdmin } from "../../dev/shopify/fake-admin";
import { TEST_API_KEY, TEST_API_SECRET, TEST_ENCRYPTION_KEY } from "../support/env";
import { CHROME_UA, mintSessionToken } from "../support/session-token";
import { customerBody } from "../support/pipeline";
import { appProcessEnv, prepareConnectedDataDir, spawnApp, type AppProcess } from "../support/processes";
import { sendWebhook } from "../support/webhooks";

// The real server at its most verbose: whatever happens, no secret and no customer record may
// appear in its output.
const shop = "logs.myshopify.com";
const dataDir = mkdtempSync(path.join(tmpdir(), "ms-logs-"));
const lines: string[] = [];
let emulator: Emulator;
let admin: FakeAdmin;
let app: AppProcess | undefined;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  admin = await startFakeAdmin({ apiKey: TEST_API_KEY, apiSecret: TEST_API_SECRET });
  await prepareConnectedDataDir(dataDir, shop, emulator);
  app = await spawnApp({
    env: { ...appProcessEnv({ dataDir, marketingApiUrl: emulator.url, logLevel: "trace" }), SHOPIFY_ADMIN_API_ORIGIN: admin.url },
    onLine: (line) => lines.push(line),
  });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await emulator?.close();
  await admin?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Waits, the event loop free, until `check` holds; a generous deadline for a hang. */
const until = (check: () => boolean) => expect.poll(check, { timeout: 60_000, interval: 50 }).toBe(true);

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

  // An admin request: Shopify's library logs the session token it checks, and the access token's session.
  const sessionToken = await mintSessionToken({ shop });
  const page = await fetch(`${app!.url}/app.data`, { headers: { "user-agent": CHROME_UA, authorization: `Bearer ${sessionToken}` } });
  expect(page.status).toBe(200);
  await until(() => lines.some((l) => l.includes("Attempting to authenticate session token")));

  const output = lines.join("\n");
  expect(output).toContain("service request"); // the verbose logs were really on
  expect(output).not.toContain(sessionToken.split(".")[2]); // not even the token's signature
  for (const token of admin.issued) expect(output).not.toContain(token);
  for (const secret of [emulator.apiKey, TEST_API_SECRET, TEST_ENCRYPTION_KEY]) expect(output).not.toContain(secret);
  for (const personal of ["Zebulon", "+15555550123", "1 Hidden Lane", "Lovelace"]) expect(output).not.toContain(personal);
}, 120_000);

it("censors secrets and personal data at any depth, and keeps the stack of an unexpected error", async () => {
  const { scrub } = await import("~/logger.server");
  const error = new Error("upsert of ann@example.com failed");
  const out = JSON.stringify(
    scrub({
      shop,
      deep: { a: { b: { c: { serviceKeyEnc: "v2:abc", idToken: "eyJ.x.y", rawBody: '{"email":"x@y.z"}', calls: [{ op: "person.upsert" }] } } } },
      list: [{ email: "ann@example.com", phone: "+15555550123", first_name: "Zebulon" }],
      note: "sent to ann@example.com with Bearer mk_live_abcdef",
      err: error,
    }),
  );
  for (const leaked of ["v2:abc", "eyJ.x.y", "x@y.z", "person.upsert", "ann@example.com", "+15555550123", "Zebulon", "mk_live_abcdef"]) {
    expect(out).not.toContain(leaked);
  }
  expect(out).toContain(shop); // ids stay
  // A failed statement: PGlite puts the bound values into the query text, PostgreSQL quotes the row.
  const failed = Object.assign(new Error("could not extend file: No space left on device"), {
    code: "53100",
    query: `EXECUTE record_delivery('{"first_name":"Zebulon","phone":"+15555550123"}')`,
    params: ['{"first_name":"Zebulon"}'],
    detail: "Failing row contains (1 Hidden Lane).",
    where: 'JSON data, line 1: {"first_name":"Zebulon"',
  });
  const dbOut = JSON.stringify(scrub({ err: failed }));
  for (const leaked of ["Zebulon", "+15555550123", "1 Hidden Lane"]) expect(dbOut).not.toContain(leaked);
  expect(dbOut).toContain("53100"); // what went wrong stays readable
  // Percent-encoded addresses (a URL path naming a person), JWTs and Shopify tokens inside any text.
  const { scrubString } = await import("~/logger.server");
  const line = scrubString(
    'network: DELETE /api/people/ada.thompson.2%40example.com failed; again ada%2540example.com | {sessionToken: {"header":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}, accessToken: shpat_0123abcd, refresh_token=r-secret-1}',
  );
  for (const leaked of ["ada.thompson.2", "ada%25", "eyJhbGciOiJIUzI1NiJ9", "c2lnbmF0dXJl", "shpat_0123abcd", "r-secret-1"]) expect(line).not.toContain(leaked);
  expect(line).toContain("DELETE /api/people/[email] failed");
  const kept = scrub({ err: error }) as { err: Error };
  expect(kept.err.message).toBe("upsert of [email] failed");
  expect(kept.err.stack).toContain("logging.test.ts");
});
