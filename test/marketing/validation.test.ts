/** Local validation (schemas) and error classification: requests fail before sending, with the field named. */
import { describe, expect, it } from "vitest";
import { classifyHttpError, parseRetryAfter } from "../../app/services/marketing/marketing-error";
import {
  campaignScheduleSchema,
  cartEventSchema,
  personSchema,
  personUpsertSchema,
  serviceCallSchema,
  testSendSchema,
} from "../../app/services/marketing/schemas";
import { failure, useEmulator } from "./support";

const h = useEmulator();

const fields = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  (r.error?.issues ?? []).map((i) => i.path.map(String).join("."));

describe("request schemas", () => {
  it("person upsert needs email or id and a source, drops customFields.source, refuses unknown keys", () => {
    expect(fields(personUpsertSchema.safeParse({}))).toEqual(expect.arrayContaining(["source", "email", "id"]));
    // §4.1 only says the two collide; the client keeps the top-level one and drops the other
    expect(personUpsertSchema.parse({ email: "a@b.example", source: "s", customFields: { source: "x", lastName: "L" } }).customFields).toEqual({ lastName: "L" });
    expect(fields(personUpsertSchema.safeParse({ email: "a@b.example", source: "s", firstName: "typo" }))).toEqual([""]);
    expect(fields(personUpsertSchema.safeParse({ email: "a@b.example", source: "s", statusDetails: "blocked" }))).toEqual(["statusDetails"]);
    expect(personUpsertSchema.safeParse({ id: 5, source: "s" }).success).toBe(true);
  });

  it("event bodies need a person handle, a source and an id; uuid alone is enough", () => {
    expect(fields(cartEventSchema.safeParse({}))).toEqual(expect.arrayContaining(["source", "id", "email"]));
    expect(cartEventSchema.safeParse({ uuid: "0b6b6a4e-8d1c-4a5e-9a57-3c1f1d1b2c3d", source: "s", id: 1 }).success).toBe(true);
    expect(cartEventSchema.safeParse({ referenceId: 42, source: "s", id: "c" }).success).toBe(true);
    expect(fields(cartEventSchema.safeParse({ email: "a@b.example", source: "s", id: 1, currency: "euro" }))).toEqual(["currency"]);
  });

  it("schedule needs a future datetime with an explicit offset", () => {
    expect(campaignScheduleSchema.safeParse({ scheduledAt: "2099-01-01T00:00:00Z" }).success).toBe(true);
    expect(campaignScheduleSchema.safeParse({ scheduledAt: "2099-01-01T00:00:00+05:30" }).success).toBe(true);
    expect(fields(campaignScheduleSchema.safeParse({ scheduledAt: "2099-01-01T00:00:00" }))).toEqual(["scheduledAt"]);
    expect(fields(campaignScheduleSchema.safeParse({ scheduledAt: "2000-01-01T00:00:00Z" }))).toEqual(["scheduledAt"]);
  });

  it("test-send recipients: 1..10, unique, ≤254 chars", () => {
    const long = `${"a".repeat(250)}@b.io`;
    expect(fields(testSendSchema.safeParse({ recipients: [long] }))).toEqual(["recipients.0"]);
    expect(testSendSchema.safeParse({ recipients: ["a@b.io"] }).success).toBe(true);
  });

  it("ServiceCall checks the body against its event type", () => {
    const ok = serviceCallSchema.safeParse({ op: "event", type: "product", action: "viewed", body: { email: "a@b.example", source: "s", id: 1 } });
    expect(ok.success).toBe(true);
    const wrongBody = serviceCallSchema.safeParse({ op: "event", type: "subscription", action: "renewed", body: { email: "a@b.example", source: "s", id: 1, total_products: 3 } });
    expect(wrongBody.success).toBe(false);
    expect(fields(serviceCallSchema.safeParse({ op: "person.delete", idOrEmail: "" }))).toEqual(["idOrEmail"]);
  });

  it("person responses are lenient: id → decimal string, tags null → [], [] custom fields → {}, unknown fields kept", () => {
    const p = personSchema.parse({ id: 17, email: "a@b.example", status: "active", tags: null, customFields: [], extra: 1 });
    expect(p).toMatchObject({ id: "17", tags: [], customFields: {}, extra: 1 });
  });
});

describe("client refuses invalid calls before sending", () => {
  it.each([
    ["perPage over 100", (c: ReturnType<typeof h.client>) => c.people.list({ perPage: 101 }), "perPage"],
    ["events per_page 0", (c: ReturnType<typeof h.client>) => c.people.events("a@b.example", { perPage: 0 }), "perPage"],
    ["filter[event] > 100", (c: ReturnType<typeof h.client>) => c.people.events("a@b.example", { event: "e".repeat(101) }), "event"],
    ["filter[search] > 255", (c: ReturnType<typeof h.client>) => c.people.events("a@b.example", { search: "s".repeat(256) }), "search"],
    ["dateTo not Y-m-d", (c: ReturnType<typeof h.client>) => c.people.events("a@b.example", { dateTo: "2024-02-30" }), "dateTo"],
    ["bad status filter", (c: ReturnType<typeof h.client>) => c.people.list({ status: "preparing" as never }), "status"],
    ["check with a non-email", (c: ReturnType<typeof h.client>) => c.people.check("not-an-email"), "_body"],
    ["campaign create without name", (c: ReturnType<typeof h.client>) => c.campaigns.create({ name: " " }), "name"],
    ["campaign update with nothing", (c: ReturnType<typeof h.client>) => c.campaigns.update(1, {}), "_body"],
    ["campaign list status preparing", (c: ReturnType<typeof h.client>) => c.campaigns.list({ status: "preparing" as never }), "status"],
    ["campaign id not an integer", (c: ReturnType<typeof h.client>) => c.campaigns.get(1.5), "_body"],
    ["upsert without source", (c: ReturnType<typeof h.client>) => c.people.upsert({ email: "a@b.example" } as never), "source"],
    ["product event without id", (c: ReturnType<typeof h.client>) => c.events.product("viewed", { email: "a@b.example", source: "s" } as never), "id"],
  ])("%s", async (_name, run, field) => {
    const e = await failure(run(h.client()));
    expect(e).toMatchObject({ kind: "validation", status: 0, local: true, retryable: false });
    expect(e.errors).toHaveProperty([field]);
    expect(e.message).toContain(field);
    expect(h.emu.requests).toHaveLength(0);
  });
});

describe("error classification (§7) from status + body", () => {
  const k = (status: number, body: unknown, retryAfter?: string) => classifyHttpError({ status, body, retryAfter }).kind;
  it("message wins over status for Unauthenticated and not-found", () => {
    expect(k(401, { message: "Unauthenticated" })).toBe("unauthenticated");
    expect(k(403, { message: "Unauthenticated." })).toBe("unauthenticated");
    expect(k(500, { message: "Unauthenticated" })).toBe("unauthenticated");
    expect(k(200, { message: "Person not found" })).toBe("person_not_found");
    expect(k(422, { message: "Campaign not found." })).toBe("campaign_not_found");
    expect(k(404, {})).toBe("client_error");
  });
  it("403 by message; 422 by errors key", () => {
    expect(k(403, { message: "Please resolve your billing status" })).toBe("account_inactive");
    expect(k(403, { message: "A dashboard or CLI key is required" })).toBe("plugin_key_not_allowed");
    expect(k(422, { errors: { review: ["x"] } })).toBe("review_required");
    expect(k(422, { errors: { send: ["x"] }, upgrade: { level: "pro" } })).toBe("upgrade_required");
    expect(k(422, { errors: { send: ["x"] } })).toBe("sending_limit");
    expect(k(422, { errors: { scheduledAt: ["x"] } })).toBe("scheduled_at_invalid");
    expect(k(422, { errors: { recipients: ["The recipient bad@x.example is not verified."] } })).toBe("test_send_recipient_rejected");
    expect(k(422, { errors: { recipients: ["The recipients field is required."] } })).toBe("validation");
    expect(k(503, {})).toBe("server_error");
  });
  it("429 carries Retry-After in ms (seconds or HTTP date)", () => {
    expect(classifyHttpError({ status: 429, body: {}, retryAfter: "7" }).retryAfterMs).toBe(7000);
    const now = Date.parse("2030-01-01T00:00:00Z");
    expect(parseRetryAfter("Tue, 01 Jan 2030 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("garbage")).toBeUndefined();
  });
});
