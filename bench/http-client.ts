/**
 * What one service call costs this process, by transport: the same order/created event POSTed to
 * the emulator (own process) with `fetch()`, with undici's `request()`, and through the marketing
 * client (which validates the request and the answer, and sends with `request()`).
 *
 *   npx tsx bench/http-client.ts [--calls 6000] [--concurrency 64] [--rounds 2]
 *
 * Prints calls/s and, steadier on a shared machine, this process's CPU time per call.
 */
import { parseArgs } from "node:util";
import { request } from "undici";
import { createMarketingClient } from "../app/services/marketing/client.server";
import { fmt, printTable, startEmulatorProcess } from "./support";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "6000" },
    concurrency: { type: "string", default: "64" },
    rounds: { type: "string", default: "2" },
  },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

const emulator = await startEmulatorProcess();
const url = `${emulator.url}/api/events/order/created`;
const headers = { authorization: `Bearer ${emulator.apiKey}`, accept: "application/json", "content-type": "application/json" };
let seq = 0;
const event = () => ({
  email: `bench${++seq}@example.com`,
  source: "shopify",
  id: String(seq),
  publicId: `#${seq}`,
  currency: "USD",
  total: 42.5,
  products: [{ id: "1", name: "Mug", price: 21.25, quantity: 2 }],
});

const client = createMarketingClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, retries: 0 });
const transports: [string, () => Promise<unknown>][] = [
  [
    "fetch()",
    async () => {
      const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(event()), signal: AbortSignal.timeout(10_000) });
      return JSON.parse(await res.text());
    },
  ],
  [
    "undici request()",
    async () => {
      const res = await request(url, { method: "POST", headers, body: JSON.stringify(event()), signal: AbortSignal.timeout(10_000) });
      return JSON.parse(await res.body.text());
    },
  ],
  ["marketing client (validates, request())", () => client.events.order("created", event())],
];

const rows: (string | number)[][] = [];
for (let round = 1; round <= rounds; round++) {
  for (const [name, send] of transports) {
    await emulator.clear();
    let next = 0;
    let failed = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < calls) await send().catch(() => failed++);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuMsPerCall = (used.user + used.system) / 1000 / calls;
    rows.push([round, name, calls, fmt(seconds, 2), Math.round(calls / seconds), fmt(cpuMsPerCall, 3), failed]);
  }
}
await emulator.close();

console.log(`http-client: ${calls} order/created events per run, ${concurrency} in flight, emulator in its own process\n`);
printTable(["round", "transport", "calls", "seconds", "calls/s", "CPU ms/call (this process)", "failed"], rows);
