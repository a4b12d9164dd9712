// `npm run demo`: the whole app on embedded defaults, end to end. Starts the marketing-service
// emulator, a fake Shopify Admin and the app (PGlite, in-process worker); installs a demo shop by
// token exchange and connects it to the emulator; replays a realistic stream of signed webhooks
// over HTTP; shows progress while the worker delivers; ends with a summary. `--serve` keeps it
// all running for driving by hand.
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import type * as Runtime from "../../app/server/runtime.server";

const { values: args } = parseArgs({
  options: {
    serve: { type: "boolean", default: false },
    customers: { type: "string", default: "200" },
    seed: { type: "string", default: "42" },
    port: { type: "string", default: process.env.PORT ?? "3000" },
    "no-faults": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log(`npm run demo -- [--serve] [--customers N] [--seed N] [--port N] [--no-faults]
  --serve       keep the app, the emulator and the fake admin running after the replay
  --customers   how many customers the generated stream has (default 200)
  --no-faults   do not inject 429s and 5xx into the service emulator`);
  process.exit(0);
}
const customers = Number(args.customers);
if (!Number.isInteger(customers) || customers < 1 || customers > 100_000) {
  console.error("--customers must be a whole number from 1 to 100000");
  process.exit(2);
}

const ROOT = path.resolve(import.meta.dirname, "../..");
const SHOP = "demo-shop.myshopify.com";

async function freePort(preferred: number): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        const { port: got } = s.address() as { port: number };
        s.close(() => resolve(got));
      });
    });
  return tryPort(preferred).catch(() => tryPort(0));
}

async function main() {
  const started = Date.now();
  const { startEmulator } = await import("../emulator/server");
  const { startFakeAdmin } = await import("../shopify/fake-admin");
  const { DEV_SECRETS } = await import("../../app/config.server");

  const emulator = await startEmulator({ port: await freePort(4010) });
  const appPort = await freePort(Number(args.port));
  const appUrl = `http://localhost:${appPort}`;
  const admin = await startFakeAdmin({
    apiKey: DEV_SECRETS.SHOPIFY_API_KEY,
    apiSecret: DEV_SECRETS.SHOPIFY_API_SECRET,
    port: await freePort(4020),
    demo: { appUrl },
  });
  // The shop's history, exported when the shop is connected from the demo's Connection page.
  const { startDemoStore } = await import("./shopify-store");
  const store = await startDemoStore(admin, Number(args.seed));
  // The customers the replay describes are the store's own: Shopify confirms their consent.
  const { answerConsentFromWebhooks } = await import("../shopify/webhook-customers");
  const recordCustomer = answerConsentFromWebhooks(admin);

  // Embedded defaults: the demo's own PGlite directory, development secrets, local services.
  const dataDir = path.join(ROOT, ".data/demo-pglite");
  rmSync(dataDir, { recursive: true, force: true });
  delete process.env.DATABASE_URL;
  Object.assign(process.env, {
    PGLITE_DATA_DIR: dataDir,
    SHOPIFY_APP_URL: appUrl,
    PORT: String(appPort),
    MARKETING_API_URL: emulator.url,
    SHOPIFY_ADMIN_API_ORIGIN: admin.url,
    APP_BRIDGE_URL: `${admin.url}/cdn/app-bridge.js`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "error",
  });
  for (const name of ["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "ENCRYPTION_KEY"]) delete process.env[name];

  // The app from its production build (build/server/runtime.js: one copy of each module).
  // summary.ts reads through the source copy of app/db.server: it gets the same database.
  const app = (await import(pathToFileURL(path.join(ROOT, "build/server/runtime.js")).href)) as typeof Runtime;
  const { database, prisma, startHttpServer, startWorker, connectShop } = app;
  const { installDatabase } = await import("../../app/db.server");
  const { demoStream } = await import("./stream");
  const { renderSummary } = await import("./summary");
  const { mintSessionToken, CHROME_UA } = await import("../shopify/session-token");
  const { webhookHeaders } = await import("../shopify/webhooks");

  const db = database();
  installDatabase(db);
  await db.migrate();
  const http = await startHttpServer({ build: app.serverBuild, clientDir: app.CLIENT_DIR, port: appPort, host: "127.0.0.1" });
  // Unsubscribes at the service reach the fake Admin within 2 minutes (15 by default).
  const worker = startWorker({ policy: { consentReturnEveryMs: 2 * 60_000 } });
  console.log(`app ${appUrl} · service emulator ${emulator.url} · fake Shopify Admin ${admin.url}`);

  // Install: the merchant opens the app in the admin; the app exchanges the session token.
  const idToken = await mintSessionToken({ shop: SHOP, apiKey: DEV_SECRETS.SHOPIFY_API_KEY, secret: DEV_SECRETS.SHOPIFY_API_SECRET });
  const host = Buffer.from(`admin.shopify.com/store/${SHOP.split(".")[0]}`).toString("base64url");
  const opened = await fetch(`${appUrl}/app?embedded=1&shop=${SHOP}&host=${host}&id_token=${idToken}`, { headers: { "user-agent": CHROME_UA } });
  if (opened.status !== 200) throw new Error(`installing the demo shop failed: ${opened.status}`);
  await connectShop(SHOP, { apiKey: emulator.apiKey, baseUrl: emulator.url, importHistory: false });
  console.log(`installed ${SHOP} (token exchange) and connected it to the emulator's account`);

  if (!args["no-faults"]) {
    emulator.setFaults({ burst429: { count: 25, retryAfterSeconds: 1 }, serverErrors: 25 });
    console.log("injected service hiccups: 25 × 429 (Retry-After 1 s) and 25 × 500; they are retried");
  }

  const stream = demoStream({ customers, seed: Number(args.seed) });
  const bars = new cliProgress.MultiBar(
    { format: " {name} |{bar}| {value}/{total}", hideCursor: true, clearOnComplete: false, noTTYOutput: true, notTTYSchedule: 1000 },
    cliProgress.Presets.shades_classic,
  );
  const sentBar = bars.create(stream.length, 0, { name: "webhooks acknowledged " });
  const deliveredBar = bars.create(1, 0, { name: "service calls delivered" });
  const refresh = async () => {
    const [queued, done] = await Promise.all([
      prisma().outboundCall.count({ where: { shop: SHOP } }),
      prisma().outboundCall.count({ where: { shop: SHOP, status: { in: ["delivered", "dead", "refused"] } } }),
    ]);
    deliveredBar.setTotal(Math.max(queued, 1));
    deliveredBar.update(done);
  };
  const ticker = setInterval(() => void refresh(), 250);

  // Replay over HTTP, 16 at a time, in stream order per sender.
  let next = 0;
  let acknowledged = 0;
  const deliveryStart = Date.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < stream.length) {
        const d = stream[next++];
        recordCustomer({ topic: d.topic, shop: SHOP, body: d.body });
        const headers = webhookHeaders({ topic: d.topic, shop: SHOP, body: d.body, secret: DEV_SECRETS.SHOPIFY_API_SECRET, eventId: d.eventId, triggeredAt: d.triggeredAt });
        const res = await fetch(`${appUrl}/webhooks`, { method: "POST", headers, body: d.body });
        if (res.status === 200) acknowledged++;
        sentBar.increment();
      }
    }),
  );
  const replaySeconds = (Date.now() - deliveryStart) / 1000;
  // The worker is idle when nothing is *due*; a call the faulty emulator sent into backoff is
  // queued for later. Wait until nothing is waiting at all (within the same 5 minutes).
  const drainDeadline = Date.now() + 300_000;
  const drained = async (): Promise<void> => {
    for (;;) {
      await worker.idle({ timeoutMs: Math.max(drainDeadline - Date.now(), 1) });
      const [waitingCalls, waitingDeliveries] = await Promise.all([
        prisma().outboundCall.count({ where: { shop: SHOP, status: { in: ["queued", "running"] } } }),
        prisma().webhookDelivery.count({ where: { shop: SHOP, status: { not: "done" } } }),
      ]);
      if (waitingCalls + waitingDeliveries === 0 || Date.now() > drainDeadline) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };
  await drained();
  // Abandonment waits an hour by default; move the clock for the demo's pending checkouts.
  const fastForwarded = await prisma().abandonmentTimer.updateMany({ where: { shop: SHOP, status: "pending" }, data: { dueAt: new Date() } });
  await drained();
  const deliverySeconds = (Date.now() - deliveryStart) / 1000;
  clearInterval(ticker);
  await refresh();
  bars.stop();
  console.log(`replayed ${stream.length} webhooks in ${replaySeconds.toFixed(1)} s (${(stream.length / replaySeconds).toFixed(0)}/s, 16 at a time)`);
  console.log(`fast-forwarded ${fastForwarded.count} abandoned-checkout timers by the 60-minute delay`);

  const subscribed = new Set(
    stream
      .filter((d) => d.topic.startsWith("customers") && /"state":"subscribed"/.test(d.body))
      .map((d) => /"email(?:_address)?":"([^"]+)"/.exec(d.body)?.[1]),
  ).size;
  const { text, lost } = await renderSummary(SHOP, emulator, {
    sent: stream.length,
    acknowledged,
    duplicatesSent: stream.filter((d) => d.tag === "duplicate").length,
    outOfOrderSent: stream.filter((d) => d.tag === "out-of-order").length,
    seconds: (Date.now() - started) / 1000,
    deliverySeconds,
    subscribedCustomers: subscribed,
  });
  console.log(text);
  if (lost) console.error(`${lost} acknowledged items were not processed`);

  if (args.serve) {
    emulator.clearFaults();
    console.log(`
Marketing Sync demo is running. Press Ctrl+C to stop.
  Admin (embedded, App Bridge stubbed)  ${admin.url}/demo/open?shop=${SHOP}
  Webhook URL                           ${appUrl}/webhooks
  Shop domain                           ${SHOP}
  App secret (signs webhooks)           ${DEV_SECRETS.SHOPIFY_API_SECRET}
  Marketing service emulator            ${emulator.url}   (API key ${emulator.apiKey})
  Recorded service requests             ${emulator.url}/__emulator/requests
  Recorded Shopify Admin requests       ${admin.url}/__requests   (?operation=<name>)

Unsubscribe a contact at the service; within 2 minutes Shopify gets ReturnEmailConsent:
  curl -s -XPOST ${emulator.url}/__emulator/people/status -d '{"email":"<email of a subscribed customer>","statusDetails":"unsubscribed"}'
  curl -s '${admin.url}/__requests?operation=ReturnEmailConsent'

Sign up at the service's own form; within 2 minutes it is a Shopify customer (SignupCustomerCreate):
  curl -s -XPOST ${emulator.url}/__emulator/people/signup -d '{"email":"new.reader@example.com","firstName":"Nia"}'
  curl -s '${admin.url}/__requests?operation=SignupCustomerCreate'

Send a webhook by hand:
  body='{"id":1,"email":"you@example.com","updated_at":"2026-11-22T10:00:00Z","email_marketing_consent":{"state":"subscribed"}}'
  hmac=$(printf '%s' "$body" | openssl dgst -sha256 -hmac '${DEV_SECRETS.SHOPIFY_API_SECRET}' -binary | base64)
  curl -i ${appUrl}/webhooks -H "X-Shopify-Topic: customers/create" -H "X-Shopify-Hmac-Sha256: $hmac" \\
    -H "X-Shopify-Shop-Domain: ${SHOP}" -H "X-Shopify-Webhook-Id: $(uuidgen)" -H "X-Shopify-Event-Id: $(uuidgen)" \\
    -H "X-Shopify-API-Version: 2026-10" -H "Content-Type: application/json" -d "$body"`);
    const stop = async () => {
      await worker.stop();
      await http.close();
      await db.close();
      await emulator.close();
      await store.close();
      await admin.close();
      process.exit(0);
    };
    process.once("SIGINT", () => void stop());
    process.once("SIGTERM", () => void stop());
    return;
  }
  await worker.stop();
  await http.close();
  await db.close();
  await emulator.close();
  await store.close();
  await admin.close();
  process.exit(lost ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
