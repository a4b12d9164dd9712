import { afterAll, afterEach, beforeAll } from "vitest";
import { describeEachDatabase, type DatabaseKind } from "./database";
import { startPipelineHarness, type PipelineHarness } from "./pipeline";

export interface OverHttp {
  /** The harness of the running suite (app server, emulator, fake Admin); usable inside tests and hooks. */
  h: PipelineHarness;
  /** The connected shop (`${shopPrefix}-${database}.myshopify.com`), when `shopPrefix` was given. */
  shop: string;
  database: DatabaseKind;
}

/**
 * The set-up end-to-end suites repeat, once per database: the app server over HTTP with the
 * marketing-service emulator and the fake Shopify Admin, a shop connected, one worker running.
 * `h` forwards to the harness started in `beforeAll`, so test bodies read as with their own `h`.
 */
export function describeOverHttp(
  name: string,
  options: { shopPrefix?: string; workers?: boolean; resetAfterEach?: boolean },
  suite: (t: OverHttp) => void,
): void {
  describeEachDatabase(name, (database) => {
    let harness: PipelineHarness | undefined;
    const shop = options.shopPrefix ? `${options.shopPrefix}-${database}.myshopify.com` : "";
    beforeAll(async () => {
      harness = await startPipelineHarness({ database });
      if (shop) await harness.connect(shop);
      if (options.workers !== false) harness.startWorkers();
    }, 180_000); // a build, a migration and three servers: generous for a busy machine
    afterAll(() => harness?.close());
    if (options.resetAfterEach) afterEach(() => harness?.reset());
    const h = new Proxy({} as PipelineHarness, {
      get(_, key) {
        if (!harness) throw new Error(`${name}: the harness is used before beforeAll started it`);
        return harness[key as keyof PipelineHarness];
      },
    });
    suite({ h, shop, database });
  });
}
