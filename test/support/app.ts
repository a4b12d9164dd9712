import type { ServerBuild } from "@remix-run/node";
import { loadServerBuild, startHttpServer, type RunningHttpServer } from "~/server/http.server";
import { createTestDatabase, type DatabaseKind, type TestDatabase } from "./database";
import { applyTestEnv, TEST_API_KEY, TEST_API_SECRET } from "./env";
import { startFakeAdmin, type FakeAdmin } from "../../dev/shopify/fake-admin";

export interface TestApp {
  url: string;
  db: TestDatabase;
  admin: FakeAdmin;
  close(): Promise<void>;
}

let build: ServerBuild | undefined;
// One fake Admin per test process: the app reads its address once, with the rest of its config.
let fakeAdmin: Promise<FakeAdmin> | undefined;

/**
 * The production build of the app (made once by test/global-setup.ts) on a real HTTP port,
 * with a fresh database and the fake Shopify Admin. Call it in beforeAll.
 */
export async function startTestApp(
  options: { database?: DatabaseKind; env?: Record<string, string>; fastWebhooks?: boolean } = {},
): Promise<TestApp> {
  fakeAdmin ??= startFakeAdmin({ apiKey: TEST_API_KEY, apiSecret: TEST_API_SECRET });
  const admin = await fakeAdmin;
  admin.calls.length = 0;
  applyTestEnv({ SHOPIFY_ADMIN_API_ORIGIN: admin.url, ...options.env });
  const db = await createTestDatabase(options.database ?? "pglite");
  build ??= await loadServerBuild();
  const http: RunningHttpServer = await startHttpServer({
    build,
    port: 0,
    host: "127.0.0.1",
    fastWebhooks: options.fastWebhooks,
  });
  return {
    url: http.url,
    db,
    admin,
    close: async () => {
      await http.close();
      await db.destroy();
    },
  };
}
