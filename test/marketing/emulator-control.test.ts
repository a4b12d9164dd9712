/** The emulator's own HTTP control surface (/__emulator/*), used by other suites and by hand. */
import { describe, expect, it } from "vitest";
import { failure, useEmulator } from "./support";

const h = useEmulator();
const ctl = async (path: string, init?: { method?: string; body?: unknown }) => {
  const res = await fetch(`${h.emu.url}/__emulator${path}`, {
    method: init?.method ?? "GET",
    headers: { "Content-Type": "application/json" },
    body: init?.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe("/__emulator control routes", () => {
  it("lists recorded requests filtered by path prefix and method, with the key redacted", async () => {
    const c = h.client();
    await c.people.upsert({ email: "ctl@shopper.example", source: "shopify" });
    await c.account.get();
    const all = (await ctl("/requests")).json.data as { path: string; headers: Record<string, string> }[];
    expect(all.map((r) => r.path)).toEqual(["/api/people", "/api/account"]);
    expect(JSON.stringify(all)).not.toContain(h.emu.apiKey);
    const posts = (await ctl("/requests?path=/api/people&method=post")).json.data as unknown[];
    expect(posts).toHaveLength(1);
  });

  it("sets faults over HTTP, reports state, and resets", async () => {
    expect((await ctl("/faults", { method: "POST", body: { serverErrors: 1 } })).status).toBe(200);
    const e = await failure(h.client({ retries: 0 }).account.get());
    expect(e.kind).toBe("server_error");
    await h.client().people.upsert({ email: "s@shopper.example", source: "shopify" });
    const state = (await ctl("/state")).json;
    expect((state.people as unknown[]).length).toBe(1);
    expect((state.sentEmails as unknown[]).length).toBe(1);
    await ctl("/reset", { method: "POST" });
    expect(((await ctl("/state")).json.people as unknown[]).length).toBe(0);
    expect(await h.client().authenticated()).toBe(true); // default key survives a reset
  });

  it("answers a share of requests late (a latency tail, for bench:delivery --service-tail)", async () => {
    const timed = async () => {
      const t0 = performance.now();
      await h.client().account.get();
      return performance.now() - t0;
    };
    h.emu.setFaults({ slow: { share: 1, ms: 300 } });
    expect(await timed()).toBeGreaterThanOrEqual(290);
    h.emu.setFaults({ slow: { share: 0, ms: 300 } });
    expect(await timed()).toBeLessThan(290);
    h.emu.clearFaults();
  });

  it("creates accounts over HTTP", async () => {
    const { json } = await ctl("/accounts", { method: "POST", body: { doubleOptIn: false, company: "Other" } });
    const acc = await h.client({ apiKey: json.apiKey as string }).account.get();
    expect(acc).toMatchObject({ id: String(json.accountId), company: "Other" });
  });
});
