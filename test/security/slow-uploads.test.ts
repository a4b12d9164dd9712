import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app";
import { customerBody } from "../support/pipeline";
import { sendWebhook } from "../support/webhooks";

// Memory exhaustion without any secret: slow uploads of large unsigned bodies to /webhooks. The
// server must bound what it reads for one client before the HMAC check (503 past its share) and
// drop slow senders. (Many idle holders and Shopify from another address: edge-bodies.test.ts.)
const shop = "slow-uploads.myshopify.com";
let app: TestApp;
const sockets: Socket[] = [];

beforeAll(async () => {
  app = await startTestApp();
  await app.db.prisma.shop.create({ data: { domain: shop } });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await app.close();
});

/** Starts an unsigned upload declaring 2 MiB, sends 1 KiB of it, and keeps the socket open. */
function slowUpload(): { status: Promise<number> } {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), "127.0.0.1");
  sockets.push(socket);
  let answer = "";
  const status = new Promise<number>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m) resolve(Number(m[1]));
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed without an answer: ${answer.slice(0, 100)}`)));
  });
  status.catch(() => undefined);
  socket.write(
    [
      "POST /webhooks HTTP/1.1",
      "host: 127.0.0.1",
      "content-type: application/json",
      `content-length: ${2 * 1024 * 1024}`,
      "x-shopify-topic: customers/create",
      `x-shopify-shop-domain: ${shop}`,
      "x-shopify-hmac-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      `x-shopify-webhook-id: slow-${sockets.length}`,
      "",
      "",
    ].join("\r\n"),
  );
  socket.write(Buffer.alloc(1024, "a"));
  return { status };
}

it("answers 503 once one client has its share of the readers, drops slow senders with 408, and then serves Shopify again", async () => {
  const statuses: Promise<number>[] = [];
  let busySeen = false;
  // One upload after another (each given a moment to be taken up) until the server says busy.
  for (let i = 0; i < 40 && !busySeen; i++) {
    const upload = slowUpload();
    void upload.status.then((s) => (busySeen ||= s === 503), () => undefined);
    statuses.push(upload.status);
    await Promise.race([upload.status.catch(() => undefined), new Promise((r) => setTimeout(r, 200))]);
  }
  // Every upload is answered: refused as busy, or dropped at its body deadline (never left holding its buffer).
  const answered = await Promise.all(statuses);
  const held = answered.filter((s) => s === 408).length;
  expect(answered.filter((s) => s !== 408 && s !== 503)).toEqual([]);
  expect(answered).toContain(503);
  expect(held).toBeGreaterThan(0);
  expect(held).toBeLessThanOrEqual(8); // one client's share of the readers (app/server/body.server.ts)
  // The budget is free again: a genuine delivery is acknowledged.
  expect((await sendWebhook(app.url, { topic: "customers/create", shop, body: customerBody({ id: "91" }) })).status).toBe(200);
}, 120_000);
