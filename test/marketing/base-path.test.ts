/**
 * Issue 45 item 10: a service base URL with a path (MARKETING_API_URL=http://host/v1). The client
 * recognises §3.2's refusal by the operation it made, not by the URL path; links that carry the
 * prefix are not followed with it twice. Over HTTP against the emulator mounted under /v1.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectShop } from "~/backfill/connect.server";
import { createMarketingClient } from "../../app/services/marketing/client.server";
import { isPermanentRefusalForPerson } from "../../app/services/marketing/marketing-error";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { failure, uniqueEmail } from "./support";

describe("a base URL with a path", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, basePath: "/v1" });
  });
  afterAll(() => emu.close());

  it("the emulator serves the API under the prefix only", async () => {
    expect(new URL(emu.url).pathname).toBe("/v1");
    const bare = await fetch(`${new URL(emu.url).origin}/api/authenticated`, { headers: { Authorization: `Bearer ${emu.apiKey}` } });
    expect(bare.status).toBe(404);
    expect(await createMarketingClient({ baseUrl: emu.url, apiKey: emu.apiKey }).authenticated()).toBe(true);
  });

  it("§3.2 `active` on a blocked person is recognised as the permanent refusal, whatever the prefix", async () => {
    const c = createMarketingClient({ baseUrl: `${emu.url}/`, apiKey: emu.apiKey, retries: 0 });
    const email = uniqueEmail("blocked");
    await c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    emu.markBlocked(email);
    const e = await failure(c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" }));
    expect(e).toMatchObject({ kind: "validation", status: 422, operation: "people.upsert", path: "/v1/api/people" });
    expect(isPermanentRefusalForPerson(e)).toBe(true);
  });

  it("a refusal of another operation on `status` is not taken for it (a campaign update of a sent campaign)", async () => {
    const c = createMarketingClient({ baseUrl: emu.url, apiKey: emu.apiKey, retries: 0 });
    const campaign = await c.campaigns.create({ name: "Sent" });
    emu.advanceCampaign(campaign.id, "sent");
    const e = await failure(c.campaigns.update(campaign.id, { name: "Again" }));
    expect(e.errors).toHaveProperty(["status"]);
    expect(isPermanentRefusalForPerson(e)).toBe(false);
  });

  it("follows list links under the prefix, relative or absolute, without doubling it", async () => {
    const c = createMarketingClient({ baseUrl: emu.url, apiKey: emu.apiKey });
    for (let i = 0; i < 3; i++) await c.people.upsert({ email: uniqueEmail("page"), source: "shopify" });
    const all: string[] = [];
    for await (const p of c.people.iterate({ email: "page+", perPage: 1 })) all.push(p.email);
    expect(all).toHaveLength(3);

    // A service that writes its mount point into links (absolute or relative): the prefix is not doubled.
    const seen: string[] = [];
    const server: Server = createServer((req, res) => {
      seen.push(req.url ?? "");
      const page = Number(new URL(req.url ?? "/", "http://x").searchParams.get("page") ?? 1);
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const next = page === 1 ? `${origin}/v1/api/templates?page=2` : page === 2 ? "/v1/api/templates?page=3" : null;
      const item = { id: `t${page}`, name: `T${page}`, description: "", previewUrl: "/p", createdAt: "2026-11-28T00:00:00+00:00" };
      res.writeHead(req.url?.startsWith("/v1/api/templates") ? 200 : 404, { "Content-Type": "application/json" });
      const meta = { currentPage: page, lastPage: 3, from: page, to: page, total: 3, perPage: 1, path: "/api/templates" };
      res.end(JSON.stringify({ data: [item], meta, links: { next, prev: null, first: "/api/templates", last: "/api/templates" } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      const t = createMarketingClient({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "k", retries: 0 });
      const ids: string[] = [];
      for await (const x of t.templates.iterate()) ids.push(x.id);
      expect(ids).toEqual(["t1", "t2", "t3"]);
      expect(seen).toEqual(["/v1/api/templates", "/v1/api/templates?page=2", "/v1/api/templates?page=3"]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describeEachDatabase("the pipeline with a base URL that has a path", (database) => {
  let h: PipelineHarness;
  let emu: Emulator;
  let seq = 0;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    emu = await startEmulator({ port: 0, basePath: "/v1" });
  });
  afterAll(async () => {
    await h.close();
    await emu.close();
  });
  afterEach(() => h.reset());

  it("records the refusal for a blocked person instead of dead-lettering it", async () => {
    const shop = `base-path-${++seq}-${database}.myshopify.com`;
    await connectShop(shop, { apiKey: emu.apiKey, baseUrl: emu.url, importHistory: false });
    // §3.2: `active` cannot be set on a blocked person (trusting Shopify's opt-in sends `active`)
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "trust_shopify" } } });
    const body = customerBody({ consent: "unsubscribed" });
    await h.send({ topic: "customers/create", shop, body });
    h.startWorkers();
    await h.settle();
    emu.markBlocked(body.email as string);
    await h.send({
      topic: "customers/update",
      shop,
      body: { ...body, updated_at: "2026-05-01T00:00:00Z", email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: "2026-05-01T00:00:00Z" } },
    });
    await h.settle();
    const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop }, orderBy: { id: "asc" } });
    expect(calls.filter((c) => c.status === "dead")).toEqual([]);
    const refused = calls.filter((c) => c.status === "refused");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.lastError).toMatch(/blocked/);
    expect(emu.requests.some((r) => r.path === "/api/people" && r.status === 422)).toBe(true);
  });
});
