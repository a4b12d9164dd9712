/**
 * Where a V8 CPU profile's busy time goes, by part of the pipeline:
 *
 *   npx tsx bench/cpu-profile-summary.ts DIR/*.cpuprofile
 *
 * Reads the profiles `bench:delivery -- --cpu-prof DIR` writes. Each sample goes to the first
 * category, in the order below, that any frame of its stack belongs to (a socket write under the
 * pg driver is the driver's, PGlite's WebAssembly is PGlite's); idle samples are left out. The
 * profiler samples wall time, so on a loaded machine a sample can include time the thread waited
 * for a core: read shares, and CPU per call from the bench itself.
 */
import { readFileSync } from "node:fs";

interface Frame {
  functionName: string;
  url: string;
}
interface Profile {
  nodes: { id: number; callFrame: Frame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

const CATEGORIES: [string, (f: Frame) => boolean][] = [
  ["PGlite (Postgres in WebAssembly, its protocol)", (f) => /execProtocolRaw/.test(f.functionName) || /@electric-sql\/pglite/.test(f.url)],
  ["pg driver, Prisma", (f) => /node_modules\/(pg|pg-pool|pg-protocol|@prisma|pglite-prisma-adapter)\//.test(f.url) || /app\/generated\//.test(f.url)],
  ["HTTP client (undici)", (f) => /node_modules\/undici\//.test(f.url)],
  ["zod", (f) => /node_modules\/zod\//.test(f.url)],
  ["JSON parse, stringify", (f) => (/^(parse|stringify)$/.test(f.functionName) && f.url === "") || /lossless-json/.test(f.url)],
  ["logging", (f) => /pino|logger\.server/.test(f.url)],
  ["metrics", (f) => /prom-client|metrics/.test(f.url)],
  ["claim statements' text (claim.server)", (f) => /pipeline\/claim\.server/.test(f.url)],
  ["planning (parse, map, decide)", (f) => /app\/sync\/|pipeline\/(plan\.server|decide)/.test(f.url)],
  ["delivery (lane, client, results)", (f) => /pipeline\/deliver\.server|services\/marketing\//.test(f.url)],
  ["other app code", (f) => /\/app\//.test(f.url)],
];

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map<number, number>();
  profile.samples.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const shares = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of time) {
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === "(idle)") continue;
    busy += us;
    const stack: Frame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur)!.callFrame);
    const label =
      leaf === "(garbage collector)" ? "garbage collector" : (CATEGORIES.find(([, test]) => stack.some(test))?.[0] ?? "Node internals, event loop");
    shares.set(label, (shares.get(label) ?? 0) + us);
  }
  console.log(`\n${file}: ${(busy / 1000).toFixed(0)} ms busy`);
  for (const [label, us] of [...shares].sort((a, b) => b[1] - a[1])) console.log(`${((100 * us) / busy).toFixed(1).padStart(5)} %  ${label}`);
}
