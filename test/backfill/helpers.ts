import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import type { PipelineHarness } from "../support/pipeline";
import { CHROME_UA, mintSessionToken } from "../support/session-token";

let shopSeq = 0;
export const newShop = (prefix: string) => `${prefix}-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

/** Installs the app (token exchange: the offline token Admin API calls need) and connects the shop. */
export async function install(h: PipelineHarness, shop: string): Promise<void> {
  const host = Buffer.from(`admin.shopify.com/store/${shop.split(".")[0]}`).toString("base64url");
  const res = await fetch(`${h.app.url}/app?embedded=1&shop=${shop}&host=${host}&id_token=${await mintSessionToken({ shop })}`, {
    headers: { "user-agent": CHROME_UA },
  });
  expect(res.status).toBe(200);
  await h.connect(shop);
}

/** Polls until `check` gives a value (retries wait in the queue, so idle workers are not enough). */
export async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** "gid://shopify/Order/123" → "123". */
export const numeric = (gid: unknown) => String(gid).split("/").pop()!;
