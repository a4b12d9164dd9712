import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { connectShop } from "~/backfill/connect.server";
import { ConnectionError, pauseShop, shopContext } from "~/shops/connection.server";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { actionData, loadData, openPage, postForm, routeData, type TokenKind } from "./support";

// Two merchants in one database: A does everything, B tries to see and touch A's data.
const A = "admin-a.myshopify.com";
const B = "admin-b.myshopify.com";
const PAGES = ["/app", "/app/connection", "/app/settings", "/app/problems", "/app/activity"] as const;
const ROUTE: Record<(typeof PAGES)[number], string> = {
  "/app": "routes/app._index",
  "/app/connection": "routes/app.connection",
  "/app/settings": "routes/app.settings",
  "/app/problems": "routes/app.problems",
  "/app/activity": "routes/app.activity",
};
const BAD_TOKENS: TokenKind[] = ["forged", "expired", "wrong-audience"];

let h: PipelineHarness;
beforeAll(async () => {
  h = await startPipelineHarness();
  for (const shop of [A, B]) expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
});
afterAll(() => h.close());

const shopRow = (domain: string) => h.app.db.prisma.shop.findUniqueOrThrow({ where: { domain } });
const connect = (shop: string, apiKey: string) =>
  postForm(h.app.url, shop, "/app/connection", { intent: "connect", apiKey }).then((r) => actionData<{ ok: boolean; errors?: Record<string, string>; reason?: string }>(r));

describe("every page answers only to a valid session token", () => {
  for (const page of PAGES) {
    it(`${page}: the first load renders, a valid token loads data, broken tokens get 401`, async () => {
      const doc = await openPage(h.app.url, A, page);
      expect(doc.status).toBe(200);
      expect(await doc.text()).toContain("Polaris");
      const ok = await loadData(h.app.url, A, page);
      expect(ok.status).toBe(200);
      await routeData(ok, ROUTE[page]);
      for (const kind of BAD_TOKENS) {
        const res = await loadData(h.app.url, A, page, kind);
        expect(res.status, `${page} with a ${kind} token`).toBe(401);
      }
    });
  }

  it("every page has a browser tab title, and pages and scripts are compressed; webhook answers are not", async () => {
    const titles: Record<(typeof PAGES)[number], string> = {
      "/app": "Sync health",
      "/app/connection": "Connection",
      "/app/settings": "Settings",
      "/app/problems": "Problems",
      "/app/activity": "Activity",
    };
    for (const page of PAGES) {
      const doc = await openPage(h.app.url, A, page);
      expect(doc.headers.get("content-encoding"), page).toBe("gzip");
      const html = await doc.text();
      expect(html, page).toContain(`<title>${titles[page]} · Marketing Sync</title>`);
      const script = /<script type="module"[^>]*src="([^"]+\.js)"|<link rel="modulepreload" href="([^"]+\.js)"/.exec(html);
      const src = script?.[1] ?? script?.[2];
      expect(src, page).toBeTruthy();
      const js = await fetch(new URL(src!, h.app.url), { headers: { "accept-encoding": "gzip" } });
      expect(js.headers.get("content-encoding"), src).toBe("gzip");
      await js.arrayBuffer();
    }
    const hook = await fetch(`${h.app.url}/webhooks`, { method: "POST", headers: { "accept-encoding": "gzip", "content-type": "application/json" }, body: "{}" });
    await hook.arrayBuffer();
    expect(hook.headers.get("content-encoding")).toBeNull();
  });

  it("actions with a forged, expired or wrong-audience token change nothing", async () => {
    const before = await shopRow(B);
    for (const kind of BAD_TOKENS) {
      expect((await postForm(h.app.url, B, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey }, kind)).status).toBe(401);
      expect((await postForm(h.app.url, B, "/app/settings", { trackerMode: "legacy", source: "x", abandonmentDelayMinutes: "60", optInMode: "trust_shopify", orderCompletedOn: "paid" }, kind)).status).toBe(401);
      expect((await postForm(h.app.url, B, "/app/problems", { intent: "replay-reason", key: "0".repeat(32) }, kind)).status).toBe(401);
    }
    const after = await shopRow(B);
    expect(after.serviceKeyEnc).toBe(before.serviceKeyEnc);
    expect(after.settings).toEqual(before.settings);
  });
});

describe("navigation", () => {
  it("the app's menu links to every page, the Privacy page too", async () => {
    const html = await (await openPage(h.app.url, A, "/app")).text();
    const menu = /<ui-nav-menu[^>]*>([^]*?)<\/ui-nav-menu>/.exec(html)?.[1] ?? "";
    const links = [...menu.matchAll(/<a [^>]*href="([^"]+)"[^>]*>([^<]*)<\/a>/g)].map((m) => [m[1], m[2]]);
    expect(links).toContainEqual(["/app/privacy", "Privacy"]);
    for (const page of PAGES) expect(links.map(([href]) => href)).toContain(page);
    const privacy = await openPage(h.app.url, A, "/app/privacy");
    expect(privacy.status).toBe(200);
    expect(await privacy.text()).toContain("Privacy requests");
  });
});

describe("connection", () => {
  it("explains a wrong key, an inactive account and an unreachable service, and saves nothing", async () => {
    const wrong = await connect(A, "mk_live_this_is_not_a_key");
    expect(wrong).toMatchObject({ ok: false, reason: "wrong_key" });
    expect(wrong.errors?.apiKey).toMatch(/did not accept this API key/);

    const inactive = h.emulator.createAccount({ status: "suspended" });
    const r2 = await connect(A, inactive.apiKey);
    expect(r2).toMatchObject({ ok: false, reason: "account_inactive" });
    expect(r2.errors?.apiKey).toMatch(/not active.*billing/);

    h.emulator.setFaults({ dropConnections: 10 });
    const r3 = await connect(A, h.emulator.apiKey);
    h.emulator.clearFaults();
    expect(r3).toMatchObject({ ok: false, reason: "unreachable" });
    expect(r3.errors?.apiKey).toMatch(/could not reach the marketing service/);

    const empty = await connect(A, "   ");
    expect(empty).toMatchObject({ ok: false, errors: { apiKey: "Paste your API key." } });

    expect((await shopRow(A)).serviceKeyEnc).toBeNull();
  });

  it("explains a content-site plugin key when the service refuses it", async () => {
    // A service that refuses the key as the spec's plugin-key answer (the emulator only refuses
    // plugin keys on campaign sends, which connecting never makes).
    const server = createServer((_req, res) => {
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "A dashboard or CLI API key is required for this action.", status_code: 403 }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const error = await connectShop("plugin.myshopify.com", { apiKey: "mk_plugin_123456789", baseUrl: url }).catch((e: unknown) => e);
    server.close();
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ reason: "plugin_key" });
    expect((error as Error).message).toMatch(/content-site plugin key/);
  });

  it("connects with the right key: shows the account and only the key's last 4 characters", async () => {
    const result = await connect(A, h.emulator.apiKey);
    expect(result.ok).toBe(true);
    const row = await shopRow(A);
    expect(row.serviceKeyEnc).toBeTruthy();
    expect(row.serviceKeyEnc).not.toContain(h.emulator.apiKey);

    const page = await loadData(h.app.url, A, "/app/connection");
    const text = await page.clone().text();
    expect(text).not.toContain(h.emulator.apiKey);
    const data = await routeData<{ state: string; account: { company: string; plan: string; keyLast4: string } }>(page, "routes/app.connection");
    expect(data.state).toBe("connected");
    expect(data.account).toMatchObject({ company: "Default Shop", plan: "Growth", keyLast4: h.emulator.apiKey.slice(-4) });
    const html = await (await openPage(h.app.url, A, "/app/connection")).text();
    expect(html).toContain("Default Shop");
    expect(html).not.toContain(h.emulator.apiKey);

    // B sees none of it.
    const other = await routeData<{ state: string; account: unknown }>(await loadData(h.app.url, B, "/app/connection"), "routes/app.connection");
    expect(other).toMatchObject({ state: "not_connected", account: null });

    // Connecting queued the store's history import. This harness has no store to export (the
    // imports are tested in test/backfill): it is set aside so that it does not fail under the
    // health tests below.
    expect(await h.app.db.prisma.backfillRun.deleteMany({ where: { shop: A, status: "queued" } })).toEqual({ count: 1 });
  });

  it("a paused shop (rejected key) never shows as connected", async () => {
    await pauseShop(A, "Unauthenticated");
    const home = await routeData<{ shop: { state: string; connected: boolean }; banner: { status: string; fix: string } }>(
      await loadData(h.app.url, A, "/app"),
      "routes/app._index",
    );
    expect(home.shop).toMatchObject({ state: "paused", connected: false });
    expect(home.banner.status).toBe("paused");
    expect(home.banner.fix).toMatch(/valid API key/);
    const html = await (await openPage(h.app.url, A, "/app")).text();
    expect(html).toContain("Paused");
    expect(html).not.toMatch(/>Connected</);
    // Reconnecting resumes.
    expect((await connect(A, h.emulator.apiKey)).ok).toBe(true);
    expect((await shopRow(A)).pausedAt).toBeNull();
  });
});

describe("settings", () => {
  const form = {
    optInMode: "double_opt_in",
    orderCompletedOn: "paid",
    abandonmentDelayMinutes: "90",
    trackerMode: "legacy",
    storefrontEvents: "on",
    source: "my-shop",
  };

  it("defaults to the privacy-safe choices, keeping the consent customers gave Shopify", async () => {
    const { settings } = await routeData<{ settings: Record<string, unknown> }>(await loadData(h.app.url, B, "/app/settings"), "routes/app.settings");
    expect(settings).toMatchObject({ trackerMode: "modern", storefrontEvents: false, optInMode: "trust_shopify", syncNonSubscribers: false });
  });

  it("shows field errors inline and keeps the saved settings", async () => {
    const res = await postForm(h.app.url, A, "/app/settings", { ...form, abandonmentDelayMinutes: "5", trackerMode: "sideways" });
    expect(res.status).toBe(200);
    const data = await actionData<{ ok: boolean; errors: Record<string, string> }>(res);
    expect(data.ok).toBe(false);
    expect(data.errors.abandonmentDelayMinutes).toBe("The shortest delay is 15 minutes.");
    expect(data.errors.trackerMode).toBeTruthy();
    expect((await shopContext(A)).settings.trackerMode).toBe("modern");
  });

  it("saves, applies to new work at once, and only for this shop", async () => {
    const data = await actionData<{ ok: boolean; toast: string }>(await postForm(h.app.url, A, "/app/settings", form));
    expect(data).toMatchObject({ ok: true, toast: "Settings saved" });
    expect((await shopContext(A)).settings).toMatchObject({ trackerMode: "legacy", storefrontEvents: true, optInMode: "double_opt_in", abandonmentDelayMinutes: 90, syncNonSubscribers: false });
    expect((await shopContext(B)).settings).toMatchObject({ trackerMode: "modern", storefrontEvents: false });
  });
});

describe("health, problems and activity over the real pipeline", () => {
  const email = "grace.hopper@example.com";

  it("a delivery that fails for good shows as a problem; replay sends it and the numbers move", async () => {
    await h.connect(A);
    h.startWorkers(1);
    h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
    await h.send({ topic: "customers/create", shop: A, body: customerBody({ id: "501", email, consent: "subscribed" }) });
    await h.settle();
    h.emulator.clearFaults();

    const problems = await routeData<{ groups: { reason: string; key: string; count: number; problems: { id: string; customer: string; attempts: number; message: string }[] }[] }>(
      await loadData(h.app.url, A, "/app/problems"),
      "routes/app.problems",
    );
    expect(problems.groups).toHaveLength(1);
    const [group] = problems.groups;
    const [dead] = group.problems;
    expect(dead).toMatchObject({ customer: `Ada Lovelace <${email}>`, attempts: 5 });
    expect(dead.message).toBeTruthy();

    const home = await routeData<{ banner: { status: string }; openDead: number; kinds: { kind: string; openDead: number }[]; totals: { dead: number; failed: number; delivered: number } }>(
      await loadData(h.app.url, A, "/app"),
      "routes/app._index",
    );
    expect(home.banner.status).toBe("degraded");
    expect(home.totals.dead).toBe(1);
    expect(home.totals.failed).toBeGreaterThanOrEqual(4);
    // One count under one name: the card, the banner and the By-type row say the same 1.
    expect(home).toMatchObject({ openDead: 1, banner: { reason: "1 change could not be delivered." } });
    expect(home.kinds.find((k) => k.kind === "customer")).toMatchObject({ openDead: 1 });

    // Search by customer e-mail.
    const found = await routeData<{ groups: unknown[] }>(await loadData(h.app.url, A, "/app/problems?q=grace.hopper"), "routes/app.problems");
    expect(found.groups).toHaveLength(1);
    const none = await routeData<{ groups: unknown[] }>(await loadData(h.app.url, A, "/app/problems?q=nobody%25"), "routes/app.problems");
    expect(none.groups).toHaveLength(0);

    // B can neither see nor act on A's dead letter.
    const bView = await routeData<{ groups: unknown[] }>(await loadData(h.app.url, B, "/app/problems"), "routes/app.problems");
    expect(bView.groups).toHaveLength(0);
    const attempts: Record<string, string>[] = [{ intent: "replay", id: dead.id }, { intent: "discard", id: dead.id }, { intent: "replay-reason", key: group.key }];
    for (const fields of attempts) {
      const r = await actionData<{ ok: boolean }>(await postForm(h.app.url, B, "/app/problems", fields));
      expect(r.ok).toBe(false);
    }
    expect((await h.app.db.prisma.outboundCall.findUniqueOrThrow({ where: { id: BigInt(dead.id) } })).status).toBe("dead");
    const bActivity = await routeData<{ entries: unknown[] }>(await loadData(h.app.url, B, "/app/activity?q=grace"), "routes/app.activity");
    expect(bActivity.entries).toHaveLength(0);

    // A replays it: delivered, and the health numbers move.
    const replay = await actionData<{ ok: boolean; toast: string }>(await postForm(h.app.url, A, "/app/problems", { intent: "replay", id: dead.id }));
    expect(replay).toMatchObject({ ok: true, toast: "Sending again" });
    await h.settle();
    expect(h.emulator.person(email)).toBeTruthy();
    const after = await routeData<{ banner: { status: string }; openDead: number; kinds: { kind: string; openDead: number }[]; totals: { delivered: number }; history: { day: { delivered: number }[] } }>(
      await loadData(h.app.url, A, "/app"),
      "routes/app._index",
    );
    expect(after.banner.status).toBe("healthy");
    expect(after.totals.delivered).toBeGreaterThan(home.totals.delivered);
    // Replayed: nothing left that could not be delivered, in the card and in the By-type row alike.
    expect(after).toMatchObject({ openDead: 0, totals: { dead: 1 } });
    expect(after.kinds.find((k) => k.kind === "customer")).toMatchObject({ openDead: 0 });
    expect(after.history.day.at(-1)!.delivered).toBeGreaterThan(0);
    const cleared = await routeData<{ groups: unknown[]; retrying: unknown[]; replayed: { customer: string; outcome: string }[] }>(
      await loadData(h.app.url, A, "/app/problems"),
      "routes/app.problems",
    );
    expect(cleared.groups).toHaveLength(0);
    // What really happened to the replay, not the error from before it.
    expect(cleared.retrying).toHaveLength(0);
    expect(cleared.replayed).toEqual([expect.objectContaining({ customer: `Ada Lovelace <${email}>`, outcome: "delivered" })]);
  });

  it("a replayed change waiting to be sent shows as sending, not as a retry with its old error", async () => {
    const row = await h.app.db.prisma.outboundCall.create({
      data: { shop: A, objectKey: "customer:777", kind: "customer", call: { op: "person.upsert", body: { email: "ada@example.com" } }, status: "dead", attempts: 5, lastError: "Gave up retrying: server_error: Server Error", createdAt: new Date(Date.now() - 3_600_000), retryFrom: new Date(Date.now() - 3_600_000), runAt: new Date(Date.now() + 3_600_000) },
    });
    // Replayed while the worker is not there to send it: it waits.
    await h.app.db.prisma.outboundCall.update({ where: { id: row.id }, data: { status: "queued", attempts: 0, retryFrom: new Date(), runAt: new Date(Date.now() + 3_600_000) } });
    const view = await routeData<{ retrying: unknown[]; replayed: { id: string; outcome: string }[] }>(await loadData(h.app.url, A, "/app/problems"), "routes/app.problems");
    expect(view.retrying).toHaveLength(0);
    expect(view.replayed).toContainEqual(expect.objectContaining({ id: String(row.id), outcome: "sending" }));
    await h.app.db.prisma.outboundCall.delete({ where: { id: row.id } });
  });

  it("Sync health shows the history import's state in words, with what to do, and never Shopify's raw error", async () => {
    const raw = "Shopify answered with errors: fake admin: no resolver for #graphql mutation RunBulk";
    const run = await h.app.db.prisma.backfillRun.create({
      data: { id: "run-words", shop: A, kinds: ["customers", "products", "orders"], phase: "submit", status: "failed", lastError: raw, createdAt: new Date(Date.now() + 60_000) },
    });
    const home = await routeData<{ banner: { status: string; title: string; reason: string; fix: string }; importRun: { status: string; lastError: string } }>(
      await loadData(h.app.url, A, "/app"),
      "routes/app._index",
    );
    expect(home.banner).toMatchObject({ status: "degraded", title: "The history import failed" });
    expect(home.banner.reason).toContain("Shopify did not accept the app's request to export your customers.");
    expect(home.banner.reason + home.banner.fix).not.toContain("answered with errors");
    const html = await (await openPage(h.app.url, A, "/app")).text();
    expect(html).toContain("Store history");
    expect(html).toContain("The history import stopped.");
    // The raw text only inside "Details for support".
    expect(html.indexOf("answered with errors")).toBeGreaterThan(html.indexOf("Details for support"));
    const connection = await (await openPage(h.app.url, A, "/app/connection")).text();
    expect(connection).toContain("Shopify did not accept the app&#x27;s request to export your customers.");
    await h.app.db.prisma.backfillRun.delete({ where: { id: run.id } });
  });

  it("activity lists what was sent with the merchant's customer in full (masking is for the logs), and is searchable", async () => {
    const res = await loadData(h.app.url, A, "/app/activity?q=grace.hopper");
    const { entries } = await routeData<{ entries: { customer: string; status: string; what: string }[] }>(res, "routes/app.activity");
    expect(entries.length).toBeGreaterThanOrEqual(1);
    expect(entries[0]).toMatchObject({ customer: expect.stringContaining(email), status: "delivered" });
  });

  it("activity finds an order by its name", async () => {
    const order = JSON.parse(fixture("orders/create")) as Record<string, unknown>;
    Object.assign(order, { id: 880001, admin_graphql_api_id: "gid://shopify/Order/880001", name: "#4242", email: "ord@example.com", test: false, updated_at: new Date().toISOString() });
    await h.send({ topic: "orders/create", shop: A, body: order });
    await h.settle();
    const { entries } = await routeData<{ entries: { orderName: string | null; customer: string | null }[] }>(
      await loadData(h.app.url, A, `/app/activity?q=${encodeURIComponent("#4242")}`),
      "routes/app.activity",
    );
    expect(entries.length).toBeGreaterThanOrEqual(1);
    expect(entries.every((e) => e.orderName === "#4242")).toBe(true);
    const theirs = await routeData<{ entries: unknown[] }>(await loadData(h.app.url, B, `/app/activity?q=${encodeURIComponent("#4242")}`), "routes/app.activity");
    expect(theirs.entries).toHaveLength(0);
  });

  it("one name per event with its amount, and the order's own name (#5151) even on a refund that does not carry it", async () => {
    const call = (call: object, id: number) =>
      h.app.db.prisma.outboundCall.create({ data: { id: BigInt(id), shop: A, objectKey: "order:9007199254841001", kind: "order", status: "delivered", call, deliveredAt: new Date() } });
    await call({ op: "event", type: "order", action: "completed", body: { email: "ord@example.com", id: "9007199254841001", publicId: "#5151", total: 42.5, currency: "USD" } }, 90_000_001);
    await call({ op: "event.custom", body: { email: "ord@example.com", eventName: "order_refunded", properties: { order_id: "9007199254841001", amount: 12.5, currency: "USD" } } }, 90_000_002);
    const { entries } = await routeData<{ entries: { id: string; what: string; orderName: string | null; object: string }[] }>(
      await loadData(h.app.url, A, "/app/activity?q=9007199254841001"),
      "routes/app.activity",
    );
    const byId = new Map(entries.map((e) => [e.id, e]));
    expect(byId.get("90000001")).toMatchObject({ what: "Order completed · $42.50", orderName: "#5151" });
    expect(byId.get("90000002")).toMatchObject({ what: "Order refunded · $12.50", orderName: "#5151" });
    await h.app.db.prisma.outboundCall.deleteMany({ where: { id: { in: [90_000_001n, 90_000_002n] } } });
  });

  it("every row names who and what: a contact update that sends no name names the person; a refund and its order update show #1001 and search finds them", async () => {
    await h.connect(A);
    if (!h.workers.length) h.startWorkers(1);
    // Ids beyond 2^53, as raw JSON numbers the way a large store's are sent.
    const raw = (body: object) => JSON.stringify(body).replace(/"__BIG__(\d+)"/g, "$1");
    const customer = { ...customerBody({ id: "1", email: "radia.perlman@example.com", firstName: "Radia", consent: "subscribed" }), id: "__BIG__9007199254741024", last_name: "Perlman", admin_graphql_api_id: "gid://shopify/Customer/9007199254741024" };
    await h.send({ topic: "customers/create", shop: A, body: raw(customer) });
    await h.settle();
    // Only the tags change: the contact update carries no name.
    await h.send({ topic: "customers/update", shop: A, body: raw({ ...customer, tags: "vip", updated_at: "2026-01-02T10:00:00-05:00" }) });
    const order = JSON.parse(fixture("orders/create")) as Record<string, unknown>;
    Object.assign(order, {
      id: "__BIG__9007199254841001",
      admin_graphql_api_id: "gid://shopify/Order/9007199254841001",
      name: "#1001",
      email: "radia.perlman@example.com",
      test: false,
      financial_status: "paid",
      customer: { ...(order.customer as object), id: "__BIG__9007199254741024", admin_graphql_api_id: "gid://shopify/Customer/9007199254741024", email: "radia.perlman@example.com" },
      updated_at: new Date().toISOString(),
    });
    await h.send({ topic: "orders/create", shop: A, body: raw(order) });
    await h.settle();
    // The order's own calls are gone (retention prunes delivered calls after 14 days): a refund weeks later still names the order.
    await h.app.db.sql.query(`DELETE FROM "OutboundCall" WHERE shop = $1 AND "objectKey" = 'order:9007199254841001'`, [A]);
    const refund = JSON.parse(fixture("refunds/create")) as Record<string, unknown>;
    Object.assign(refund, { id: "__BIG__9007199255041001", order_id: "__BIG__9007199254841001", admin_graphql_api_id: "gid://shopify/Refund/9007199255041001" });
    await h.send({ topic: "refunds/create", shop: A, body: raw(refund) });
    await h.settle();

    type Entry = { id: string; object: string; what: string; customer: string | null; orderName: string | null };
    const read = (q: string) => loadData(h.app.url, A, `/app/activity?q=${encodeURIComponent(q)}`).then((r) => routeData<{ entries: Entry[] }>(r, "routes/app.activity"));
    const person = (await read("radia.perlman")).entries.filter((e) => e.object.startsWith("Customer"));
    const contactCalls = person.filter((e) => e.what === "Contact created or updated");
    expect(contactCalls.length, JSON.stringify(person)).toBe(2);
    for (const e of contactCalls) expect(e.customer).toBe("Radia Perlman <radia.perlman@example.com>");

    const orderRows = (await read("#1001")).entries;
    const refunded = orderRows.find((e) => e.what.startsWith("Order refunded"));
    const updated = orderRows.find((e) => e.what.startsWith("Order updated"));
    expect(refunded).toMatchObject({ orderName: "#1001", object: "Order #1001", customer: "Radia Perlman <radia.perlman@example.com>" });
    expect(updated).toMatchObject({ orderName: "#1001", object: "Order #1001" });
    // No row of the order stands under its id.
    const all = (await read("9007199254841001")).entries;
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all.every((e) => e.object === "Order #1001")).toBe(true);
    // Another shop's search finds none of it.
    const theirs = await routeData<{ entries: unknown[] }>(await loadData(h.app.url, B, `/app/activity?q=${encodeURIComponent("#1001")}`), "routes/app.activity");
    expect(theirs.entries).toHaveLength(0);
  });

  it("each problem's buttons have their own label naming who and what; the service's bare message comes with what it means", async () => {
    const dead = (id: bigint, minutesAgo: number) =>
      h.app.db.prisma.outboundCall.create({
        data: {
          id,
          shop: A,
          objectKey: "customer:9007199254741024",
          kind: "customer",
          call: { op: "person.upsert", body: { email: "radia.perlman@example.com", source: "shopify", customFields: { firstName: "Radia", lastName: "Perlman" } } },
          status: "dead",
          attempts: 5,
          lastError: "Gave up retrying: server_error: Server Error",
          lastResponse: { message: "Server Error" },
          createdAt: new Date(Date.now() - minutesAgo * 60_000),
        },
      });
    await dead(91_000_001n, 30);
    await dead(91_000_002n, 30);
    await dead(91_000_003n, 90);
    const html = await (await openPage(h.app.url, A, "/app/problems?q=radia.perlman")).text();
    const labels = [...html.matchAll(/aria-label="(Replay [^"]*)"/g)].map((m) => m[1].replaceAll("&lt;", "<").replaceAll("&gt;", ">"));
    expect(labels).toHaveLength(3);
    expect(new Set(labels).size).toBe(3);
    for (const l of labels) expect(l).toContain("Contact created or updated for Radia Perlman <radia.perlman@example.com>");
    // What it means first; the service's own words only under "Details for support".
    const cell = html.indexOf("data-failure-meaning");
    expect(html.slice(cell, cell + 400)).toContain("The marketing service had a server error; this change itself is fine. Replay it once the service works again.");
    expect(html.indexOf("Server Error", cell)).toBeGreaterThan(html.indexOf("Details for support", cell));
    await h.app.db.prisma.outboundCall.deleteMany({ where: { id: { in: [91_000_001n, 91_000_002n, 91_000_003n] } } });
  });

  it("hostile input: bad ids, odd search text and oversized values get clear answers and change nothing", async () => {
    const hostile: Record<string, string>[] = [{ intent: "replay", id: "1 OR 1=1" }, { intent: "discard", id: "-1" }, { intent: "explode" }, { intent: "replay", id: "9".repeat(40) }, { intent: "discard", id: "9".repeat(19) }];
    for (const fields of hostile) {
      const res = await postForm(h.app.url, A, "/app/problems", fields);
      expect(res.status).toBe(200);
      expect(await actionData(res)).toMatchObject({ ok: false, toast: "That action is not possible." });
    }
    for (const q of ["%", "_", "' OR '1'='1", "\\", "x".repeat(5000)]) {
      const res = await loadData(h.app.url, A, `/app/problems?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect((await routeData<{ groups: unknown[] }>(res, "routes/app.problems")).groups).toHaveLength(0);
    }
    for (const before of ["not-a-number", "9".repeat(19)]) expect((await loadData(h.app.url, A, `/app/activity?before=${before}`)).status).toBe(200);
    const settings = await actionData<{ ok: boolean; errors: Record<string, string> }>(
      await postForm(h.app.url, A, "/app/settings", { optInMode: "trust_shopify", orderCompletedOn: "paid", trackerMode: "modern", abandonmentDelayMinutes: "1e9", source: "s".repeat(500) }),
    );
    expect(settings.ok).toBe(false);
    expect(settings.errors).toMatchObject({ abandonmentDelayMinutes: expect.any(String), source: "Use at most 100 characters." });
  });

  it("Sync health counts the contacts that are subscribed, waiting for confirmation and unsubscribed, as the service has them", async () => {
    const svc = createMarketingClient({ baseUrl: h.emulator.url, apiKey: h.emulator.apiKey, retries: 0 });
    await svc.people.upsert({ email: "waits@example.com", source: "shopify", statusDetails: "unconfirmed", skipDoubleOptIn: true });
    await svc.people.upsert({ email: "left@example.com", source: "shopify", statusDetails: "unsubscribed", skipDoubleOptIn: true });
    const total = async (status: "confirmed" | "unconfirmed" | "unsubscribed" | "blocked") => (await svc.people.list({ status, perPage: 1 })).meta.total;
    const expected = { subscribed: await total("confirmed"), waiting: await total("unconfirmed"), unsubscribed: await total("unsubscribed"), blocked: await total("blocked") };
    expect(expected.waiting).toBeGreaterThan(0);
    expect(expected.unsubscribed).toBeGreaterThan(0);
    const home = await routeData<{ consent: unknown }>(await loadData(h.app.url, A, "/app"), "routes/app._index");
    expect(home.consent).toEqual(expected);
    const html = await (await openPage(h.app.url, A, "/app")).text();
    expect(html).toContain("Waiting for confirmation");
    // Some are waiting: the page says they receive nothing until they confirm.
    expect(html).toContain("data-consent-waiting-hint");
  });

  it("the 30-day chart keeps history older than the delivered calls' retention", async () => {
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
    tenDaysAgo.setUTCMinutes(0, 0, 0);
    await h.app.db.prisma.syncCounterHourly.create({ data: { shop: A, kind: "order", hour: tenDaysAgo, delivered: 37, failed: 2 } });
    const home = await routeData<{ history: { month: { at: string; delivered: number; failed: number }[]; day: { delivered: number }[] } }>(
      await loadData(h.app.url, A, "/app"),
      "routes/app._index",
    );
    expect(home.history.month).toHaveLength(30);
    expect(home.history.day).toHaveLength(24);
    const bucket = home.history.month.find((p) => p.at.slice(0, 10) === tenDaysAgo.toISOString().slice(0, 10));
    expect(bucket).toMatchObject({ delivered: 37, failed: 2 });
    const other = await routeData<{ history: { month: { delivered: number }[] } }>(await loadData(h.app.url, B, "/app"), "routes/app._index");
    expect(other.history.month.every((p) => p.delivered === 0)).toBe(true);
  });

  it("recent failures still being retried are listed apart, with no replay action, and only for their shop", async () => {
    // A call between two attempts (the service failed once; the next try is an hour away).
    const row = await h.app.db.prisma.outboundCall.create({
      data: {
        shop: A,
        objectKey: "customer:990",
        kind: "customer",
        call: { op: "person.upsert", body: { email: "retry.me@example.com", source: "shopify" } },
        attempts: 2,
        lastError: "server_error: Server Error",
        runAt: new Date(Date.now() + 3_600_000),
      },
    });
    const mine = await routeData<{ retrying: { problems: { id: string; customer: string; attempts: number }[] }[] }>(
      await loadData(h.app.url, A, "/app/problems"),
      "routes/app.problems",
    );
    expect(mine.retrying.flatMap((g) => g.problems)).toEqual([expect.objectContaining({ id: String(row.id), customer: "retry.me@example.com", attempts: 2 })]);
    const theirs = await routeData<{ retrying: unknown[] }>(await loadData(h.app.url, B, "/app/problems"), "routes/app.problems");
    expect(theirs.retrying).toHaveLength(0);
    // Replay is for dead letters only.
    expect(await actionData(await postForm(h.app.url, A, "/app/problems", { intent: "replay", id: String(row.id) }))).toMatchObject({ ok: false });
    await h.app.db.prisma.outboundCall.delete({ where: { id: row.id } });
  });

  it("one long outage is one problem group, whatever each dead letter's attempts and minutes; replay all sends that group only", async () => {
    // What the pipeline records when it gives up after a long outage (send-call.server.ts), for
    // calls planned at different times, plus one with another cause that names a person.
    const dead = (objectKey: string, email: string, lastError: string, cause = lastError) =>
      h.app.db.prisma.outboundCall.create({
        data: { shop: A, objectKey, kind: "customer", status: "dead", call: { op: "person.upsert", body: { email, source: "shopify" } }, attempts: 3, lastError, cause },
      });
    const outage = [
      await dead("customer:991", "outage.one@example.com", "gave up after 97 attempts; last: server_error: Server Error (retried for 1439 min)", "Gave up retrying: server_error: Server Error"),
      await dead("customer:992", "outage.two@example.com", "gave up after 12 attempts; last: server_error: Server Error (retried for 2 min)", "Gave up retrying: server_error: Server Error"),
    ];
    const other = await dead("customer:993", "ada.refused@example.com", "validation_failed: Email ada.refused@example.com is not deliverable");
    const res = await loadData(h.app.url, A, "/app/problems");
    const { groups } = await routeData<{ groups: { reason: string; key: string; count: number }[] }>(res, "routes/app.problems");
    expect(groups.map((g) => [g.reason, g.count])).toEqual([
      ["Gave up retrying: server_error: Server Error", 2],
      ["validation_failed: Email ada.refused@example.com is not deliverable", 1],
    ]);
    // B cannot replay A's group by its key.
    expect(await actionData(await postForm(h.app.url, B, "/app/problems", { intent: "replay-reason", key: groups[0].key }))).toMatchObject({ ok: false });
    expect(await actionData(await postForm(h.app.url, A, "/app/problems", { intent: "replay-reason", key: groups[0].key }))).toMatchObject({ ok: true, toast: "2 sending again" });
    const status = async (id: bigint) => (await h.app.db.prisma.outboundCall.findUniqueOrThrow({ where: { id } })).status;
    for (const row of outage) expect(await status(row.id)).not.toBe("dead");
    expect(await status(other.id)).toBe("dead");
    await h.settle();
    await h.app.db.prisma.outboundCall.deleteMany({ where: { id: { in: [...outage, other].map((r) => r.id) } } });
  });

  it("after a day-long outage: every dead letter counted, the largest causes shown, replay all sends the whole group without going backwards", async () => {
    const sql = h.app.db.sql;
    const outageError = (g: string) => `'gave up after ' || (40 + ${g} % 50) || ' attempts; last: server_error: Server Error (retried for ' || (1380 + ${g} % 60) || ' min)'`;
    const { lastId } = (
      await sql.query<{ lastId: string }>(`SELECT coalesce(max(id), 0)::text AS "lastId" FROM "OutboundCall"`)
    )[0];
    // Oldest first: 40 dead letters each with a cause of its own (a message naming the person),
    // then 2,400 of the outage; customer:outage-1 dies again at the end with the same kind of call.
    await sql.query(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, attempts, "lastError")
       SELECT $1, 'customer:own-' || g, 'customer', jsonb_build_object('op', 'person.upsert', 'body', jsonb_build_object('email', 'own' || g || '@example.com', 'source', 'shopify')),
              'dead', 3, 'validation_failed: Email own' || g || '@example.com is not deliverable'
         FROM generate_series(1, 40) g`,
      [A],
    );
    await sql.query(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, attempts, "lastError", cause)
       SELECT $1, 'customer:outage-' || g, 'customer', jsonb_build_object('op', 'person.upsert', 'body', jsonb_build_object('email', 'outage' || g || '@example.com', 'source', 'shopify')),
              'dead', 40 + g % 50, ${outageError("g")}, 'Gave up retrying: server_error: Server Error'
         FROM generate_series(1, 2400) g ORDER BY g`,
      [A],
    );
    await sql.query(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, attempts, "lastError", cause)
       VALUES ($1, 'customer:outage-1', 'customer', '{"op":"person.upsert","body":{"email":"outage1.newer@example.com","source":"shopify"}}', 'dead', 3, ${outageError("7")}, 'Gave up retrying: server_error: Server Error')`,
      [A],
    );

    const page = await routeData<{ groups: { reason: string; key: string; count: number; problems: unknown[] }[]; causes: number }>(
      await loadData(h.app.url, A, "/app/problems"),
      "routes/app.problems",
    );
    expect(page.causes).toBe(41);
    expect(page.groups).toHaveLength(30);
    expect(page.groups[0]).toMatchObject({ reason: "Gave up retrying: server_error: Server Error", count: 2401 });
    expect(page.groups[0].problems).toHaveLength(50);
    expect(page.groups[1]).toMatchObject({ reason: expect.stringMatching(/^validation_failed: Email \S+@example.com is not deliverable$/), count: 1 });
    const html = await (await openPage(h.app.url, A, "/app/problems")).text();
    expect(html).toContain("Replay all (2401)");
    expect(html).toContain("Showing the 30 largest of 41 reasons");

    const replay = await actionData<{ ok: boolean; toast: string }>(
      await postForm(h.app.url, A, "/app/problems", { intent: "replay-reason", key: page.groups[0].key }),
    );
    // The first dead letter of customer:outage-1 is older than its second, of the same kind: not sent.
    expect(replay).toMatchObject({ ok: true, toast: "2400 sending again; 1 skipped: newer data was already sent" });
    const [first] = await sql.query<{ status: string }>(
      `SELECT status FROM "OutboundCall" WHERE shop = $1 AND "objectKey" = 'customer:outage-1' AND id > $2::bigint ORDER BY id LIMIT 1`,
      [A, lastId],
    );
    expect(first.status).toBe("superseded");
    const left = await sql.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM "OutboundCall" WHERE shop = $1 AND id > $2::bigint AND status = 'dead' GROUP BY 1`,
      [A, lastId],
    );
    expect(left).toEqual([{ status: "dead", n: 40 }]);
    await h.settle();
    await sql.query(`DELETE FROM "OutboundCall" WHERE shop = $1 AND id > $2::bigint`, [A, lastId]);
  });

  it("what could not be used at all (an unreadable delivery, a reminder that could not be made) is listed with its reason, for its shop only", async () => {
    // A date no system can hold: planning records the delivery as invalid.
    const broken = JSON.stringify(customerBody({ id: "777", email: "broken.date@example.com", updatedAt: "PLACEHOLDER" })).replace('"PLACEHOLDER"', "1e20");
    expect((await h.send({ topic: "customers/create", shop: A, body: broken })).status).toBe(200);
    await h.settle();
    await h.app.db.sql.query(
      `INSERT INTO "AbandonmentTimer" (shop, "checkoutToken", "dueAt", snapshot, status, attempts, "lastError", "updatedAt")
       VALUES ($1, 'tok-broken', now(), '{}', 'failed', 1, 'could not map the checkout of reminder.me@example.com: no line items', now())`,
      [A],
    );
    const data = (shop: string) =>
      loadData(h.app.url, shop, "/app/problems").then((r) =>
        routeData<{ unprocessed: { count: number; items: { what: string; label: string; object: string | null; reason: string }[] } }>(r, "routes/app.problems"),
      );
    const mine = await data(A);
    expect(mine.unprocessed.count).toBe(2);
    expect(mine.unprocessed.items).toEqual([
      expect.objectContaining({
        what: "abandoned checkout",
        label: "Abandoned checkout reminder",
        object: "Checkout tok-broken",
        reason: "could not map the checkout of reminder.me@example.com: no line items",
      }),
      expect.objectContaining({ what: "customers/create", label: "New customer", reason: expect.stringMatching(/\S/) }),
    ]);
    const html = await (await openPage(h.app.url, A, "/app/problems")).text();
    expect(html).toContain("Could not be used");
    // The page shows the merchant's words, which the loader computed (the registry stays on the server).
    expect(html).toContain(">New customer<");
    expect(html).toContain(">Abandoned checkout reminder<");
    expect((await data(B)).unprocessed).toEqual({ count: 0, items: [] });
    // The home page says so (nothing to replay, so not an alarm) and points to Problems.
    const banner = async (shop: string) =>
      (await routeData<{ banner: { status: string; reason: string; fix: string | null } }>(await loadData(h.app.url, shop, "/app"), "routes/app._index")).banner;
    expect(await banner(A)).toMatchObject({ status: "healthy", reason: expect.stringContaining("but 2 from the last 24 hours could not be read"), fix: expect.stringMatching(/^Open Problems/) });
    expect((await banner(B)).reason).not.toContain("could not be read");
    await h.app.db.sql.query(`DELETE FROM "AbandonmentTimer" WHERE shop = $1 AND "checkoutToken" = 'tok-broken'`, [A]);
    await h.app.db.sql.query(`DELETE FROM "WebhookDelivery" WHERE shop = $1 AND outcome = 'invalid'`, [A]);
  });

  it("the health table counts what could not be used apart from what needed no sending", async () => {
    type Kind = { kind: string; skipped: number; unusable: number };
    type Home = { kinds: Kind[]; history: { day: { unusable: number }[] } };
    const homeData = async () => routeData<Home>(await loadData(h.app.url, A, "/app"), "routes/app._index");
    const kinds = async () => (await homeData()).kinds;
    const lastHour = async () => (await homeData()).history.day.at(-1)!.unusable;
    const of = (all: Kind[], kind: string) => all.find((k) => k.kind === kind) ?? { kind, skipped: 0, unusable: 0 };
    const before = await kinds();
    // A customer whose date no system can hold (recorded as invalid) and a reminder whose snapshot
    // cannot be turned into a call (given up at once by the worker).
    const broken = JSON.stringify(customerBody({ id: "778", email: "broken.again@example.com", updatedAt: "PLACEHOLDER" })).replace('"PLACEHOLDER"', "1e20");
    expect((await h.send({ topic: "customers/create", shop: A, body: broken })).status).toBe(200);
    await h.app.db.sql.query(
      `INSERT INTO "AbandonmentTimer" (shop, "checkoutToken", "dueAt", snapshot, status, attempts, "updatedAt")
       VALUES ($1, 'tok-unmappable', now(), '{}', 'pending', 0, now())`,
      [A],
    );
    await h.settle();
    const [timer] = await h.app.db.sql.query<{ status: string }>(`SELECT status FROM "AbandonmentTimer" WHERE shop = $1 AND "checkoutToken" = 'tok-unmappable'`, [A]);
    expect(timer?.status).toBe("failed");
    const after = await kinds();
    expect(of(after, "customer").unusable).toBe(of(before, "customer").unusable + 1);
    expect(of(after, "customer").skipped).toBe(of(before, "customer").skipped);
    expect(of(after, "checkout").unusable).toBe(of(before, "checkout").unusable + 1);
    // …and in the chart, in the bucket of this hour.
    expect(await lastHour()).toBeGreaterThanOrEqual(1);
    expect(await (await openPage(h.app.url, A, "/app")).text()).toContain("Could not be used");
    await h.app.db.sql.query(`DELETE FROM "AbandonmentTimer" WHERE shop = $1 AND "checkoutToken" = 'tok-unmappable'`, [A]);
    await h.app.db.sql.query(`DELETE FROM "WebhookDelivery" WHERE shop = $1 AND outcome = 'invalid'`, [A]);
  });

  it("discard takes a dead letter out of the list for good", async () => {
    h.emulator.setFaults({ serverErrors: 50, pathPrefix: "/api/people" });
    await h.send({ topic: "customers/create", shop: A, body: customerBody({ id: "502", email: "alan@example.com", consent: "subscribed" }) });
    await h.settle();
    h.emulator.clearFaults();
    const { groups } = await routeData<{ groups: { problems: { id: string }[] }[] }>(await loadData(h.app.url, A, "/app/problems"), "routes/app.problems");
    const id = groups[0].problems[0].id;
    expect(await actionData(await postForm(h.app.url, A, "/app/problems", { intent: "discard", id }))).toMatchObject({ ok: true });
    const again = await routeData<{ groups: unknown[] }>(await loadData(h.app.url, A, "/app/problems"), "routes/app.problems");
    expect(again.groups).toHaveLength(0);
    expect((await h.app.db.prisma.outboundCall.findUniqueOrThrow({ where: { id: BigInt(id) } })).status).toBe("superseded");
  });

  it("disconnect stops all delivery for the shop and forgets the key", async () => {
    expect(await actionData(await postForm(h.app.url, A, "/app/connection", { intent: "disconnect" }))).toMatchObject({ ok: true });
    const row = await shopRow(A);
    expect(row.serviceKeyEnc).toBeNull();
    const before = h.emulator.requests.length;
    await h.send({ topic: "customers/create", shop: A, body: customerBody({ id: "503", email: "late@example.com", consent: "subscribed" }) });
    await h.settle();
    expect(h.emulator.requests.length).toBe(before);
    const home = await routeData<{ shop: { state: string } }>(await loadData(h.app.url, A, "/app"), "routes/app._index");
    expect(home.shop.state).toBe("not_connected");
  });
});

describe("signups to Shopify", () => {
  const C = "admin-c.myshopify.com";
  type Signups = { waiting: number | null; created: number; lastError: string | null };

  it("is recommended on, chosen at connection and in Settings, with the number read by the last sweep", async () => {
    expect((await openPage(h.app.url, C, "/app")).status).toBe(200);
    const before = await routeData<{ signupsToShopify: boolean }>(await loadData(h.app.url, C, "/app/connection"), "routes/app.connection");
    expect(before.signupsToShopify).toBe(true);
    // Connecting with the box unticked: the choice is saved off.
    const connected = await actionData<{ ok: boolean }>(
      await postForm(h.app.url, C, "/app/connection", { intent: "connect", apiKey: h.emulator.apiKey, optInMode: "trust_shopify", signupsChoice: "1" }),
    );
    expect(connected.ok).toBe(true);
    expect((await shopContext(C)).settings.signupsToShopify).toBe(false);

    // Settings: not counted yet, then the last sweep's count.
    const settingsData = async () => routeData<{ settings: { signupsToShopify: boolean }; signups: Signups }>(await loadData(h.app.url, C, "/app/settings"), "routes/app.settings");
    // Connecting from the page made the first sweep due at once (the running worker may have begun it already).
    const [first] = await h.app.db.sql.query<{ due: boolean; begun: boolean }>(
      `SELECT "dueAt" <= now() AS due, ("lastSweepAt" IS NOT NULL OR "startedAt" IS NOT NULL) AS begun FROM "SignupSweepState" WHERE shop = $1`,
      [C],
    );
    expect(first.due || first.begun).toBe(true);
    if (!first.begun) expect((await settingsData()).signups).toMatchObject({ waiting: null, created: 0, lastError: null });
    // Once it has run (the worker left idle), as if it had counted 4.
    await h.settle();
    await h.app.db.sql.query(`UPDATE "SignupSweepState" SET "dueAt" = now() + interval '1 hour', "lastWaiting" = 4, "lastSweepAt" = now() WHERE shop = $1`, [C]);
    expect(await settingsData()).toMatchObject({ settings: { signupsToShopify: false }, signups: { waiting: 4, created: 0 } });

    const saved = await actionData<{ ok: boolean }>(
      await postForm(h.app.url, C, "/app/settings", { optInMode: "trust_shopify", orderCompletedOn: "paid", abandonmentDelayMinutes: "60", trackerMode: "modern", source: "shopify", signupsToShopify: "true" }),
    );
    expect(saved.ok).toBe(true);
    expect((await shopContext(C)).settings.signupsToShopify).toBe(true);
    // Turning it on makes a sweep due at once: the running worker may count again before the home
    // page is read. The page shows whatever the last sweep counted (4 above, unless it swept since).
    await h.settle();
    const [last] = await h.app.db.sql.query<{ waiting: number }>(`SELECT "lastWaiting" AS waiting FROM "SignupSweepState" WHERE shop = $1`, [C]);
    expect([4, 0]).toContain(last.waiting); // 0: the service holds no signup
    const home = await routeData<{ signups: Signups & { on: boolean } }>(await loadData(h.app.url, C, "/app"), "routes/app._index");
    expect(home.signups).toMatchObject({ on: true, waiting: last.waiting, created: 0 });
  });
});
