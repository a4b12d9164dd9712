import { once } from "node:events";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type * as Runtime from "~/server/runtime.server";
import { createTestDatabase, type DatabaseKind, type TestDatabase } from "./database";
import { applyTestEnv, TEST_API_KEY, TEST_API_SECRET } from "./env";
import { startFakeAdmin, type FakeAdmin } from "../../dev/shopify/fake-admin";

/** The built app's process API (build/server/runtime.js, made by test/global-setup.ts). */
export type BuiltApp = typeof Runtime;

const RUNTIME = path.resolve(import.meta.dirname, "../../build/server/runtime.js");
let runtime: Promise<BuiltApp> | undefined;

/** Loads the production build once per test process. */
export function builtApp(): Promise<BuiltApp> {
  runtime ??= import(/* @vite-ignore */ RUNTIME) as Promise<BuiltApp>;
  return runtime;
}

export interface TestApp {
  url: string;
  db: TestDatabase;
  admin: FakeAdmin;
  close(): Promise<void>;
}

// One fake Admin per test process: the app reads its address once, with the rest of its config.
let fakeAdmin: Promise<FakeAdmin> | undefined;

/**
 * The production build of the app (made once by test/global-setup.ts) on a real HTTP port,
 * with a fresh database and the fake Shopify Admin. Call it in beforeAll.
 *
 * Test-only seam: tests also call app modules from source (workers, connectShop, queries), a
 * second copy of those modules beside the build's. Both copies get the SAME database and a
 * fresh read of the environment here, so they see one state; production never needs this
 * (one build, one copy of each module).
 */
export async function startTestApp(
  options: { database?: DatabaseKind; env?: Record<string, string> } = {},
): Promise<TestApp> {
  fakeAdmin ??= startFakeAdmin({ apiKey: TEST_API_KEY, apiSecret: TEST_API_SECRET });
  const admin = await fakeAdmin;
  admin.reset(); // test files share the process, and so this fake Admin (vitest.config.ts)
  applyTestEnv({ SHOPIFY_ADMIN_API_ORIGIN: admin.url, ...options.env });
  const db = await createTestDatabase(options.database ?? "pglite");
  const app = await builtApp();
  app.resetConfigForTests();
  app.installDatabase(db);
  const http = await app.startHttpServer({
    build: app.serverBuild,
    clientDir: app.CLIENT_DIR,
    port: 0,
    host: "127.0.0.1",
  });
  return {
    url: http.url,
    db,
    admin,
    close: async () => {
      await http.close();
      app.installDatabase(undefined);
      await db.destroy();
    },
  };
}

/**
 * The same built app's Remix handler alone, with no Express route in front: how a server that
 * hosts only the Remix build (the Shopify CLI's dev server) reaches /webhooks, through
 * app/routes/webhooks.tsx. Uses the database of a running startTestApp().
 */
export async function startRemixOnlyServer(): Promise<{ url: string; close(): Promise<void> }> {
  const app = await builtApp();
  const { createRequestHandler } = await import("@remix-run/express");
  const { default: express } = await import("express");
  const server = express()
    .all("*", createRequestHandler({ build: app.serverBuild, mode: "production" }))
    .listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
