/**
 * One test per disagreement found when the client and the emulator were compared with the spec
 * (issue 14): each failed before the fix. Over real HTTP against the emulator where a request is
 * involved; classification of bodies the emulator never sends is checked on classifyHttpError.
 */
import { describe, expect, it } from "vitest";
import { classifyHttpError, isPermanentRefusalForPerson, MarketingServiceError } from "../../app/services/marketing/marketing-error";
import { failure, uniqueEmail, useEmulator } from "./support";

const h = useEmulator();

const lastBody = () => h.emu.requests.at(-1)?.body as Record<string, unknown>;

describe("email addresses (§2.2 says only “email address”)", () => {
  const real = ["a&b@shop.com", "a=b@x.com", "jörg@x.de", "o'neil+news@example.co.uk", "user@bücher.example"];

  it.each(real)("%s reaches the service: upsert, lookup, events and a queued call", async (email) => {
    const c = h.client();
    const p = await c.people.upsert({ email, source: "shopify" });
    expect(p.email).toBe(email);
    expect((await c.people.get(email)).id).toBe(p.id);
    await c.events.order("created", { email, source: "shopify", id: 1 });
    await c.perform({ op: "event.custom", body: { email, source: "shopify", eventName: "review_left" } });
    expect(h.emu.personEvents(email).map((e) => e.event)).toEqual(["order_created", "review_left"]);
  });

  it.each(["not-an-email", "a@", "@x.com", "a b@x.com", "a@b@x.com", "a@x", "a@x..com", ".a@x.com", "a@-x.com", "a@x.123"])(
    "%s is still refused locally",
    async (email) => {
      const e = await failure(h.client().people.upsert({ email, source: "shopify" }));
      expect(e).toMatchObject({ kind: "validation", local: true });
      expect(e.errors).toHaveProperty(["email"]);
      expect(h.emu.requests).toHaveLength(0);
    },
  );
});

describe("event timestamps and currencies are normalised, not refused (§4.5 asks for neither)", () => {
  it.each([
    ["2026-05-01T10:00", "2026-05-01T10:00:00.000Z"],
    ["2026-05-01T10:00:00", "2026-05-01T10:00:00.000Z"],
    ["2026-05-01 10:00:00 +0200", "2026-05-01T08:00:00.000Z"],
    ["2026-05-01T10:00+05:30", "2026-05-01T04:30:00.000Z"],
    ["2026-05-01", "2026-05-01T00:00:00.000Z"],
    ["2026-05-01T10:00:00-04:00", "2026-05-01T10:00:00-04:00"],
  ])("%s is sent as %s", async (given, sent) => {
    const email = uniqueEmail();
    await h.client().events.cart("created", { email, source: "shopify", id: "c1", occurredAt: given, modified_at: given });
    expect(lastBody()).toMatchObject({ occurredAt: sent, modified_at: sent });
  });

  it("lower-case currencies go out upper-case, in typed events and in queued calls", async () => {
    const email = uniqueEmail();
    const c = h.client();
    await c.events.order("completed", { email, source: "shopify", id: 7, currency: "usd" });
    expect(lastBody().currency).toBe("USD");
    await c.perform({
      op: "event",
      type: "customer",
      action: "updated",
      body: { email, source: "shopify", id: 8, currency: " eur", subscriptions: [{ currency: "gbp", start_date: "2026-01-01T00:00" }] },
    });
    expect(lastBody()).toMatchObject({ currency: "EUR", subscriptions: [{ currency: "GBP", start_date: "2026-01-01T00:00:00.000Z" }] });
  });

  it("what is not a date or not a currency at all is still refused locally", async () => {
    const c = h.client();
    const ts = await failure(c.events.cart("created", { email: "a@b.example", source: "s", id: 1, occurredAt: "yesterday" }));
    expect(ts.errors).toHaveProperty(["occurredAt"]);
    const feb30 = await failure(c.events.cart("created", { email: "a@b.example", source: "s", id: 1, occurredAt: "2026-02-30T10:00" }));
    expect(feb30.errors).toHaveProperty(["occurredAt"]);
    const cur = await failure(c.events.order("created", { email: "a@b.example", source: "s", id: 1, currency: "dollars" }));
    expect(cur.errors).toHaveProperty(["currency"]);
    expect(h.emu.requests).toHaveLength(0);
  });
});

describe("§7 failures that ask to retry, and lenient error bodies", () => {
  it("a 422 errors.campaign asking to retry is retryable; one saying the content is missing is not", () => {
    const retry = classifyHttpError({ status: 422, body: { message: "The given data was invalid.", errors: { campaign: ["Sending failed, please retry."] } } });
    expect(retry).toMatchObject({ kind: "retry_later", retryable: true });
    const missing = classifyHttpError({ status: 422, body: { message: "The given data was invalid.", errors: { campaign: ["The campaign has no email."] } } });
    expect(missing).toMatchObject({ kind: "validation", retryable: false });
  });

  it("the eligibility failure is recognised by its message whatever the status", () => {
    for (const status of [200, 400, 409, 422]) {
      expect(classifyHttpError({ status, body: { message: "Eligibility could not be checked. Please try again." } })).toMatchObject({ kind: "retry_later", retryable: true });
    }
  });

  it("links: null keeps the message and the kind", () => {
    const e = classifyHttpError({ status: 422, body: { message: "Review the campaign first.", errors: { review: ["Not reviewed."] }, links: null } });
    expect(e).toMatchObject({ kind: "review_required", message: "Review the campaign first." });
    expect(e.links).toBeUndefined();
  });

  it("a string amount is read as a number; a bad field never costs the others", () => {
    const e = classifyHttpError({
      status: 422,
      body: {
        message: "Upgrade required.",
        errors: { send: ["Upgrade your plan."], weird: 5 },
        links: { campaignUrl: "https://x/c/1", editorUrl: null },
        upgrade: { level: "pro", levelName: "Pro", monthlyAmount: "29.00", proratedAmount: { cents: 1 } },
        status_code: "n/a",
      },
    });
    expect(e).toMatchObject({ kind: "upgrade_required", message: "Upgrade required.", errors: { send: ["Upgrade your plan."] } });
    expect(e.upgrade).toMatchObject({ level: "pro", levelName: "Pro", monthlyAmount: 29 });
    expect(e.upgrade?.proratedAmount).toBeUndefined();
    expect(e.links).toMatchObject({ campaignUrl: "https://x/c/1" });
  });
});

describe("rules the spec does not make", () => {
  it("customFields.source: the client drops it, the emulator accepts it; the top-level source fills the field", async () => {
    const email = uniqueEmail();
    const c = h.client();
    const p = await c.people.upsert({ email, source: "shopify", customFields: { source: "import", lastName: "L" } });
    expect(lastBody().customFields).toEqual({ lastName: "L" });
    expect(p.customFields).toMatchObject({ source: "shopify", lastName: "L" });
    const raw = (await c.request({ method: "POST", path: "/api/people", body: { email: uniqueEmail(), source: "shopify", customFields: { source: "import" } } })) as {
      data: { customFields: Record<string, unknown> };
    };
    expect(raw.data.customFields.source).toBe("shopify");
  });

  it("a blocked person: unsubscribing is accepted (it stays blocked); `active` is refused and recognised by shape, not wording", async () => {
    const email = uniqueEmail("blocked");
    const c = h.client();
    await c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, statusDetails: "confirmed" });
    h.emu.markBlocked(email);
    const p = await c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, status: "inactive", statusDetails: "unsubscribed" });
    expect(p.statusDetails).toBe("blocked");
    const e = await failure(c.people.upsert({ email, source: "shopify", skipDoubleOptIn: true, status: "active", statusDetails: "confirmed" }));
    expect(isPermanentRefusalForPerson(e)).toBe(true);

    // Recognised by the operation the client made: the path carries any prefix of the base URL.
    const refusal = (operation: string, path: string, errors: Record<string, string[]>, local = false) =>
      new MarketingServiceError({ kind: "validation", status: local ? 0 : 422, message: "No.", errors, method: "POST", path, operation, local });
    expect(isPermanentRefusalForPerson(refusal("people.upsert", "/api/people", { statusDetails: ["Nope."] }))).toBe(true);
    expect(isPermanentRefusalForPerson(refusal("people.upsert", "/v1/api/people/", { status: ["Nope."] }))).toBe(true);
    expect(isPermanentRefusalForPerson(refusal("people.upsert", "/api/people", { statusDetails: ["blocked"] }, true))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal("people.upsert", "/api/people", { email: ["The contact is blocked."] }))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal("campaigns.update", "/api/campaigns/1", { status: ["Only drafts."] }))).toBe(false);
  });

  it("custom-event properties are stored as sent: `source` is not added to them", async () => {
    const email = uniqueEmail();
    const c = h.client();
    await c.people.upsert({ email, source: "shopify" });
    await c.events.custom({ email, source: "shopify", eventName: "quiz_done" });
    await c.events.product("viewed", { email, source: "shopify", id: 3 });
    const stored = (await c.people.events(email)).data;
    expect(stored.map((e) => e.properties)).toEqual([{ id: 3 }, {}]);
  });

  it("a campaign created from a template starts with its content but no subject (§2.5 templates have none)", async () => {
    const c = h.client();
    const tpl = (await c.templates.list()).data[0]!;
    const campaign = await c.campaigns.create({ name: "From template", templateId: tpl.id });
    expect(campaign.subject).toBe("");
    await c.campaigns.send(campaign.id, { force: true }); // has content: sendable
  });

  it("{id: unknown, email} upserts by the email; an unknown id alone is not found", async () => {
    const email = uniqueEmail();
    const c = h.client();
    const p = await c.people.upsert({ id: 999_999, email, source: "shopify" });
    expect(p.email).toBe(email);
    expect(h.emu.person(email)).toBeDefined();
    const again = await c.people.upsert({ id: 999_999, email, source: "shopify", tags: { vip: true } });
    expect(again.id).toBe(p.id);
    expect((await failure(c.people.upsert({ id: 999_998, source: "shopify" }))).kind).toBe("person_not_found");
  });
});

describe("independence", () => {
  it("the emulator imports nothing from app/ (it answers to the spec alone)", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const dir = new URL("../../dev/emulator/", import.meta.url);
    const offenders: string[] = [];
    for (const name of await readdir(dir)) {
      if (!name.endsWith(".ts")) continue;
      const text = await readFile(new URL(name, dir), "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
        if (/(^|\/)app\/|^~\//.test(m[1]!)) offenders.push(`${name}: ${m[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
