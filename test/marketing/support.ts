/** Shared setup for the marketing contract tests: a real emulator over HTTP and a client bound to it. */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { createMarketingClient, type MarketingClientOptions, type RequestLogInfo } from "../../app/services/marketing/client.server";
import { isMarketingServiceError, type MarketingServiceError } from "../../app/services/marketing/marketing-error";
import { startEmulator, type Emulator } from "../../dev/emulator/server";

export interface Harness {
  emu: Emulator;
  logs: RequestLogInfo[];
  client: (overrides?: Partial<MarketingClientOptions>) => ReturnType<typeof createMarketingClient>;
}

/** Starts an emulator on port 0 for the file and resets it before each test. */
export function useEmulator(): Harness {
  const h = { logs: [] as RequestLogInfo[] } as Harness;
  beforeAll(async () => {
    h.emu = await startEmulator({ port: 0 });
  });
  afterAll(async () => {
    await h.emu?.close();
  });
  beforeEach(() => {
    h.emu.reset();
    h.logs.length = 0;
  });
  h.client = (overrides = {}) =>
    createMarketingClient({
      baseUrl: h.emu.url,
      apiKey: h.emu.apiKey,
      retryBaseDelayMs: 5,
      onRequest: (i) => h.logs.push(i),
      ...overrides,
    });
  return h;
}

/** Awaits a promise that must reject with a MarketingServiceError and returns it. */
export async function failure(p: Promise<unknown>): Promise<MarketingServiceError> {
  try {
    await p;
  } catch (e) {
    if (isMarketingServiceError(e)) return e;
    throw new Error(`expected MarketingServiceError, got ${String(e)}`, { cause: e });
  }
  throw new Error("expected the call to fail, it succeeded");
}

let n = 0;
/** Unique email per call (plus sign on purpose: it must survive path encoding). */
export const uniqueEmail = (tag = "p") => `${tag}+${Date.now().toString(36)}${n++}@shopper.example`;
