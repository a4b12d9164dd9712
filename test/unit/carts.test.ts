import { describe, expect, it } from "vitest";
import { cartPermalink } from "~/sync/mappers/carts";
import { eventOf, fixture, makeCtx, NOW, run, type Json } from "../sync/fixtures";

// Shopify's sample cart (test/fixtures/shopify-webhooks/carts.create.json: 3 × "Example T-Shirt - Small"
// at 19.99) and the cart event the service receives for it (docs/event-mapping.md, Cart events).
const sample = (over: Record<string, Json> = {}) => ({ ...fixture("carts/create"), ...over });

describe("a cart webhook", () => {
  it("of an anonymous cart sends nothing, and says why", () => {
    const plan = run("carts/create", sample());
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("cart is not tied to a person (no email or customer)");
    expect(plan.objectKey).toBe("cart:exampleCartId");
  });

  it("of a cart with an email sends cart/created with its lines, total and permalink", () => {
    const plan = run("carts/create", sample({ email: " Cara@Example.com ", currency: "USD" }));
    const body = eventOf(plan, "cart", "created");
    expect(body).toMatchObject({
      email: "cara@example.com",
      source: "shopify",
      id: "exampleCartId",
      occurredAt: "2022-01-01T00:00:00.000Z",
      modified_at: "2022-01-01T00:00:00.000Z",
      total: 59.97,
      total_products: 3,
      currency: "USD",
      url: "https://shop.example.com/cart/704912205188288500:3",
    });
    expect(body.products).toHaveLength(1);
    expect(plan.nextState).toEqual({ kind: "cart", created: true });
  });

  it("names the person by the customer's email, else by the customer id", () => {
    expect(eventOf(run("carts/update", sample({ customer: { id: 7, email: "c@example.com" } })), "cart", "updated")).toMatchObject({ email: "c@example.com" });
    const byId = eventOf(run("carts/update", sample({ customer_id: 7 })), "cart", "updated");
    expect(byId).toMatchObject({ referenceId: "7" });
    expect(byId).not.toHaveProperty("email");
  });

  it("without updated_at happened when it was received; its currency comes from the lines, then the shop", () => {
    const line = fixture("carts/create").line_items[0];
    const eur = { ...line, price_set: { shop_money: { amount: "19.99", currency_code: "EUR" } } };
    const plan = run("carts/update", sample({ email: "c@example.com", updated_at: null, line_items: [eur] }), makeCtx({ currency: "JPY" }));
    expect(eventOf(plan, "cart", "updated")).toMatchObject({ occurredAt: NOW.toISOString(), currency: "EUR" });
  });
});

describe("a cart webhook, continued", () => {
  it("of an anonymous cart keeps what was remembered of the cart", () => {
    const prior = { kind: "cart", created: true } as const;
    expect(run("carts/update", sample(), makeCtx({ prior })).nextState).toEqual(prior);
  });

  it("of an emptied cart, or of lines without prices, still sends the cart in the shop's currency", () => {
    const empty = eventOf(run("carts/update", sample({ email: "c@example.com", line_items: [] }), makeCtx({ currency: "EUR" })), "cart", "updated");
    expect(empty).toMatchObject({ total: 0, total_products: 0, currency: "EUR", url: "https://shop.example.com/cart" });
    const { price_set: _dropped, ...line } = fixture("carts/create").line_items[0];
    for (const bare of [line, { ...line, price_set: {} }]) {
      const body = eventOf(run("carts/update", sample({ email: "c@example.com", line_items: [bare] }), makeCtx({ currency: "EUR" })), "cart", "updated");
      expect(body).toMatchObject({ currency: "EUR", total_products: 3 });
    }
  });
});

describe("the cart permalink", () => {
  it("rebuilds every line, without a doubled slash", () => {
    const lines = [{ variant_id: "11", quantity: 2 }, { variant_id: "12", quantity: 1 }];
    expect(cartPermalink("https://shop.example.com//", lines)).toBe("https://shop.example.com/cart/11:2,12:1");
  });

  it("falls back to /cart when a line lacks its variant or a quantity (a partial cart would mislead)", () => {
    expect(cartPermalink("https://s.example", [{ variant_id: "11", quantity: 2 }, { variant_id: null, quantity: 1 }])).toBe("https://s.example/cart");
    expect(cartPermalink("https://s.example", [{ variant_id: "11", quantity: 0 }])).toBe("https://s.example/cart");
    expect(cartPermalink("https://s.example", [{ variant_id: "11", quantity: null }])).toBe("https://s.example/cart");
    expect(cartPermalink("https://s.example", [])).toBe("https://s.example/cart");
  });
});
