import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  asksToRetry,
  classifyHttpError,
  isMarketingServiceError,
  isPermanentRefusalForPerson,
  localValidationError,
  MarketingServiceError,
  notAcceptedError,
  parseRetryAfter,
} from "~/services/marketing/marketing-error";

const classify = (status: number, body?: unknown, retryAfter?: string) =>
  classifyHttpError({ status, body, retryAfter, method: "POST", path: "/api/people" });

describe("what a service error is classified as (spec §7)", () => {
  it("reads the message before the status", () => {
    expect(classify(400, { message: "Unauthenticated." }).kind).toBe("unauthenticated");
    expect(classify(400, { message: " unauthenticated " }).kind).toBe("unauthenticated");
    expect(classify(400, { message: "Person not found." }).kind).toBe("person_not_found");
    expect(classify(404, { message: "Person not found" }).kind).toBe("person_not_found");
    expect(classify(404, { message: "Campaign not found" }).kind).toBe("campaign_not_found");
    expect(classify(404, { message: "The person not found here" }).kind).toBe("client_error");
    expect(classify(404, { message: "xunauthenticated" }).kind).toBe("client_error");
    expect(classify(404, { message: "unauthenticated now" }).kind).toBe("client_error");
    expect(classify(404, { message: "no campaign not found" }).kind).toBe("client_error");
    expect(classify(404, { message: "campaign not found, sorry" }).kind).toBe("client_error");
    expect(classify(404, { message: "my person not found" }).kind).toBe("client_error");
    expect(classify(404, { message: "person not found: 7" }).kind).toBe("client_error");
  });

  it("rate limits carry Retry-After and are retryable", () => {
    const e = classify(429, {}, "7");
    expect(e).toMatchObject({ kind: "rate_limited", retryable: true, retryAfterMs: 7000, status: 429, message: "HTTP 429" });
    expect(classify(429, {}).retryAfterMs).toBeUndefined();
  });

  it("401 is unauthenticated; 403 is billing, a plugin key, a retry, or a client error", () => {
    expect(classify(401, {}).kind).toBe("unauthenticated");
    expect(classify(403, { message: "Your Billing lapsed" }).kind).toBe("account_inactive");
    expect(classify(403, { message: "Use a key from the dashboard" }).kind).toBe("plugin_key_not_allowed");
    expect(classify(403, { message: "not for the CLI" }).kind).toBe("plugin_key_not_allowed");
    expect(classify(403, { message: "a Plugin key" }).kind).toBe("plugin_key_not_allowed");
    expect(classify(403, { message: "CLIENT only" }).kind).toBe("client_error");
    expect(classify(403, { message: "Not eligible, please try again later" })).toMatchObject({ kind: "retry_later", retryable: true });
    expect(classify(403, { message: "Forbidden", errors: { email: ["bad"] } }).kind).toBe("client_error");
    expect(classify(401, { message: "billing" }).kind).toBe("unauthenticated");
    expect(classify(400, { message: "billing dashboard" }).kind).toBe("client_error");
  });

  it("field errors name campaign problems, limits and rejected test recipients", () => {
    expect(classify(422, { errors: { review: ["needs review"] } }).kind).toBe("review_required");
    expect(classify(422, { errors: { send: ["limit"] } }).kind).toBe("sending_limit");
    expect(classify(422, { errors: { send: ["limit"] }, upgrade: { url: "https://x.example" } }).kind).toBe("upgrade_required");
    expect(classify(422, { errors: { scheduledAt: ["past"] } }).kind).toBe("scheduled_at_invalid");
    const e = classify(422, {
      errors: { recipients: ["a@example.com is blocked", "a@example.com again"], "recipients.1": ["b@x.example bounced"], other: ["c@example.com"] },
    });
    expect(e.kind).toBe("test_send_recipient_rejected");
    expect(e.rejectedRecipients).toEqual(["a@example.com", "b@x.example"]);
    expect(classify(422, { errors: { recipients: ["alice.smith@example.com: hard bounce"] } }).rejectedRecipients).toEqual(["alice.smith@example.com"]);
    expect(classify(422, { errors: { recipients: ["too many"] } }).kind).toBe("validation");
    expect(classify(422, { errors: { xrecipients: ["a@example.com"] } }).rejectedRecipients).toBeUndefined();
  });

  it("a message asking to retry makes any 4xx retry_later, not a 5xx", () => {
    expect(classify(422, { message: "Send failed, please retry." }).kind).toBe("retry_later");
    expect(classify(400, { message: "x", errors: { campaign: ["Try again in a minute"] } }).kind).toBe("retry_later");
    expect(classify(400, { message: "x", errors: { other: ["Try again in a minute"] } }).kind).toBe("validation");
    expect(classify(500, { message: "please retry" })).toMatchObject({ kind: "server_error", retryable: true });
    expect(classify(499, { message: "please retry" }).kind).toBe("retry_later");
  });

  it("validation, server errors, retryable client statuses and the rest", () => {
    expect(classify(400, { errors: { email: ["invalid"] } })).toMatchObject({ kind: "validation", retryable: false, errors: { email: ["invalid"] } });
    expect(classify(422, {})).toMatchObject({ kind: "validation", retryable: false });
    expect(classify(500, { errors: { email: ["x"] } }).kind).toBe("server_error");
    expect(classify(503, undefined)).toMatchObject({ kind: "server_error", retryable: true, message: "HTTP 503", method: "POST", path: "/api/people" });
    for (const s of [408, 409, 425]) expect(classify(s, {})).toMatchObject({ kind: "retry_later", retryable: true });
    expect(classify(400, { message: "Bad" })).toMatchObject({ kind: "client_error", retryable: false, message: "Bad", local: false });
    expect(classify(404, {}).kind).toBe("client_error");
  });
});

describe("errors around the classification", () => {
  it("parses Retry-After as seconds or a date, never negative", () => {
    const now = Date.parse("2026-11-26T10:00:00Z");
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter("")).toBeUndefined();
    expect(parseRetryAfter(" 2 ", now)).toBe(2000);
    expect(parseRetryAfter("1.5", now)).toBe(1500);
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("0.25", now)).toBe(250);
    expect(parseRetryAfter("Thu, 26 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Thu, 26 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("2s", now)).toBeUndefined();
    expect(parseRetryAfter("x2", now)).toBeUndefined();
  });

  it("asks to retry only in the message or errors.campaign", () => {
    expect(asksToRetry("please re-try")).toBe(true);
    expect(asksToRetry("TRY AGAIN")).toBe(true);
    expect(asksToRetry("retrying")).toBe(false);
    expect(asksToRetry("no", { campaign: ["retry"] })).toBe(true);
    expect(asksToRetry("no", { send: ["retry"] })).toBe(false);
  });

  it("a 2xx with success: false is not accepted, in the service's words when it gives some", () => {
    expect(notAcceptedError(200, { message: " busy " }, "POST", "/api/events")).toMatchObject({
      kind: "not_accepted",
      retryable: true,
      status: 200,
      method: "POST",
      path: "/api/events",
      message: "The service did not accept the event: busy",
    });
    expect(notAcceptedError(200, { message: "  " }, "POST", "/e").message).toBe("The service did not accept the event (success: false)");
    expect(notAcceptedError(200, {}, "POST", "/e").message).toBe("The service did not accept the event (success: false)");
  });

  it("a local validation error names every field", () => {
    const r = z.object({ email: z.string(), tags: z.array(z.string()) }).safeParse({ email: 1, tags: [2] });
    const e = localValidationError("person upsert", r.error!);
    expect(e).toMatchObject({ kind: "validation", status: 0, local: true, retryable: false, name: "MarketingServiceError" });
    expect(Object.keys(e.errors!)).toEqual(["email", "tags.0"]);
    expect(e.message).toMatch(/^Invalid person upsert request — email: .+, tags\.0: .+$/);
    expect(e.cause).toBe(r.error);
    const whole = localValidationError("x", z.string().safeParse(1).error!);
    expect(Object.keys(whole.errors!)).toEqual(["_body"]);
    const two = localValidationError("x", z.string().min(5).email().safeParse("a").error!);
    expect(two.errors!._body).toHaveLength(2);
    expect(two.message).toContain("; ");
    expect(isMarketingServiceError(e)).toBe(true);
    expect(isMarketingServiceError(new Error("x"))).toBe(false);
    expect(new MarketingServiceError({ kind: "validation", status: 1, message: "m", retryable: true }).retryable).toBe(true);
    expect(new MarketingServiceError({ kind: "validation", status: 1, message: "m" }).cause).toBeUndefined();
  });

  it("a refusal of a person's status by the service is permanent for that person", () => {
    // Known by the operation the client made (people.upsert), whatever path the base URL gives it.
    const refusal = (over: { operation?: string; path?: string; status?: number; errors?: object } = {}) =>
      classifyHttpError({ status: 422, body: { errors: over.errors ?? { status: ["blocked"] } }, method: "POST", path: over.path ?? "/api/people/", operation: "operation" in over ? over.operation : "people.upsert" });
    expect(isPermanentRefusalForPerson(refusal())).toBe(true);
    expect(isPermanentRefusalForPerson(refusal({ errors: { statusDetails: ["x"] } }))).toBe(true);
    expect(isPermanentRefusalForPerson(refusal({ errors: { email: ["x"] } }))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal({ operation: "campaigns.update", path: "/api/campaigns/7" }))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal({ operation: "people.delete", path: "/api/people/7" }))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal({ path: "/marketing/v1/api/people" }))).toBe(true);
    expect(isPermanentRefusalForPerson(refusal({ operation: undefined }))).toBe(false);
    expect(isPermanentRefusalForPerson(refusal({ errors: { email: ["x"], status: ["blocked"] } }))).toBe(true);
    expect(isPermanentRefusalForPerson(classify(400, { message: "Bad" }))).toBe(false);
    // A server failure that happens to name the field is not a refusal of the person.
    expect(isPermanentRefusalForPerson(classify(500, { errors: { status: ["unavailable"] } }))).toBe(false);
    expect(isPermanentRefusalForPerson(new MarketingServiceError({ kind: "validation", status: 422, message: "m", method: "POST", errors: { status: ["x"] } }))).toBe(false);
    const local = new MarketingServiceError({ kind: "validation", status: 0, local: true, message: "m", method: "POST", path: "/api/people", operation: "people.upsert", errors: { status: ["x"] } });
    expect(isPermanentRefusalForPerson(local)).toBe(false);
  });
});
