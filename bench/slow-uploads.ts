/**
 * The production server (`node build/server/serve.js`) under three floods that need no secret,
 * one after the other (after a phase of Shopify alone, for comparison), while Shopify (genuine signed webhooks, from another address: 127.0.0.2)
 * keeps delivering:
 * 1. slow uploads: each declares a 2 MiB body to /webhooks and trickles it in;
 * 2. idle holders: each declares a 2 MiB body to /webhooks and sends nothing, reconnecting a
 *    second after being dropped (issue 48: four of them used to stop all ingestion);
 * 3. login bodies: large forms to /auth/login, half declared, half chunked (issue 48: eight
 *    200 MiB bodies took the server to 2.6 GiB).
 *
 *   npx tsx bench/slow-uploads.ts [--uploads 150] [--holders 300] [--logins 8] [--login-mib 200]
 *     [--seconds 20] [--chunk-kib 16] [--every-ms 250] [--genuine-every-ms 500]
 *
 * Prints, per phase, the server's RSS before it and its peak during it (sampled; the kernel's
 * VmHWM at the end), how the hostile requests were answered (503: a body budget or a client's
 * share was full; 408: a body deadline passed; 413: past the body's bound) and how the genuine
 * webhooks were answered (200 expected throughout). Goal: peak ≤ 350 MiB. Linux only (/proc).
 * Needs the production build (`npm run build`). Benchmarks print figures; they never assert.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { installDatabase, openDatabase } from "../app/db.server";
import { applyTestEnv } from "../test/support/env";
import { customerBody } from "../test/support/pipeline";
import { appProcessEnv, spawnApp } from "../test/support/processes";
import { webhookHeaders } from "../test/support/webhooks";
import { mib, printTable, sleep } from "./support";

const GOAL_BYTES = 350 * 1024 * 1024;
const { values } = parseArgs({
  options: {
    uploads: { type: "string", default: "150" },
    holders: { type: "string", default: "300" },
    logins: { type: "string", default: "8" },
    "login-mib": { type: "string", default: "200" },
    "genuine-every-ms": { type: "string", default: "500" },
    seconds: { type: "string", default: "20" },
    "chunk-kib": { type: "string", default: "16" },
    "every-ms": { type: "string", default: "250" },
  },
});
const uploads = Number(values.uploads);
const seconds = Number(values.seconds);
const chunk = Buffer.alloc(Number(values["chunk-kib"]) * 1024, "a");
const everyMs = Number(values["every-ms"]);
const holders = Number(values.holders);
const logins = Number(values.logins);
const loginBytes = Number(values["login-mib"]) * 1024 * 1024;
const genuineEveryMs = Number(values["genuine-every-ms"]);
const DECLARED = 2 * 1024 * 1024;
const SHOP = "flood.myshopify.com";

function memory(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** One slow sender: headers, then `chunk` every `everyMs` until the declared 2 MiB or an answer. */
function slowUpload(port: number, n: number, answers: Map<string, number>, idle = false): Socket {
  const socket = connect(port, "127.0.0.1");
  let sent = 0;
  let answered = false;
  const timer = setInterval(() => {
    if (idle || answered || sent >= DECLARED || socket.destroyed) return clearInterval(timer);
    const piece = chunk.subarray(0, Math.min(chunk.length, DECLARED - sent));
    sent += piece.length;
    socket.write(piece);
  }, everyMs);
  const answer = (status: string) => {
    if (answered) return;
    answered = true;
    clearInterval(timer);
    answers.set(status, (answers.get(status) ?? 0) + 1);
  };
  socket.on("data", (data: Buffer) => answer(/^HTTP\/1\.1 (\d{3})/.exec(data.toString("latin1"))?.[1] ?? "other"));
  socket.on("error", () => answer("reset"));
  socket.on("close", () => answer("closed unanswered"));
  socket.write(
    [
      "POST /webhooks HTTP/1.1",
      "host: 127.0.0.1",
      "content-type: application/json",
      `content-length: ${DECLARED}`,
      "x-shopify-topic: orders/create",
      `x-shopify-shop-domain: ${SHOP}`,
      "x-shopify-hmac-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      `x-shopify-webhook-id: flood-${n}`,
      "",
      "",
    ].join("\r\n"),
  );
  return socket;
}

const count = (answers: Map<string, number>, status: string) => answers.set(status, (answers.get(status) ?? 0) + 1);
const show = (answers: Map<string, number>) => [...answers].sort().map(([k, v]) => `${k}: ${v}`).join(", ") || "none";

/** An idle holder that reconnects a second after it is dropped, until `until`. */
function holdIdle(port: number, n: number, answers: Map<string, number>, until: number, open: Set<Socket>): void {
  const socket = slowUpload(port, n, answers, true);
  open.add(socket);
  socket.on("close", () => {
    open.delete(socket);
    if (Date.now() < until) setTimeout(() => holdIdle(port, n, answers, until, open), 1_000);
  });
}

/** A large login form: declared up front, or chunked; written until answered or closed. */
function loginBody(port: number, chunked: boolean, answers: Map<string, number>): Socket {
  const socket = connect(port, "127.0.0.1");
  let answered = false;
  socket.on("data", (data: Buffer) => {
    if (answered) return;
    answered = true;
    count(answers, /^HTTP\/1\.1 (\d{3})/.exec(data.toString("latin1"))?.[1] ?? "other");
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    if (!answered) count(answers, "closed unanswered");
    answered = true;
  });
  socket.write(
    ["POST /auth/login HTTP/1.1", "host: 127.0.0.1", "content-type: application/x-www-form-urlencoded",
      chunked ? "transfer-encoding: chunked" : `content-length: ${loginBytes}`, "", ""].join("\r\n"),
  );
  const block = Buffer.alloc(256 * 1024, "a");
  const framed = chunked ? Buffer.concat([Buffer.from(`${block.length.toString(16)}\r\n`), block, Buffer.from("\r\n")]) : block;
  void (async () => {
    for (let sent = 0; sent < loginBytes && !answered && socket.writable; sent += block.length) {
      if (!socket.write(framed)) await new Promise<void>((resolve) => { socket.once("drain", resolve); socket.once("close", resolve); });
    }
  })();
  return socket;
}

/** Genuine signed deliveries from 127.0.0.2, one every `genuineEveryMs`, while `running()`. */
async function deliverGenuine(port: number, running: () => boolean, answers: Map<string, number>): Promise<void> {
  let n = 0;
  const pending: Promise<void>[] = [];
  while (running()) {
    const body = JSON.stringify(customerBody({ id: String(10_000 + n++) }));
    pending.push(
      new Promise<void>((resolve) => {
        const req = request(
          { host: "127.0.0.1", port, localAddress: "127.0.0.2", method: "POST", path: "/webhooks", agent: false,
            headers: { ...webhookHeaders({ topic: "customers/create", shop: SHOP, body }), "content-length": Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            count(answers, String(res.statusCode));
            resolve();
          },
        );
        req.setTimeout(10_000, () => req.destroy(new Error("timeout")));
        req.on("error", (e) => (count(answers, e.message === "timeout" ? "no answer in 10 s" : "error"), resolve()));
        req.end(body);
      }),
    );
    await sleep(genuineEveryMs);
  }
  await Promise.all(pending);
}

/** Runs `flood` for `seconds` while Shopify delivers; RSS sampled throughout. */
async function phase(pid: number, port: number, flood: (until: number) => () => void): Promise<{ before: number; peak: number; genuine: Map<string, number> }> {
  const before = memory(pid).rss;
  const genuine = new Map<string, number>();
  const until = Date.now() + seconds * 1000;
  const stop = flood(until);
  const delivering = deliverGenuine(port, () => Date.now() < until, genuine);
  let peak = before;
  while (Date.now() < until) {
    peak = Math.max(peak, memory(pid).rss);
    await sleep(100);
  }
  await delivering;
  stop();
  await sleep(2_000); // the server drops what is left
  return { before, peak, genuine };
}

/** A migrated data directory with the shop the genuine deliveries name installed. */
async function prepareDataDir(dataDir: string): Promise<void> {
  applyTestEnv({ PGLITE_DATA_DIR: dataDir });
  const db = openDatabase({ kind: "pglite", dataDir });
  try {
    await db.migrate();
    installDatabase(db);
    await db.prisma.shop.create({ data: { domain: SHOP } });
  } finally {
    installDatabase(undefined);
    await db.close();
  }
}

async function main() {
  // A data directory on disk, as in production (an in-memory PGlite holds the whole database in RSS).
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-slow-uploads-"));
  await prepareDataDir(dataDir);
  const app = await spawnApp({ env: appProcessEnv({ dataDir, marketingApiUrl: "http://127.0.0.1:9" }), timeoutMs: 120_000 });
  const pid = app.child.pid!;
  try {
    await sleep(2_000); // start-up settles
    const port = Number(new URL(app.url).port);
    const rows: (string | number)[][] = [];

    // Shopify alone first: what recording its deliveries costs (PGlite's heap grows and stays grown).
    const r0 = await phase(pid, port, () => () => undefined);
    rows.push(["none (Shopify alone)", mib(r0.before), mib(r0.peak), "-", show(r0.genuine)]);

    const slow = new Map<string, number>();
    const r1 = await phase(pid, port, () => {
      const sockets = Array.from({ length: uploads }, (_, i) => slowUpload(port, i, slow));
      return () => sockets.forEach((s) => s.destroy());
    });
    rows.push([`slow uploads: ${uploads}`, mib(r1.before), mib(r1.peak), show(slow), show(r1.genuine)]);

    const idle = new Map<string, number>();
    const open = new Set<Socket>();
    const r2 = await phase(pid, port, (until) => {
      for (let i = 0; i < holders; i++) holdIdle(port, uploads + i, idle, until, open);
      return () => open.forEach((s) => s.destroy());
    });
    rows.push([`idle holders: ${holders}`, mib(r2.before), mib(r2.peak), show(idle), show(r2.genuine)]);

    const login = new Map<string, number>();
    const r3 = await phase(pid, port, () => {
      const sockets = Array.from({ length: logins }, (_, i) => loginBody(port, i % 2 === 1, login));
      return () => sockets.forEach((s) => s.destroy());
    });
    rows.push([`login bodies: ${logins} × ${values["login-mib"]} MiB`, mib(r3.before), mib(r3.peak), show(login), show(r3.genuine)]);

    const hwm = memory(pid).hwm;
    printTable(["flood (" + seconds + " s each)", "RSS before", "peak RSS (sampled)", "hostile answers", "genuine webhooks"], rows);
    console.log(`peak RSS (VmHWM) over all phases: ${mib(hwm)} — ${hwm <= GOAL_BYTES ? "≤ 350 MiB: met" : "≤ 350 MiB: MISSED"}`);
  } finally {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
