import type { FakeAdmin } from "../shopify/fake-admin";
import { startFakeStore, type FakeStore } from "../shopify/fake-store";

/**
 * The demo shop's history behind the fake Admin: connecting the shop in the demo's admin starts a
 * history import, which exports customers, products and orders with Shopify's Bulk Operations API
 * (JSONL files served over HTTP, each export RUNNING for a moment, polled by the app as on Shopify).
 */
export const DEMO_STORE_SIZE = { customers: 120, products: 12, orders: 60 };

export function startDemoStore(admin: FakeAdmin, seed = 42): Promise<FakeStore> {
  return startFakeStore(admin, DEMO_STORE_SIZE, { seed, exportMs: 1_500 });
}
