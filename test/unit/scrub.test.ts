import { describe, expect, it } from "vitest";
import { scrub, scrubString } from "~/scrub";

describe("what a log line may carry", () => {
  it("an error keeps its stack, scrubbed like its message: the stack repeats the message's address", () => {
    const error = new Error("upsert of ann@example.com failed with Bearer mk_live_abcdef");
    expect(error.stack).toContain("ann@example.com");
    const kept = scrub({ err: error }) as { err: Error };
    expect(kept.err).toBeInstanceOf(Error);
    expect(kept.err.message).toBe("upsert of [email] failed with Bearer [redacted]");
    expect(kept.err.stack).toContain("upsert of [email] failed");
    expect(kept.err.stack).toContain("scrub.test.ts"); // where it happened stays
    expect(kept.err.stack).not.toContain("ann@example.com");
    expect(kept.err.stack).not.toContain("mk_live_abcdef");
  });

  it("an error keeps its name, and its own fields are censored or scrubbed", () => {
    const error = Object.assign(new TypeError("bad"), { code: "E1", email: "ann@example.com", note: "to bob@example.com", nested: { phone: "+1555" } });
    const kept = scrub(error) as Error & Record<string, unknown>;
    expect(kept.name).toBe("TypeError");
    expect(kept.code).toBe("E1");
    expect(kept.email).toBe("[redacted]");
    expect(kept.note).toBe("to [email]");
    expect(kept.nested).toEqual({ phone: "[redacted]" });
  });

  it("an error without a stack stays without one", () => {
    const error = new Error("x");
    error.stack = undefined;
    expect((scrub(error) as Error).stack).toBeUndefined();
  });

  it("censors sensitive keys at any depth, however they are written", () => {
    const out = scrub({
      shop: "a.myshopify.com",
      count: 3,
      ok: true,
      none: null,
      deep: { a: { b: { serviceKeyEnc: "v2:abc", "x-shopify-hmac-sha256": "h", refresh_token: "r", Set_Cookie: "c" } } },
      list: [{ email: "e", first_name: "f", default_address: { city: "x" }, browser_ip: "1.2.3.4" }],
      query: "SELECT 'Zebulon'",
      detail: "Failing row contains (1 Hidden Lane).",
    });
    expect(out).toEqual({
      shop: "a.myshopify.com",
      count: 3,
      ok: true,
      none: null,
      deep: { a: { b: { serviceKeyEnc: "[redacted]", "x-shopify-hmac-sha256": "[redacted]", refresh_token: "[redacted]", Set_Cookie: "[redacted]" } } },
      list: [{ email: "[redacted]", first_name: "[redacted]", default_address: "[redacted]", browser_ip: "[redacted]" }],
      query: "[redacted]",
      detail: "[redacted]",
    });
  });

  it("stops at a depth, keeps dates, and keeps at most 100 items of a list", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 10; i++) deep = { d: deep };
    expect(JSON.stringify(scrub(deep))).toBe(`${'{"d":'.repeat(8)}"[nested]"${"}".repeat(8)}`);
    const date = new Date("2026-01-02T03:04:05Z");
    expect(scrub({ at: date })).toEqual({ at: date });
    expect((scrub({ at: date }) as { at: Date }).at).toBeInstanceOf(Date);
    const list = scrub(Array.from({ length: 150 }, (_, i) => `to a${i}@example.com`)) as string[];
    expect(list).toHaveLength(100);
    expect(list[99]).toBe("to [email]");
    expect(scrub(7)).toBe(7);
    expect(scrub(undefined)).toBeUndefined();
  });

  it("masks addresses, also percent-encoded, in any text", () => {
    expect(scrubString("mail ann.o'x+tag@sub.example.co.uk now")).toBe("mail ann.o'[email] now");
    expect(scrubString("DELETE /api/people/ada.thompson.2%40example.com")).toBe("DELETE /api/people/[email]");
    expect(scrubString("again ada%2540example.com and ada%252540example.com")).toBe("again [email] and [email]");
    expect(scrubString("ADA@EXAMPLE.COM")).toBe("[email]");
    expect(scrubString("a@b.c stays: no top-level domain of two letters")).toBe("a@b.c stays: no top-level domain of two letters");
    expect(scrubString("user@localhost has no dot")).toBe("user@localhost has no dot");
  });

  it("masks credentials: bearer and basic headers, JWTs, Shopify tokens, named secrets", () => {
    expect(scrubString("Authorization: Bearer abc.DEF_123-~+/=")).toBe("Authorization: Bearer [redacted]");
    expect(scrubString("basic   dXNlcjpwYXNz")).toBe("basic [redacted]");
    expect(scrubString('{"header":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"}')).toBe('{"header":"[token]"}');
    expect(scrubString("t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0. rest")).toBe("t=[token] rest");
    expect(scrubString("shpat_0123abcd shprt_9ZZ shpua_x")).toBe("[token] [token] [token]");
    expect(scrubString("accessToken: shpat_0123abcd")).toBe("accessToken: [redacted]");
    expect(scrubString("refresh_token=r-secret-1&x=1")).toBe("refresh_token=[redacted]&x=1");
    expect(scrubString("session_token: s1, id_token=i1, token='t1', secret: s2, password=p, signature: g, HMAC = h"))
      .toBe("session_token: [redacted], id_token=[redacted], token='[redacted]', secret: [redacted], password=[redacted], signature: [redacted], HMAC = [redacted]");
    expect(scrubString('{"secret":"v1"}')).toBe('{"secret":"[redacted]"}');
    expect(scrubString("a tokenizer and a secretary")).toBe("a tokenizer and a secretary");
  });

  it("censors every key that names a secret or personal data, as written in code, headers or SQL errors", () => {
    const keys = [
      "apiKey", "serviceKey", "serviceKeyEnc", "accessToken", "refreshToken", "token", "idToken", "sessionToken",
      "Authorization", "cookie", "set-cookie", "secret", "apiSecret", "password", "hmac", "X-Shopify-Hmac-Sha256",
      "encryptionKey", "body", "rawBody", "payload", "call", "calls", "snapshot", "state", "request", "response", "lastResponse",
      "email", "idOrEmail", "phone", "first_name", "last_name", "name", "address", "address1", "address2", "default_address",
      "addresses", "customer", "person", "ip", "browser_ip",
      "query", "params", "parameters", "values", "detail", "where", "internalQuery",
    ];
    for (const key of keys) expect(scrub({ [key]: "x", kept: "y" }), key).toEqual({ [key]: "[redacted]", kept: "y" });
    for (const key of ["shop", "topic", "id", "attempts", "status", "code"]) expect(scrub({ [key]: "v" }), key).toEqual({ [key]: "v" });
  });

  it("stops at the same depth inside errors and lists as inside objects", () => {
    let nested: unknown = "bottom";
    for (let i = 0; i < 10; i++) nested = [nested];
    expect(JSON.stringify(scrub(nested))).toBe(`${"[".repeat(8)}"[nested]"${"]".repeat(8)}`);
    let inError: unknown = "bottom";
    for (let i = 0; i < 10; i++) inError = Object.assign(new Error(`e${i}`), { cause2: inError });
    let depth = 0;
    let at = scrub(inError) as { cause2?: unknown };
    while (at instanceof Error) {
      depth++;
      at = at.cause2 as { cause2?: unknown };
    }
    expect(depth).toBe(8);
    expect(at).toBe("[nested]");
  });

  it("masks a JWT however it ends: whole, without its signature, or with an empty one", () => {
    expect(scrubString("a eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0 b")).toBe("a [token] b");
    expect(scrubString("a eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.c2ln b")).toBe("a [token] b");
  });
});
