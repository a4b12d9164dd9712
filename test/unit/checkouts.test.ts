/**
 * checkouts/create|update|delete and the abandonment timer's cart/abandoned, per delivery: when a
 * checkout becomes a recoverable cart, what the service hears of it, and which timers are cancelled.
 * Shopify's sample (test/fixtures/shopify-webhooks/checkouts.create.json: two iPods at 199.00, token
 * "123123123", cart token "eeafa272…").
 */
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { mapAbandonedCheckout } from "../../app/sync/plan-webhook";
import type { AbandonedCheckoutSnapshot, ObjectSyncState, SyncPlan } from "../../app/sync/plan-contract";
import { eventOf, fixture, makeCtx, NOW, run, type Json } from "../sync/fixtures";

const CART = "eeafa272cebfd4b22385bc4b645e762c";
const URL = "https://checkout.local/548380009/checkouts/123123123/recover?key=example-secret-token";
const sample = (over: Record<string, Json> = {}) => ({ ...fixture("checkouts/create"), ...over });
const closed = (email: string | null): ObjectSyncState => ({ kind: "checkout", email, closed: true });

function scheduled(plan: SyncPlan): AbandonedCheckoutSnapshot {
  if (plan.abandonment?.action !== "schedule") throw new Error(`expected a schedule, got ${JSON.stringify(plan.abandonment)}`);
  return plan.abandonment.snapshot;
}

describe("a checkout with an email", () => {
  it("reports the cart (lines after discounts, no tax or shipping) and schedules its abandonment", () => {
    const plan = run("checkouts/create", sample());
    expect(plan.objectKey).toBe("checkout:123123123");
    expect(plan.objectUpdatedAt).toBe("2022-01-01T00:00:00.000Z");
    expect(plan.nextState).toEqual({ kind: "checkout", email: "example@email.com", closed: false });
    expect(plan.skipped).toBeUndefined();
    const body = eventOf(plan, "cart", "updated");
    expect(body).toMatchObject({
      email: "example@email.com",
      source: "shopify",
      id: CART,
      occurredAt: "2022-01-01T00:00:00.000Z",
      modified_at: "2022-01-01T00:00:00.000Z",
      total: 398,
      total_products: 2,
      url: URL,
      currency: "USD",
    });
    expect(body).not.toHaveProperty("referenceId");
    expect(body.products).toHaveLength(2);
    expect(plan.abandonment).toEqual({
      action: "schedule",
      key: "123123123",
      snapshot: {
        token: "123123123",
        cartToken: CART,
        cartId: CART,
        email: "example@email.com",
        referenceId: "603851970716743426",
        url: URL,
        currency: "USD",
        total: 398,
        totalProducts: 2,
        products: body.products,
        updatedAt: "2022-01-01T00:00:00.000Z",
      },
    });
  });

  it("is in the buyer's presentment currency, else the checkout's, else the shop's", () => {
    const currency = (over: Record<string, Json>, shop?: string) => eventOf(run("checkouts/update", sample(over), makeCtx({ currency: shop })), "cart", "updated").currency;
    expect(currency({ presentment_currency: "EUR", currency: "USD" })).toBe("EUR");
    expect(currency({ presentment_currency: null, currency: "GBP" }, "USD")).toBe("GBP");
    expect(currency({ presentment_currency: null, currency: null }, "CAD")).toBe("CAD");
    const none = run("checkouts/update", sample({ presentment_currency: null, currency: null }), makeCtx({ currency: undefined }));
    expect(eventOf(none, "cart", "updated")).not.toHaveProperty("currency");
    expect(scheduled(none).currency).toBeNull();
  });

  it("takes the customer's email when the checkout has none (or an unusable one)", () => {
    for (const email of [null, "not an email", "  "]) {
      const plan = run("checkouts/update", sample({ email }));
      expect(eventOf(plan, "cart", "updated").email).toBe("john@example.com");
    }
    expect(eventOf(run("checkouts/update", sample({ email: " Ann@Example.COM " })), "cart", "updated").email).toBe("ann@example.com");
  });

  it("without updated_at happened when it was received", () => {
    const plan = run("checkouts/update", sample({ updated_at: null }));
    expect(plan.objectUpdatedAt).toBeNull();
    const body = eventOf(plan, "cart", "updated");
    expect(body.occurredAt).toBe(NOW.toISOString());
    expect(body).not.toHaveProperty("modified_at");
  });

  it("is named by its token, else its id, else its cart token; the cart id is the cart token when there is one", () => {
    const byId = run("checkouts/update", sample({ token: null, id: 981820079255243500 }));
    expect(byId.objectKey).toBe("checkout:981820079255243500");
    expect(byId.abandonment).toMatchObject({ key: "981820079255243500" });
    expect(eventOf(byId, "cart", "updated").id).toBe(CART);
    const byCart = run("checkouts/update", sample({ token: null, id: null }));
    expect(byCart.objectKey).toBe(`checkout:${CART}`);
    const noCart = run("checkouts/update", sample({ cart_token: "" }));
    expect(eventOf(noCart, "cart", "updated").id).toBe("123123123");
    expect(scheduled(noCart)).toMatchObject({ token: "123123123", cartToken: null, cartId: "123123123" });
  });

  it("of a guest has no reference id in its snapshot", () => {
    expect(scheduled(run("checkouts/update", sample({ customer: null }))).referenceId).toBeNull();
  });
});

describe("a checkout that cannot or need not be recovered", () => {
  it("without any email sends nothing, schedules nothing and keeps what was remembered", () => {
    const prior: ObjectSyncState = { kind: "checkout", email: null, closed: false };
    const plan = run("checkouts/update", sample({ email: null, customer: { id: 5, email: null } }), makeCtx({ prior }));
    expect(plan).toEqual({
      objectKey: "checkout:123123123",
      objectUpdatedAt: "2022-01-01T00:00:00.000Z",
      calls: [],
      nextState: prior,
      skipped: "checkout has no email yet: nothing to recover",
    });
  });

  it("completed cancels the timers of its checkout and cart tokens, and is remembered closed", () => {
    const plan = run("checkouts/update", sample({ completed_at: "2026-04-01T00:00:00Z" }));
    expect(plan).toEqual({
      objectKey: "checkout:123123123",
      objectUpdatedAt: "2022-01-01T00:00:00.000Z",
      calls: [],
      nextState: { kind: "checkout", email: "example@email.com", closed: true },
      abandonment: { action: "cancel", keys: ["123123123", CART] },
      skipped: "checkout completed",
    });
  });

  it("already closed never restarts the timer, and keeps the email first remembered", () => {
    const plan = run("checkouts/update", sample({ email: "late@example.com" }), makeCtx({ prior: closed("first@example.com") }));
    expect(plan).toMatchObject({
      calls: [],
      nextState: closed("first@example.com"),
      abandonment: { action: "cancel", keys: ["123123123", CART] },
      skipped: "checkout already closed",
    });
    const noEmail = run("checkouts/update", sample({ email: null, customer: null }), makeCtx({ prior: closed(null) }));
    expect(noEmail.nextState).toEqual(closed(null));
    const completedLate = run("checkouts/update", sample({ completed_at: "2026-04-01T00:00:00Z" }), makeCtx({ prior: closed(null) }));
    expect(completedLate.skipped).toBe("checkout completed");
  });

  it("whose cart token equals its token cancels that timer once", () => {
    const plan = run("checkouts/update", sample({ cart_token: "123123123", completed_at: "2026-04-01T00:00:00Z" }));
    expect(plan.abandonment).toEqual({ action: "cancel", keys: ["123123123"] });
    const noCart = run("checkouts/update", sample({ cart_token: null, completed_at: "2026-04-01T00:00:00Z" }));
    expect(noCart.abandonment).toEqual({ action: "cancel", keys: ["123123123"] });
  });
});

describe("a deleted checkout", () => {
  it("cancels every timer it may have (cart token, id), sends nothing and is remembered closed", () => {
    const plan = run("checkouts/delete", fixture("checkouts/delete"));
    expect(plan).toEqual({
      objectKey: "checkout:981820079255243500",
      objectUpdatedAt: null,
      calls: [],
      nextState: { kind: "checkout", email: null, closed: true },
      abandonment: { action: "cancel", keys: [CART, "981820079255243500"] },
      skipped: "checkout deleted: abandonment cancelled",
    });
  });

  it("keeps the remembered email, and names each token once", () => {
    const prior: ObjectSyncState = { kind: "checkout", email: "ann@example.com", closed: false };
    const plan = run("checkouts/delete", { token: "t1", cart_token: "t1", id: null }, makeCtx({ prior }));
    expect(plan.objectKey).toBe("checkout:t1");
    expect(plan.nextState).toEqual(closed("ann@example.com"));
    expect(plan.abandonment).toEqual({ action: "cancel", keys: ["t1"] });
  });
});

describe("the abandonment timer firing", () => {
  const snapshotOf = (over: Record<string, Json> = {}) => ({ ...JSON.parse(JSON.stringify(scheduled(run("checkouts/create", sample())))), ...over });
  const later = makeCtx({ now: new Date("2026-05-01T13:00:00.000Z"), settings: { source: "web-shop" } });
  const abandonedBody = (snapshot: unknown): Json => {
    const call = mapAbandonedCheckout(snapshot, later);
    return call.op === "event" ? call.body : null;
  };

  it("sends exactly one cart/abandoned, dated when it fired, with the cart as last seen", () => {
    expect(mapAbandonedCheckout(snapshotOf(), later)).toEqual({
      op: "event",
      type: "cart",
      action: "abandoned",
      body: {
        email: "example@email.com",
        source: "web-shop",
        id: CART,
        occurredAt: "2026-05-01T13:00:00.000Z",
        products: snapshotOf().products,
        total: 398,
        total_products: 2,
        url: URL,
        currency: "USD",
        modified_at: "2022-01-01T00:00:00.000Z",
      },
    });
  });

  it("names the person by the customer id when the snapshot has no email, and fails without either", () => {
    expect(abandonedBody(snapshotOf({ email: null }))).toMatchObject({ referenceId: "603851970716743426" });
    expect(() => mapAbandonedCheckout(snapshotOf({ email: null, referenceId: null }), later)).toThrow(
      "Checkout 123123123 has no person to attach the cart event to",
    );
  });

  it("of a timer stored with a blank cart id names the cart by its cart token, else its checkout token", () => {
    const body = (over: Record<string, Json>) => abandonedBody(snapshotOf(over));
    expect(body({ cartId: "" }).id).toBe(CART);
    expect(body({ cartId: " ", cartToken: "  " }).id).toBe("123123123");
    expect(body({ cartId: "", cartToken: null }).id).toBe("123123123");
    expect(body({ cartId: "", cartToken: 42 }).id).toBe("123123123");
    expect(body({ cartId: "kept" }).id).toBe("kept");
  });

  it("refuses a stored snapshot that is not one with the snapshot rules' reasons (the timer's lastError), not a crash", () => {
    for (const bad of [null, undefined, "snapshot", 7, { token: "x" }, snapshotOf({ cartId: 5 }), snapshotOf({ cartId: undefined })]) {
      expect(() => mapAbandonedCheckout(bad, later)).toThrow(ZodError);
    }
    expect(() => mapAbandonedCheckout(null, later)).toThrow(/expected object/);
    expect(() => mapAbandonedCheckout(snapshotOf({ cartId: 5 }), later)).toThrow(/cartId/);
  });
});
