import { describe, expect, it } from "vitest";
import { callKind, contentHash, decide, type ObjectMemory } from "~/pipeline/decide";
import type { SyncPlan } from "~/sync/plan-contract";
import type { ServiceCall } from "~/services/marketing/schemas";

// Loose literals: decide() reads only op/type/action/body, so the calls need not be full payloads.
const upsert = (email: string, extra: Record<string, unknown> = {}) =>
  ({ op: "person.upsert", body: { email, ...extra } }) as unknown as ServiceCall;
const del = (idOrEmail: string) => ({ op: "person.delete", idOrEmail }) as ServiceCall;
const event = (type: string, action: string, body: Record<string, unknown>) =>
  ({ op: "event", type, action, body }) as unknown as ServiceCall;
const custom = (eventName: string) => ({ op: "event.custom", body: { eventName } }) as unknown as ServiceCall;

const plan = (calls: ServiceCall[], extra: Partial<SyncPlan> = {}): SyncPlan => ({
  objectKey: "customer:1",
  objectUpdatedAt: "2026-11-26T10:00:00.000Z",
  calls,
  nextState: null,
  ...extra,
});
const remembered = (p: SyncPlan, memory?: ObjectMemory) => decide(p, memory).next!;

describe("deciding what a delivery sends", () => {
  it("drops a version older than the one applied and leaves the memory alone", () => {
    const memory = remembered(plan([upsert("a@example.com")]));
    const d = decide(plan([upsert("b@example.com")], { objectUpdatedAt: "2026-11-26T09:00:00.000Z" }), memory);
    expect(d).toMatchObject({ outcome: "stale", calls: [], next: null });
    expect(d.detail).toContain("2026-11-26T10:00:00.000Z");
  });

  it("applies the same version again and a newer one, and an event without a version always", () => {
    const memory = remembered(plan([upsert("a@example.com")]));
    expect(decide(plan([upsert("b@example.com")]), memory).outcome).toBe("planned");
    expect(decide(plan([upsert("b@example.com")], { objectUpdatedAt: "2026-11-26T11:00:00.000Z" }), memory).outcome).toBe("planned");
    const d = decide(plan([upsert("b@example.com")], { objectUpdatedAt: null }), memory);
    expect(d.outcome).toBe("planned");
    expect(d.next!.lastUpdatedAt).toEqual(new Date("2026-11-26T10:00:00.000Z"));
  });

  it("sends only the calls whose content changed since the last of their kind", () => {
    const memory = remembered(plan([upsert("a@example.com"), event("order", "created", { id: 1 })]));
    const d = decide(plan([upsert("a@example.com"), event("order", "created", { id: 2 })]), memory);
    expect(d.outcome).toBe("planned");
    expect(d.calls).toEqual([event("order", "created", { id: 2 })]);
  });

  it("reports unchanged when every call equals the last one, ignored when the plan has none", () => {
    const p = plan([upsert("a@example.com")], { skipped: "nothing new" });
    const d = decide(p, remembered(p));
    expect(d).toMatchObject({ outcome: "unchanged", calls: [], detail: "nothing new" });
    expect(decide(plan([]), undefined)).toMatchObject({ outcome: "ignored", calls: [], detail: null });
  });

  it("always sends a deletion, and a deletion forgets what was sent before", () => {
    const first = remembered(plan([upsert("a@example.com"), del("a@example.com")]));
    expect(decide(plan([del("a@example.com")]), first).calls).toEqual([del("a@example.com")]);
    const afterDelete = remembered(plan([del("a@example.com")]), remembered(plan([upsert("a@example.com")])));
    expect(decide(plan([upsert("a@example.com")]), afterDelete).calls).toEqual([upsert("a@example.com")]);
  });

  it("a deleted event also starts the object's history over", () => {
    const memory = remembered(plan([upsert("a@example.com")]));
    const afterDelete = remembered(plan([event("order", "deleted", { id: 1 })]), memory);
    expect(decide(plan([upsert("a@example.com")]), afterDelete).outcome).toBe("planned");
    const afterUpdate = remembered(plan([event("order", "updated", { id: 1 })]), memory);
    expect(decide(plan([upsert("a@example.com")]), afterUpdate).outcome).toBe("unchanged");
  });

  it("sends a new occurrence even when its calls read like the last ones, and drops a repeat of it", () => {
    const p1 = plan([event("subscription", "paused", { id: 1 })], { occurrence: "pause-1" });
    const m1 = remembered(p1);
    expect(decide(p1, m1)).toMatchObject({ outcome: "unchanged", calls: [] });
    const p2 = plan([event("subscription", "paused", { id: 1 })], { occurrence: "pause-2" });
    expect(decide(p2, m1).calls).toEqual(p2.calls);
    expect(decide(p2, undefined).outcome).toBe("planned");
  });

  it("remembers the plan's state, else keeps the previous one, and hands on the abandonment", () => {
    const m1 = remembered(plan([upsert("a@example.com")], { nextState: { kind: "x" } as never }));
    expect(m1.state).toEqual({ kind: "x" });
    expect(remembered(plan([upsert("b@example.com")]), m1).state).toEqual({ kind: "x" });
    expect(remembered(plan([upsert("b@example.com")]), undefined).state).toBeNull();
    expect(remembered(plan([]), undefined).lastUpdatedAt).toEqual(new Date("2026-11-26T10:00:00.000Z"));
    expect(remembered(plan([], { objectUpdatedAt: null }), undefined).lastUpdatedAt).toBeNull();
    const abandonment = { action: "cancel" } as never;
    expect(decide(plan([], { abandonment }), undefined).abandonment).toBe(abandonment);
  });

  it("a plan that deletes and re-creates the contact forgets every kind sent before", () => {
    const memory = remembered(plan([upsert("a@example.com"), event("order", "created", { id: 1 })]));
    const recreated = remembered(plan([del("a@example.com"), upsert("a@example.com")]), memory);
    expect(decide(plan([event("order", "created", { id: 1 })]), recreated).outcome).toBe("planned");
  });

  it("recognises an occurrence remembered by earlier versions (the stored key is #occurrence)", () => {
    const p = plan([event("subscription", "paused", { id: 1 })], { occurrence: "pause-1" });
    const stored: ObjectMemory = { lastUpdatedAt: null, contentHashes: { "#occurrence": "pause-1" }, state: null };
    expect(decide(p, stored).outcome).toBe("unchanged");
    expect(remembered(p).contentHashes["#occurrence"]).toBe("pause-1");
  });

  it("keeps other kinds' hashes across an unrelated call", () => {
    const m1 = remembered(plan([upsert("a@example.com")]));
    const m2 = remembered(plan([custom("viewed")]), m1);
    expect(decide(plan([upsert("a@example.com")]), m2).outcome).toBe("unchanged");
  });
});

describe("call kinds and content hashes", () => {
  it("names a kind by op, event type and action, or custom event name", () => {
    expect(callKind(event("order", "created", {}))).toBe("event:order:created");
    expect(callKind(custom("viewed"))).toBe("custom:viewed");
    expect(callKind(upsert("a@example.com"))).toBe("person.upsert");
  });

  it("ignores key order, undefined values and send times, but not content", () => {
    const h = contentHash(upsert("a@example.com", { firstName: "A", tags: ["x", "y"] }));
    expect(contentHash({ body: { tags: ["x", "y"], firstName: "A", email: "a@example.com" }, op: "person.upsert" } as never)).toBe(h);
    expect(contentHash(upsert("a@example.com", { firstName: "A", tags: ["x", "y"], lastName: undefined }))).toBe(h);
    for (const k of ["occurred_at", "occurredAt", "modified_at", "skipDoubleOptIn", "silent"])
      expect(contentHash(upsert("a@example.com", { firstName: "A", tags: ["x", "y"], [k]: "2026" }))).toBe(h);
    expect(contentHash(upsert("a@example.com", { firstName: "B", tags: ["x", "y"] }))).not.toBe(h);
    expect(contentHash(upsert("a@example.com", { firstName: "A", tags: ["y", "x"] }))).not.toBe(h);
    expect(contentHash(upsert("a@example.com", { firstName: "A", tags: ["x", undefined] }))).not.toBe(
      contentHash(upsert("a@example.com", { firstName: "A", tags: ["x"] })),
    );
    expect(contentHash(upsert("a@example.com", { a: 1, b: 2 }))).not.toBe(contentHash(upsert("a@example.com", { a: 2, b: 1 })));
    expect(contentHash(upsert("a@example.com", { n: [12, 3] }))).not.toBe(contentHash(upsert("a@example.com", { n: [1, 23] })));
    // jsonb stores an undefined array element as null.
    expect(contentHash(upsert("a@example.com", { n: [undefined] }))).toBe(contentHash(upsert("a@example.com", { n: [null] })));
  });

  it("hashes as earlier versions did: the hashes are stored, so a new format would resend every object once", () => {
    // Computed at 1177b52, before contentHash used safe-stable-stringify.
    const calls = [
      { op: "person.upsert", body: { email: "a@example.com", firstName: "Zoë", tags: ["vip", "b2b"], skipDoubleOptIn: true, customFields: { Ä: 1, a: null, b: [1, 23, undefined] } } },
      { op: "event", type: "order", action: "created", body: { id: "12345678901234567890", occurred_at: "2026", silent: true, items: [{ id: 12, qty: 3, price: "1.50" }, { id: 1, qty: 23 }], nested: { z: { y: { x: true } }, a: [] } } },
      { op: "event.custom", body: { eventName: "viewed", properties: { "10": "ten", "9": "nine", B: 1, a: 2, é: 3, "": 0 } } },
    ];
    expect(calls.map((c) => contentHash(c as never))).toEqual([
      "7fb87083d34782212bb4560cd7c666f23764971eb99c43931860e83fe5baeeb0",
      "60675aba4719de61191cf6b855fcdaed67a187a7e71ade697b053607c99c1aee",
      "1591aee9fe6875830547aef4367df74498990de0620fb2085bf774fe815f996f",
    ]);
  });
});
