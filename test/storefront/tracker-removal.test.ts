// Disconnecting removes the tracker from the storefront (the app-data metafield). When Shopify fails
// or refuses that call, the merchant is told the tracker still loads, and the worker retries the
// removal until it is gone: the storefront never keeps the old account's tracker for good.
import { afterAll, beforeAll, expect, it } from "vitest";
import { refreshDueTrackers } from "~/storefront/tracker.server";
import { storefrontAdmin } from "../../dev/shopify/fake-storefront";
import { actionData, openPage, postForm } from "../admin/support";
import { describeEachDatabase } from "../support/database";
import { startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { renderEmbed } from "./render";

interface DisconnectResult {
  ok: boolean;
  toast: string;
  notice?: { title: string; body: string };
}

describeEachDatabase("removing the tracker at disconnect", (database) => {
  const SHOP = `tracker-removal-${database}.myshopify.com`;
  let h: PipelineHarness;
  /** How the next metafieldsDelete calls go wrong, in order; then they work. */
  let faults: ("throttled" | "user_error")[] = [];

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    expect((await openPage(h.app.url, SHOP, "/app")).status).toBe(200);
    h.app.admin.onGraphql("metafieldsDelete(", (_q, variables, shop) => {
      const fault = faults.shift();
      if (fault === "throttled") throw new Error("Throttled");
      if (fault === "user_error") return { metafieldsDelete: { deletedMetafields: null, userErrors: [{ field: ["metafields"], message: "Internal error" }] } };
      for (const m of (variables.metafields ?? []) as { namespace: string; key: string }[]) storefrontAdmin(h.app.admin).metafields(shop).delete(`${m.namespace}.${m.key}`);
      return { metafieldsDelete: { deletedMetafields: variables.metafields, userErrors: [] } };
    });
  });
  afterAll(() => h.close());

  const metafield = () => storefrontAdmin(h.app.admin).metafields(SHOP).get("marketing_sync.tracker");
  const connect = async () => {
    expect(await actionData(await postForm(h.app.url, SHOP, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }))).toMatchObject({ ok: true });
    expect(await renderEmbed(metafield())).toContain('id="marketing-sync-tracker"');
  };
  const disconnect = async () => actionData<DisconnectResult>(await postForm(h.app.url, SHOP, "/app/connection", { intent: "disconnect" }));
  /** The worker's storefront pass once the retry is due. */
  const workerPassWhenDue = async () => {
    await h.app.db.prisma.storefrontState.updateMany({ where: { shop: SHOP }, data: { nextSyncAt: new Date(Date.now() - 1000) } });
    return refreshDueTrackers("worker-a");
  };

  it("when Shopify answers, the tracker is gone at once and nothing more is said", async () => {
    await connect();
    const result = await disconnect();
    expect(result).toMatchObject({ ok: true, toast: "Disconnected: nothing more is sent to the marketing service" });
    expect(result.notice).toBeUndefined();
    expect(await renderEmbed(metafield())).not.toContain('id="marketing-sync-tracker"');
    expect(await workerPassWhenDue()).toBe(0); // nothing left for the worker
  });

  it.each(["throttled", "user_error"] as const)("when Shopify fails the removal (%s), the merchant is told and the worker removes it later", async (fault) => {
    await connect();
    faults = [fault, fault]; // the disconnect's call and the worker's first retry
    const result = await disconnect();
    expect(result).toMatchObject({ ok: true, toast: "Disconnected: nothing more is sent to the marketing service" });
    expect(result.notice?.title).toBe("Your online store still loads the tracker, for now");
    expect(result.notice?.body).toContain("keeps trying");
    expect(await renderEmbed(metafield())).toContain('id="marketing-sync-tracker"');

    // Not before the retry is due.
    expect(await refreshDueTrackers("worker-a")).toBe(0);
    // The retry fails too: still pending.
    expect(await workerPassWhenDue()).toBe(1);
    expect(await renderEmbed(metafield())).toContain('id="marketing-sync-tracker"');
    // Shopify answers again: the storefront no longer loads the old account's tracker.
    expect(await workerPassWhenDue()).toBe(1);
    expect(await renderEmbed(metafield())).not.toContain('id="marketing-sync-tracker"');
    expect(metafield()).toBeUndefined();
    expect(await workerPassWhenDue()).toBe(0);
  });

  it("reconnecting before the retry publishes the new connection's tracker and drops the pending removal", async () => {
    await connect();
    faults = ["throttled"];
    expect((await disconnect()).notice).toBeDefined();
    await connect();
    expect(await workerPassWhenDue()).toBe(1); // the connected shop's refresh, not a removal
    expect(await renderEmbed(metafield())).toContain('id="marketing-sync-tracker"');
    expect(faults).toEqual([]);
    const deletes = h.app.admin.calls.filter((c) => JSON.stringify(c.body).includes("metafieldsDelete(")).length;
    await workerPassWhenDue();
    expect(h.app.admin.calls.filter((c) => JSON.stringify(c.body).includes("metafieldsDelete(")).length).toBe(deletes);
  });
});
