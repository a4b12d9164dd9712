import { describe, expect, it } from "vitest";
import { failure, useEmulator } from "./support";

const h = useEmulator();

describe("GET /api/templates", () => {
  it("lists the account's own plus published shared templates; iterate reaches the last page", async () => {
    const c = h.client();
    const page = await c.templates.list({ perPage: 2 });
    expect(page.meta).toMatchObject({ total: 5, lastPage: 3, perPage: 2, path: "/api/templates" });
    expect(page.data[0]).toMatchObject({ name: "Welcome email", previewUrl: expect.stringMatching(/^\/templates\/.+\/preview$/) });
    const names: string[] = [];
    for await (const t of c.templates.iterate({ perPage: 2 })) names.push(t.name);
    expect(names).toHaveLength(5);
    expect(names).not.toContain("Shared: Draft (unpublished)");
    expect(names.filter((n) => n.startsWith("Shared:"))).toHaveLength(3);
    expect(h.emu.requests.filter((r) => r.path === "/api/templates").length).toBe(1 + 3);
  });

  it("another account does not see this account's own templates", async () => {
    const { apiKey } = h.emu.createAccount({});
    const mine = (await h.client().templates.list()).data.map((t) => t.id);
    const theirs = (await h.client({ apiKey }).templates.list()).data.map((t) => t.id);
    expect(mine.slice(0, 2)).not.toEqual(theirs.slice(0, 2));
    expect(mine.slice(2)).toEqual(theirs.slice(2)); // shared ones
  });

  it("perPage above 100 fails locally naming perPage", async () => {
    const e = await failure(h.client().templates.list({ perPage: 101 }));
    expect(e).toMatchObject({ kind: "validation", local: true });
    expect(e.errors).toHaveProperty("perPage");
  });
});

describe("GET /api/account, /api/authenticated", () => {
  it("returns the account with its id as a decimal string", async () => {
    const a = await h.client().account.get();
    expect(h.emu.requests.at(-1)?.responseBody).toMatchObject({ data: { id: String(h.emu.defaultAccountId) } });
    expect(a).toMatchObject({ id: String(h.emu.defaultAccountId), company: "Default Shop", status: "active", timezone: "UTC", logoUrl: "" });
    expect(a.plan?.marketing).toBe("Growth");
  });

  it("authenticated() is true for a valid key and false for an unknown one", async () => {
    expect(await h.client().authenticated()).toBe(true);
    expect(await h.client({ apiKey: "mk_live_wrong" }).authenticated()).toBe(false);
  });

  it("any endpoint with a bad key → unauthenticated (message Unauthenticated), not retried", async () => {
    const c = h.client({ apiKey: "mk_live_wrong" });
    const e = await failure(c.people.list());
    expect(e).toMatchObject({ kind: "unauthenticated", status: 401, retryable: false, message: "Unauthenticated" });
    expect(h.emu.requests).toHaveLength(1);
    expect(h.emu.requests[0]!.headers.authorization).toBe("Bearer ***rong");
  });
});

describe("GET /api/account/website-tracker/{mode?}", () => {
  it("defaults to modern; legacy and compat differ; the snippet carries the account id", async () => {
    const c = h.client();
    const modern = await c.websiteTracker();
    expect(h.emu.requests.at(-1)?.path).toBe("/api/account/website-tracker");
    expect(modern.mode).toBe("modern");
    expect(modern.snippet).toContain(`data-account="${h.emu.defaultAccountId}"`);
    expect(modern.snippet).toContain('type="module"');
    expect(modern.lastEventTrackedAt).toBeNull();
    const legacy = await c.websiteTracker("legacy");
    expect(legacy.snippet).toContain("legacy.js");
    expect(legacy.snippet).not.toContain('type="module"');
    const compat = await c.websiteTracker("compat");
    expect(compat.snippet).toContain("nomodule");
    expect(h.emu.requests.at(-1)?.path).toBe("/api/account/website-tracker/compat");
  });

  it("lastEventTrackedAt follows tracked events", async () => {
    const c = h.client();
    await c.events.custom({ email: "t@shopper.example", source: "shopify", eventName: "pageView" });
    const t = await c.websiteTracker();
    expect(t.lastEventTrackedAt).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it("an unknown mode fails locally", async () => {
    const e = await failure(h.client().websiteTracker("fancy" as never));
    expect(e).toMatchObject({ kind: "validation", local: true });
    expect(h.emu.requests).toHaveLength(0);
  });
});
