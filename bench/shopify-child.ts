/**
 * The fake Shopify Admin and a generated store in a child process, for benches that import
 * history (bench:backfill, bench:fairness --scenario import) and for the shops' Admin API reads
 * while webhooks are planned (bench:delivery, bench:fairness): the store's JSONL exports are built
 * and served there, so their CPU and memory are not counted as the app's. Its store holds every
 * customer a bench sends as the shop's own, subscribed: the consent-origin read confirms each.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TEST_API_KEY, TEST_API_SECRET } from "../test/support/env";
import { endChild, nextMessage, tsxExecArgv } from "./support";

const SELF = fileURLToPath(import.meta.url);
/** Each fake export takes this long by the clock, as Shopify's take time (theirs: minutes for large stores). */
const EXPORT_MS = 3_000;

export interface StoreSize {
  customers: number;
  orders: number;
  products: number;
}

export interface ShopifyChild {
  url: string;
  /** Replaces the store (the fake Admin answers from the newest one). */
  store(size: StoreSize): Promise<void>;
  /** An expiring offline token pair as token exchange hands the app one (the app stores it as its session). */
  token(shop: string): Promise<{ access_token: string; scope: string; expires_in: number; refresh_token: string; refresh_token_expires_in: number }>;
  close(): Promise<void>;
}

/**
 * Starts the child and sends this process's Admin API calls to it. The app reads the address when
 * it first calls Shopify, once per process: start one child before any bench run does, and keep it.
 * `latencyMs`: each GraphQL answer that much later, as Shopify a network away answers.
 */
export async function startShopifyChild(options: { latencyMs?: number } = {}): Promise<ShopifyChild> {
  const child: ChildProcess = fork(SELF, ["--shopify-child", `--latency-ms=${options.latencyMs ?? 0}`], {
    execArgv: tsxExecArgv(),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await nextMessage<{ type: "ready"; url: string }>(child, "ready");
  process.env.SHOPIFY_ADMIN_API_ORIGIN = ready.url;
  const { resetConfigForTests } = await import("../app/config.server");
  resetConfigForTests();
  let seq = 0;
  const ask = async <T,>(type: string, extra: Record<string, unknown>): Promise<T> => {
    const id = ++seq;
    const answer = nextMessage<{ type: string; value: T }>(child, `${type}:${id}`, 600_000);
    child.send({ type, id, ...extra });
    return (await answer).value;
  };
  return {
    url: ready.url,
    store: (size) => ask("store", { size }),
    token: (shop) => ask("token", { shop }),
    close: () => endChild(child),
  };
}

async function serveShopify(): Promise<void> {
  const { startFakeAdmin } = await import("../dev/shopify/fake-admin");
  const { startFakeStore } = await import("../dev/shopify/fake-store");
  const latencyMs = Number(process.argv.find((a) => a.startsWith("--latency-ms="))?.split("=")[1] ?? 0);
  const admin = await startFakeAdmin({ apiKey: TEST_API_KEY, apiSecret: TEST_API_SECRET, latencyMs });
  // nodes(ids:) as app/compliance/consent-origin.server.ts asks it: every customer the shop's own, subscribed.
  admin.onGraphql("ConsentOrigin", (_query, variables) => ({
    nodes: (variables.ids as string[]).map((id) => ({ id, defaultEmailAddress: { marketingState: "SUBSCRIBED" } })),
  }));
  let store: Awaited<ReturnType<typeof startFakeStore>> | undefined;
  process.on("message", (m: { type: string; id: number; shop?: string; size?: StoreSize }) => {
    const reply = (value: unknown) => process.send!({ type: `${m.type}:${m.id}`, value });
    if (m.type === "store") {
      void (async () => {
        await store?.close();
        store = await startFakeStore(admin, m.size!, { exportMs: EXPORT_MS });
        reply(null);
      })();
    } else if (m.type === "token") {
      reply(admin.issueOfflineToken(m.shop!));
    } else if (m.type === "stop") {
      void Promise.all([store?.close(), admin.close()]).then(() => process.disconnect());
    }
  });
  process.send!({ type: "ready", url: admin.url });
}

if (process.argv[1] === SELF && process.argv.includes("--shopify-child")) {
  process.on("disconnect", () => setTimeout(() => process.exit(0), 2_000).unref());
  await serveShopify();
}
