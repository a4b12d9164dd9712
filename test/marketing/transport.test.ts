import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createMarketingClient } from "../../app/services/marketing/client.server";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

describe("retries: only where safe", () => {
  it("GET is retried on 5xx until it succeeds, with one log line per attempt", async () => {
    h.emu.setFaults({ serverErrors: 2 });
    const page = await h.client().people.list();
    expect(page.data).toEqual([]);
    expect(h.emu.requests.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(h.logs.map((l) => [l.attempt, l.error ?? l.status, l.willRetry ?? false])).toEqual([
      [1, "server_error", true],
      [2, "server_error", true],
      [3, 200, false],
    ]);
  });

  it("GET gives up after `retries` extra attempts with server_error", async () => {
    h.emu.setFaults({ serverErrors: { count: 10, status: 502 } });
    const e = await failure(h.client({ retries: 2 }).account.get());
    expect(e).toMatchObject({ kind: "server_error", status: 502, retryable: true });
    expect(h.emu.requests).toHaveLength(3);
  });

  it("retries: 0 disables retrying", async () => {
    h.emu.setFaults({ serverErrors: 1 });
    await failure(h.client({ retries: 0 }).account.get());
    expect(h.emu.requests).toHaveLength(1);
  });

  it("event posts are retried on 5xx (at-least-once)", async () => {
    const email = uniqueEmail();
    await h.client().people.upsert({ email, source: "shopify" });
    h.emu.setFaults({ serverErrors: 1, pathPrefix: "/api/events" });
    const r = await h.client().events.order("created", { email, source: "shopify", id: 1 });
    expect(r.success).toBe(true);
    expect(h.emu.requests.filter((x) => x.path === "/api/events/order/created").map((x) => x.status)).toEqual([500, 200]);
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["order_created"]);
  });

  it("people upsert is NOT retried on 5xx", async () => {
    h.emu.setFaults({ serverErrors: 1 });
    const email = uniqueEmail();
    const e = await failure(h.client().people.upsert({ email, source: "shopify" }));
    expect(e).toMatchObject({ kind: "server_error", status: 500, retryable: true });
    expect(h.emu.requests).toHaveLength(1);
    expect(h.emu.person(email)).toBeUndefined();
  });

  it("people delete and campaign mutations are NOT retried on 5xx", async () => {
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify" });
    const camp = await c.campaigns.create({ name: "x" });
    h.emu.requests.length = 0;
    h.emu.setFaults({ serverErrors: 3 });
    await failure(c.people.delete(email));
    await failure(c.campaigns.update(camp.id, { name: "y" }));
    await failure(c.campaigns.create({ name: "z" }));
    expect(h.emu.requests.map((r) => r.method)).toEqual(["DELETE", "PUT", "POST"]);
  });

  it("429 is retried for any request and Retry-After (seconds) is honoured", async () => {
    h.emu.setFaults({ burst429: { count: 1, retryAfterSeconds: 1 } });
    const email = uniqueEmail();
    const started = Date.now();
    const p = await h.client().people.upsert({ email, source: "shopify" });
    expect(p.email).toBe(email);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const [first, second] = h.emu.requests;
    expect([first!.status, second!.status]).toEqual([429, 201]);
    expect(Date.parse(second!.at) - Date.parse(first!.at)).toBeGreaterThanOrEqual(990);
  });

  it("Retry-After as an HTTP date is honoured (waits up to that date)", async () => {
    const waits: number[] = [];
    h.emu.setFaults({ burst429: { count: 2, retryAfterSeconds: 3, retryAfterHttpDate: true } });
    await h.client({ sleep: async (ms) => void waits.push(ms) }).account.get();
    expect(waits).toHaveLength(2);
    for (const w of waits) {
      expect(w).toBeGreaterThan(1000); // HTTP dates have whole seconds
      expect(w).toBeLessThanOrEqual(3000);
    }
  });

  it("a Retry-After beyond the in-process cap is not waited for: rate_limited with retryAfterMs", async () => {
    h.emu.setFaults({ burst429: { count: 1, retryAfterSeconds: 120 } });
    const e = await failure(h.client().account.get());
    expect(e).toMatchObject({ kind: "rate_limited", status: 429, retryAfterMs: 120_000, retryable: true });
    expect(h.emu.requests).toHaveLength(1);
  });

  it("backoff between 5xx retries uses the injected sleep (full jitter within the cap)", async () => {
    const waits: number[] = [];
    h.emu.setFaults({ serverErrors: 3 });
    await h.client({ sleep: async (ms) => void waits.push(ms), retryBaseDelayMs: 100 }).templates.list();
    expect(waits).toHaveLength(3);
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThanOrEqual(100 * 2 ** i);
    });
  });
});

describe("timeouts and dropped connections", () => {
  it("a stalled service gives `timeout` within the configured timeout", async () => {
    h.emu.setFaults({ stall: true });
    const started = Date.now();
    const e = await failure(h.client({ timeoutMs: 300, retries: 0 }).account.get());
    const elapsed = Date.now() - started;
    expect(e).toMatchObject({ kind: "timeout", status: 0, retryable: true });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2000);
  });

  it("GET is retried after a timeout; upsert is not", async () => {
    h.emu.setFaults({ stallMs: 400 });
    const c = h.client({ timeoutMs: 100, retries: 2 });
    expect((await failure(c.people.list())).kind).toBe("timeout");
    expect(h.emu.requests.filter((r) => r.method === "GET")).toHaveLength(3);
    h.emu.requests.length = 0;
    const email = uniqueEmail();
    expect((await failure(c.people.upsert({ email, source: "shopify" }))).kind).toBe("timeout");
    // the service still applied it: exactly why an upsert is not blindly repeated
    await new Promise((r) => setTimeout(r, 500));
    expect(h.emu.person(email)).toBeDefined();
    expect(h.emu.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("a dropped connection gives `network`; a GET recovers on retry", async () => {
    h.emu.setFaults({ dropConnections: 1 });
    const e = await failure(h.client({ retries: 0 }).account.get());
    expect(e).toMatchObject({ kind: "network", status: 0, retryable: true });

    h.emu.setFaults({ dropConnections: { count: 1 } });
    const a = await h.client().account.get();
    expect(a.id).toBe(String(h.emu.defaultAccountId));
    expect(h.emu.requests.slice(-2).map((r) => r.fault ?? r.status)).toEqual(["drop", 200]);
  });

  it("a dropped connection on upsert is reported, not retried", async () => {
    h.emu.setFaults({ dropConnections: { count: 1 } });
    const e = await failure(h.client().people.upsert({ email: uniqueEmail(), source: "shopify" }));
    expect(e.kind).toBe("network");
    expect(h.emu.requests).toHaveLength(1);
  });
});

describe("logging hook and request shape", () => {
  it("onRequest never sees the key or any body content", async () => {
    const secretValue = "very-private-note-123";
    const c = h.client();
    const email = uniqueEmail();
    await c.people.upsert({ email, source: "shopify", customFields: { note: secretValue } });
    await c.events.custom({ email, source: "shopify", eventName: "x", properties: { secretValue } });
    await failure(c.people.get("missing@shopper.example"));
    await failure(h.client({ apiKey: "mk_live_badkey_zzz" }).account.get());
    const dump = JSON.stringify(h.logs);
    expect(h.logs.length).toBeGreaterThanOrEqual(4);
    expect(dump).not.toContain(h.emu.apiKey);
    expect(dump).not.toContain("mk_live_badkey_zzz");
    expect(dump).not.toContain(secretValue);
    expect(h.logs[0]).toMatchObject({ operation: "people.upsert", method: "POST", path: "/api/people", status: 201, attempt: 1 });
    expect(typeof h.logs[0]!.durationMs).toBe("number");
  });

  it("sends bearer auth, JSON accept/content-type, and URL-encodes path params", async () => {
    const c = h.client();
    const email = "first.last+promo@shopper.example";
    await c.people.upsert({ email, source: "shopify" });
    await c.people.get(email);
    const r = h.emu.requests.at(-1)!;
    expect(r.path).toBe("/api/people/first.last%2Bpromo%40shopper.example");
    expect(r.headers).toMatchObject({ accept: "application/json", "content-type": "application/json", authorization: "Bearer ***0001" });
  });
});

describe("odd responses (a stand-in server that is not the emulator)", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });
  async function serve(
    handler: (path: string) => { status: number; body: string; type?: string; headers?: Record<string, string> },
  ) {
    const seen: string[] = [];
    server = createServer((req, res) => {
      seen.push(req.url ?? "");
      const out = handler(req.url ?? "");
      res.writeHead(out.status, { "Content-Type": out.type ?? "application/json", ...out.headers });
      res.end(out.body);
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
    return { url, seen };
  }

  it("a non-JSON success body gives a clear, non-retryable server_error", async () => {
    const { url } = await serve(() => ({ status: 200, body: "<html>maintenance</html>", type: "text/html" }));
    const e = await failure(createMarketingClient({ baseUrl: url, apiKey: "k", retries: 3 }).account.get());
    expect(e).toMatchObject({ kind: "server_error", status: 200, retryable: false });
    expect(e.message).toMatch(/Expected a JSON body/);
  });

  it("a JSON success of the wrong shape is a non-retryable server_error naming the field", async () => {
    const { url } = await serve(() => ({ status: 201, body: JSON.stringify({ data: { nope: true } }) }));
    const e = await failure(createMarketingClient({ baseUrl: url, apiKey: "k" }).account.get());
    expect(e).toMatchObject({ kind: "server_error", status: 201, retryable: false });
    expect(e.message).toMatch(/data\.(id|email|status)/);
  });

  it("a non-JSON 502 is a retryable server_error", async () => {
    const { url, seen } = await serve(() => ({ status: 502, body: "<html>Bad gateway</html>", type: "text/html" }));
    const e = await failure(createMarketingClient({ baseUrl: url, apiKey: "k", retries: 1, retryBaseDelayMs: 1 }).account.get());
    expect(e).toMatchObject({ kind: "server_error", status: 502, retryable: true });
    expect(seen).toHaveLength(2);
  });

  it("a redirect is not followed, so the key never travels to another address", async () => {
    const { url, seen } = await serve((path) =>
      path === "/api/account"
        ? { status: 302, body: "", headers: { Location: "/stolen/account" } }
        : { status: 200, body: "{}" },
    );
    const e = await failure(createMarketingClient({ baseUrl: url, apiKey: "k", retries: 0 }).account.get());
    expect(e).toMatchObject({ kind: "network", status: 0 });
    expect(e.message).toMatch(/redirect \(HTTP 302\), which is not followed/);
    expect(seen).toEqual(["/api/account"]);
  });

  it("an absolute links.next to another host is followed on the configured base URL only", async () => {
    const item = { id: "t1", name: "T" };
    const { url, seen } = await serve((path) => {
      const page = path.includes("page=2") ? 2 : 1;
      return {
        status: 200,
        body: JSON.stringify({
          data: [item],
          meta: { currentPage: page, lastPage: 2, from: page, to: page, total: 2, perPage: 1, path: "/api/templates" },
          links: { first: "/api/templates?page=1", last: "/api/templates?page=2", prev: null, next: page === 1 ? "http://elsewhere.invalid/api/templates?page=2" : null },
        }),
      };
    });
    const all = [];
    for await (const t of createMarketingClient({ baseUrl: url, apiKey: "k" }).templates.iterate()) all.push(t);
    expect(all).toHaveLength(2);
    expect(seen).toEqual(["/api/templates", "/api/templates?page=2"]);
  });
});
