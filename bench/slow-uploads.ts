/**
 * The production server (`node build/server/serve.js`) under a flood of slow, unsigned uploads to
 * /webhooks: no secret needed, each upload declares a 2 MiB body and trickles it in.
 *
 *   npx tsx bench/slow-uploads.ts [--uploads 150] [--seconds 20] [--chunk-kib 16] [--every-ms 250]
 *
 * Prints the server's RSS before the flood, its peak RSS during it (sampled, and the kernel's
 * VmHWM), and how the uploads were answered (503: the global body budget was full; 408: the
 * body deadline passed; other). Goal: peak ≤ 350 MiB. Linux only (/proc). Needs the production
 * build (`npm run build`). Benchmarks print figures; they never assert.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { appProcessEnv, spawnApp } from "../test/support/processes";
import { mib, printTable, sleep } from "./support";

const GOAL_BYTES = 350 * 1024 * 1024;
const { values } = parseArgs({
  options: {
    uploads: { type: "string", default: "150" },
    seconds: { type: "string", default: "20" },
    "chunk-kib": { type: "string", default: "16" },
    "every-ms": { type: "string", default: "250" },
  },
});
const uploads = Number(values.uploads);
const seconds = Number(values.seconds);
const chunk = Buffer.alloc(Number(values["chunk-kib"]) * 1024, "a");
const everyMs = Number(values["every-ms"]);
const DECLARED = 2 * 1024 * 1024;

function memory(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** One slow sender: headers, then `chunk` every `everyMs` until the declared 2 MiB or an answer. */
function slowUpload(port: number, n: number, answers: Map<string, number>): Socket {
  const socket = connect(port, "127.0.0.1");
  let sent = 0;
  let answered = false;
  const timer = setInterval(() => {
    if (answered || sent >= DECLARED || socket.destroyed) return clearInterval(timer);
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
      "x-shopify-shop-domain: flood.myshopify.com",
      "x-shopify-hmac-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      `x-shopify-webhook-id: flood-${n}`,
      "",
      "",
    ].join("\r\n"),
  );
  return socket;
}

async function main() {
  // A data directory on disk, as in production (an in-memory PGlite holds the whole database in RSS).
  const dataDir = mkdtempSync(path.join(tmpdir(), "ms-slow-uploads-"));
  const app = await spawnApp({ env: appProcessEnv({ dataDir, marketingApiUrl: "http://127.0.0.1:9" }) });
  const pid = app.child.pid!;
  try {
    await sleep(2_000); // start-up settles
    const before = memory(pid);
    const answers = new Map<string, number>();
    const port = Number(new URL(app.url).port);
    const sockets = Array.from({ length: uploads }, (_, i) => slowUpload(port, i, answers));
    let peakSampled = before.rss;
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      peakSampled = Math.max(peakSampled, memory(pid).rss);
      await sleep(100);
    }
    const after = memory(pid);
    for (const s of sockets) s.destroy();
    printTable(
      ["uploads", "RSS before", "peak RSS (sampled)", "peak RSS (VmHWM)", "goal", "answers"],
      [
        [
          String(uploads),
          mib(before.rss),
          mib(peakSampled),
          mib(after.hwm),
          after.hwm <= GOAL_BYTES ? "≤ 350 MiB: met" : "≤ 350 MiB: MISSED",
          [...answers].map(([k, v]) => `${k}: ${v}`).join(", ") || "none",
        ],
      ],
    );
  } finally {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
