import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import { installDatabase, openDatabase, type Database } from "~/db.server";
import { ACK_JOURNAL_FILE, ACK_JOURNAL_POLICY } from "~/pipeline/ack-journal.server";
import { receiveNodeWebhook } from "~/webhooks/ingest.server";
import { seedMigratedPgliteDir } from "./database";
import { applyTestEnv } from "./env";
import { sendWebhook } from "./webhooks";

export const JOURNAL_SHOP = "journal.myshopify.com";

/**
 * An installed shop on an on-disk PGlite (where acknowledgements are journaled) and the webhook
 * route on a real port, fresh for each test; the journal's policy is restored after each.
 */
export function journalTestbed() {
  const policyAsShipped = { ...ACK_JOURNAL_POLICY };
  const bed = {
    dataDir: "",
    db: undefined as unknown as Database,
    server: undefined as Server | undefined,
    url: "",
    /** Opens (and installs) the database in the test's directory. */
    async open(): Promise<Database> {
      const opened = openDatabase({ kind: "pglite", dataDir: bed.dataDir });
      await opened.migrate();
      installDatabase(opened);
      bed.db = opened;
      return opened;
    },
    /** Closes the database, as a stopping process does. */
    async close(): Promise<void> {
      installDatabase(undefined);
      await bed.db.close();
    },
    order: (n: number, shop = JOURNAL_SHOP, topic = "orders/create") =>
      sendWebhook(bed.url, { topic, shop, body: { id: 9_300_000 + n, email: `buyer-${n}@example.com`, currency: "EUR" }, eventId: `evt-${topic}-${n}` }),
    // Acknowledged in the same millisecond: by the number in the event id, the order they were sent.
    deliveries: (shop = JOURNAL_SHOP) =>
      bed.db.sql.query<{ eventId: string; receivedAt: Date }>(`SELECT "eventId", "receivedAt" FROM "WebhookDelivery" WHERE shop = $1 ORDER BY "receivedAt", length("eventId"), "eventId"`, [shop]),
    counter: async (shop = JOURNAL_SHOP) =>
      (await bed.db.sql.query<{ received: number; duplicates: number }>(`SELECT sum(received)::int AS received, sum(duplicates)::int AS duplicates FROM "SyncCounter" WHERE shop = $1`, [shop]))[0],
    journalText: () => readFileSync(path.join(bed.dataDir, ACK_JOURNAL_FILE), "utf8"),
  };

  beforeEach(async () => {
    applyTestEnv();
    bed.dataDir = mkdtempSync(path.join(tmpdir(), "ms-journal-"));
    await seedMigratedPgliteDir(bed.dataDir);
    await bed.open();
    await bed.db.prisma.shop.create({ data: { domain: JOURNAL_SHOP } });
    const server = createServer((req, res) => receiveNodeWebhook(req, res, () => res.writeHead(500).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    bed.server = server;
    bed.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    Object.assign(ACK_JOURNAL_POLICY, policyAsShipped);
    const listening = bed.server;
    bed.server = undefined;
    if (listening) await new Promise((resolve) => listening.close(resolve));
    await bed.close();
    rmSync(bed.dataDir, { recursive: true, force: true });
  });

  return bed;
}
