import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app";
import { customerBody } from "../support/pipeline";
import { webhookHeaders } from "../support/webhooks";

// Issue 48, items 1 and 2: no unauthenticated request can exhaust the server with a body.
// Hostile clients connect from 127.0.0.1; Shopify's deliveries from 127.0.0.2 (another address,
// as Shopify's are: the whole 127/8 is this machine's loopback).
const shop = "edge-bodies.myshopify.com";
const MiB = 1024 * 1024;
let app: TestApp;
const sockets: Socket[] = [];

beforeAll(async () => {
  app = await startTestApp();
  await app.db.prisma.shop.create({ data: { domain: shop } });
}, 120_000);
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await app.close();
});

interface RawExchange {
  socket: Socket;
  /** The status line's code, once an answer starts (rejects if the connection ends without one). */
  status: Promise<number>;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

/** A raw HTTP/1.1 request: `head` lines, then whatever the caller writes on `socket`. */
function rawRequest(head: string[], localAddress = "127.0.0.1"): RawExchange {
  const { port } = new URL(app.url);
  const socket = connect({ port: Number(port), host: "127.0.0.1", localAddress });
  sockets.push(socket);
  let answer = "";
  const status = new Promise<number>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (m) resolve(Number(m[1]));
    });
    socket.on("close", () => reject(new Error(`closed without an answer: ${answer.slice(0, 100)}`)));
  });
  status.catch(() => undefined);
  socket.on("error", () => undefined); // a reset while writing a refused body is expected
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.write([...head, "", ""].join("\r\n"));
  return { socket, status, closed };
}

/** Writes `total` bytes in 64 KiB chunks (chunked encoding when asked) until done or the socket closes. */
async function pour(socket: Socket, total: number, chunked: boolean): Promise<void> {
  const block = Buffer.alloc(64 * 1024, "a");
  for (let sent = 0; sent < total && !socket.destroyed && socket.writable; sent += block.length) {
    const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${block.length.toString(16)}\r\n`), block, Buffer.from("\r\n")]) : block);
    if (!ok) await new Promise<void>((resolve) => { socket.once("drain", resolve); socket.once("close", resolve); });
  }
  if (chunked && socket.writable) socket.write("0\r\n\r\n");
}

/** A genuine signed delivery, as Shopify sends it, from its own address. */
function genuineWebhook(id: string): Promise<number> {
  const body = JSON.stringify(customerBody({ id }));
  const { port } = new URL(app.url);
  return new Promise<number>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: Number(port), localAddress: "127.0.0.2", method: "POST", path: "/webhooks", agent: false,
        headers: { ...webhookHeaders({ topic: "customers/create", shop, body }), "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("1. every body is bounded before anything reads it", () => {
  const loginHead = (length: string) => [
    "POST /auth/login HTTP/1.1",
    "host: 127.0.0.1",
    "content-type: application/x-www-form-urlencoded",
    length,
  ];

  it("a 50 MiB login form declared up front is answered 413 and its connection closed, unread", async () => {
    const upload = rawRequest(loginHead(`content-length: ${50 * MiB}`));
    upload.socket.write("shop=a.myshopify.com&x=");
    // Nothing more is sent: the answer comes from the declared length alone.
    expect(await upload.status).toBe(413);
    await upload.closed;
  });

  it("a 50 MiB login form sent chunked (no declared length) is refused at the bound, 413, and its connection closed", async () => {
    const upload = rawRequest(loginHead("transfer-encoding: chunked"));
    void pour(upload.socket, 50 * MiB, true);
    expect(await upload.status).toBe(413);
    await upload.closed;
  });

  it("an admin page's form, authenticated or not, has the same bound", async () => {
    const upload = rawRequest(["POST /app/settings HTTP/1.1", "host: 127.0.0.1", "content-type: application/x-www-form-urlencoded", `content-length: ${10 * MiB}`]);
    expect(await upload.status).toBe(413);
    await upload.closed;
  });

  it("a login form within the bound still reaches the login", async () => {
    const res = await fetch(`${app.url}/auth/login`, { method: "POST", body: new URLSearchParams({ shop: "" }), redirect: "manual" });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("Please enter your shop domain to log in");
  });
});

describe("2. one client cannot hold the shared budget", () => {
  /** An unsigned delivery declaring 2 MiB that never sends a byte of it, as the review's attacker. */
  const idleHolder = () =>
    rawRequest([
      "POST /webhooks HTTP/1.1",
      "host: 127.0.0.1",
      "content-type: application/json",
      `content-length: ${2 * MiB}`,
      "x-shopify-topic: customers/create",
      `x-shopify-shop-domain: ${shop}`,
      "x-shopify-hmac-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      `x-shopify-webhook-id: idle-${sockets.length}`,
    ]);

  it("while 300 idle connections from one address hold (and reconnect a second after being dropped), 20 of 20 genuine signed webhooks are acknowledged", async () => {
    const answers: number[] = [];
    let holding = true;
    const hold = (): void => {
      const h = idleHolder();
      void h.status.then((s) => answers.push(s), () => undefined);
      void h.closed.then(() => {
        if (holding) setTimeout(hold, 1_000); // the attacker reconnects when dropped
      });
    };
    for (let i = 0; i < 300; i++) hold();
    // Every holder has been taken up: refused as busy, or reading until its first-byte deadline.
    await expect.poll(() => answers.filter((s) => s === 503).length, { timeout: 60_000 }).toBeGreaterThan(250);

    const genuine: number[] = [];
    for (let i = 0; i < 20; i++) genuine.push(await genuineWebhook(`held-${i}`));
    expect(genuine).toEqual(Array(20).fill(200));
    // A holder that got a reader is dropped at its first-byte deadline, and is then refused in turn.
    await expect.poll(() => answers.filter((s) => s === 408).length, { timeout: 60_000 }).toBeGreaterThan(0);
    holding = false;
    expect(answers.filter((s) => s !== 503 && s !== 408)).toEqual([]);
    for (const s of sockets) s.destroy();
  }, 180_000);
});
