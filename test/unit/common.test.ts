import { describe, expect, it } from "vitest";
import {
  amount,
  cleanEmail,
  compact,
  currencyOf,
  customerLinks,
  lineUrl,
  mapAddress,
  mapCartLines,
  mapOrderLines,
  personRef,
  productUrl,
  revenueHash,
  storeActorReferenceId,
} from "~/sync/mappers/common";
import { eventCall } from "~/sync/event-bodies";
import {
  abandonedCheckoutSnapshotSchema,
  objectSyncStateSchema,
  priorOf,
  type ObjectSyncState,
} from "~/sync/plan-contract";
import { address, cartLineItem, orderLineItem } from "~/sync/payloads";
import { fixture, orderLine, type Json } from "../sync/fixtures";

// The shared helpers every mapper builds its service calls with (app/sync/mappers/common.ts): what the
// marketing service receives for a person, an address, a line; and what is remembered between deliveries
// (the state schemas of app/sync/plan-contract.ts).

const STATES: ObjectSyncState[] = [
  {
    kind: "customer",
    email: "ann@example.com",
    tags: ["vip"],
    consent: { state: "subscribed", at: "2026-04-01T10:00:00.000Z", optInLevel: "single_opt_in", contact: true, doiRequested: false },
    deleted: false,
    account: "enabled",
    segmentTags: ["Loyal"],
    segmentsLeftAt: { "42": "2026-04-02T10:00:00.000Z" },
  },
  {
    kind: "order",
    email: "ann@example.com",
    customerId: "99",
    currency: "EUR",
    status: "paid",
    total: "59.97",
    refunded: "-0.5",
    refundIds: ["7"],
    paid: true,
    fulfilled: false,
    completed: false,
    created: true,
    deleted: false,
  },
  { kind: "product", advertised: true, deleted: false },
  { kind: "checkout", email: null, closed: true },
  { kind: "cart", created: true },
  {
    kind: "subscription",
    customerId: "5",
    status: "active",
    currency: "USD",
    interval: "month",
    intervalCount: 1,
    amount: 9.5,
    planId: "p1",
    planName: "Coffee",
    startedAt: "2026-01-01T00:00:00.000Z",
    endedAt: null,
    cancelledAt: null,
    changes: 2,
  },
] as ObjectSyncState[];

const storedOrder = (over: Record<string, unknown>) => ({ ...STATES[1], ...over });

describe("what is remembered of a synced object", () => {
  it("every kind reads back from storage exactly as it was written", () => {
    for (const state of STATES) expect(objectSyncStateSchema.parse(JSON.parse(JSON.stringify(state))), state.kind).toEqual(state);
  });

  it("a state of an unknown kind, or missing a field, is refused rather than misread", () => {
    expect(objectSyncStateSchema.safeParse({ kind: "invoice" }).success).toBe(false);
    for (const state of STATES) {
      const [field] = Object.keys(state).filter((k) => k !== "kind");
      const { [field]: _dropped, ...rest } = state as Record<string, unknown>;
      if (state.kind === "subscription") continue; // its contract fields all have defaults (older states)
      expect(objectSyncStateSchema.safeParse(rest).success, `${state.kind} without ${field}`).toBe(false);
    }
  });

  it("an order remembered before `created` existed has not had order/created sent", () => {
    const { created: _unknown, ...older } = STATES[1] as Record<string, unknown>;
    expect(objectSyncStateSchema.parse(older)).toMatchObject({ kind: "order", created: false });
  });

  it("a subscription remembered before its contract details were kept reads them as unknown", () => {
    expect(objectSyncStateSchema.parse({ kind: "subscription", customerId: "5", status: "active" })).toEqual({
      kind: "subscription",
      customerId: "5",
      status: "active",
      currency: null,
      interval: null,
      intervalCount: null,
      amount: null,
      planId: null,
      planName: null,
      startedAt: null,
      endedAt: null,
      cancelledAt: null,
      changes: 0,
    });
  });

  it("an order's total and refunds are remembered only as exact decimals", () => {
    for (const ok of ["59.97", "-3", "12", "0.5", "1500"]) expect(objectSyncStateSchema.safeParse(storedOrder({ total: ok, refunded: ok })).success, ok).toBe(true);
    for (const bad of ["12.", ".5", "x12", "12x", "1e3", "-", "1.2.3", "", "59.97 "]) {
      expect(objectSyncStateSchema.safeParse(storedOrder({ total: bad })).success, bad).toBe(false);
    }
    expect(objectSyncStateSchema.safeParse(storedOrder({ total: null })).success).toBe(true);
  });

  it("a customer's store account is either enabled or disabled", () => {
    for (const account of ["enabled", "disabled"]) expect(objectSyncStateSchema.safeParse({ ...STATES[0], account }).success).toBe(true);
    expect(objectSyncStateSchema.safeParse({ ...STATES[0], account: "invited" }).success).toBe(false);
  });

  it("a checkout waiting for abandonment keeps everything the cart/abandoned event needs", () => {
    const snapshot = {
      token: "tok",
      cartToken: null,
      cartId: "cart-1",
      email: "ann@example.com",
      referenceId: null,
      url: "https://shop.example.com/checkouts/tok",
      currency: "EUR",
      total: 10.5,
      totalProducts: 1,
      products: [{ id: "1", name: "Hat", quantity: 1 }],
      updatedAt: null,
    };
    expect(abandonedCheckoutSnapshotSchema.parse(snapshot)).toEqual(snapshot);
    expect(abandonedCheckoutSnapshotSchema.safeParse({ ...snapshot, token: "" }).success).toBe(false);
    expect(abandonedCheckoutSnapshotSchema.safeParse({ ...snapshot, cartId: "" }).success).toBe(false);
  });

  it("a mapper sees only the state of its own kind (another kind counts as none)", () => {
    const [customer, order] = STATES;
    expect(priorOf(order, "order")).toBe(order);
    expect(priorOf(customer, "order")).toBeNull();
    expect(priorOf(null, "order")).toBeNull();
  });
});

describe("who an event names", () => {
  it("product events name the store, by its domain as Shopify spells it in any case", () => {
    expect(storeActorReferenceId(" Acme.MyShopify.com ")).toBe("shop:acme.myshopify.com");
  });

  it("an email is sent trimmed and lower-cased, and only when the service would accept it", () => {
    expect(cleanEmail(" Ann@Example.COM ")).toBe("ann@example.com");
    for (const bad of [null, undefined, "", "   ", "not-an-email", "ann@"]) expect(cleanEmail(bad), String(bad)).toBeNull();
    expect(cleanEmail(42 as unknown as string)).toBeNull();
  });

  it("a person is named by email when known, else by the customer id, else not at all", () => {
    expect(personRef("ann@example.com", "99")).toEqual({ email: "ann@example.com" });
    expect(personRef(null, "99")).toEqual({ referenceId: "99" });
    expect(personRef("", "")).toBeNull();
    expect(personRef(null, null)).toBeNull();
  });
});

describe("event bodies", () => {
  it("leave out empty fields (the service's schemas take no nulls) but keep zeros and false", () => {
    expect(compact({ a: null, b: undefined, c: "", d: 0, e: false, f: "x", g: " " })).toEqual({ d: 0, e: false, f: "x", g: " " });
    expect(Object.keys(compact({ a: null, b: 1 }))).toEqual(["b"]);
  });

  it("an event call carries its type, action and body", () => {
    expect(eventCall("cart", "created", { email: "a@example.com" } as never)).toEqual({
      op: "event",
      type: "cart",
      action: "created",
      body: { email: "a@example.com" },
    });
  });
});

describe("addresses", () => {
  const sample = () => address.parse(fixture("customers/create").default_address);

  it("Shopify's default address becomes the service's address", () => {
    expect(mapAddress(sample())).toEqual({
      first_name: "Bob",
      last_name: "Biller",
      phone: "555-555-5555",
      address1: "151 O'Connor Street",
      city: "Ottawa",
      state: "ON",
      postal_code: "K2P 2L8",
      country: "CA",
    });
    const full = address.parse({ ...sample(), company: "Acme", address2: "Suite 2", province: "Ontario", country: "Canada" });
    expect(mapAddress(full)).toMatchObject({ company: "Acme", address2: "Suite 2", state: "Ontario", country: "Canada" });
  });

  it("a missing province or country name falls back to its code", () => {
    const codes = address.parse({ province: null, province_code: "QC", country: null, country_code: "CA" });
    expect(mapAddress(codes)).toEqual({ state: "QC", country: "CA" });
  });

  it("an address with nothing in it is left out", () => {
    expect(mapAddress(null)).toBeUndefined();
    expect(mapAddress(undefined)).toBeUndefined();
    expect(mapAddress(address.parse({ first_name: null, city: "" }))).toBeUndefined();
    expect(mapAddress(address.parse({ zip: 10115 }))).toEqual({ postal_code: "10115" });
  });

  it("a customer links back to their page in the Shopify admin, and ships to the default address", () => {
    const links = customerLinks({ id: "706405506930370084", default_address: sample() }, { shopDomain: " Acme-Store.MyShopify.com " });
    expect(links.url).toBe("https://admin.shopify.com/store/acme-store/customers/706405506930370084");
    expect(links.shipping_address).toMatchObject({ city: "Ottawa" });
    expect(customerLinks({ id: "1", default_address: null }, { shopDomain: "a.myshopify.com" }).shipping_address).toBeUndefined();
  });

  it("only the .myshopify.com ending is taken off the store's domain", () => {
    expect(customerLinks({ id: "1", default_address: null }, { shopDomain: "acme.myshopify.com.example" }).url).toBe(
      "https://admin.shopify.com/store/acme.myshopify.com.example/customers/1",
    );
  });
});

describe("storefront links", () => {
  it("a line links to its variant and a product to its page, without a doubled slash", () => {
    expect(lineUrl("https://shop.example.com//", "7001")).toBe("https://shop.example.com/variants/7001");
    expect(lineUrl("https://shop.example.com", "7001")).toBe("https://shop.example.com/variants/7001");
    expect(productUrl("https://shop.example.com//", "red hat")).toBe("https://shop.example.com/products/red%20hat");
    expect(productUrl("https://shop.example.com", "hat")).toBe("https://shop.example.com/products/hat");
  });

  it("no variant or handle, no link", () => {
    expect(lineUrl("https://shop.example.com", null)).toBeUndefined();
    expect(lineUrl("https://shop.example.com", undefined)).toBeUndefined();
    expect(productUrl("https://shop.example.com", null)).toBeUndefined();
    expect(productUrl("https://shop.example.com", "")).toBeUndefined();
  });
});

describe("currency and amounts", () => {
  it("the first valid ISO currency is used, upper-cased", () => {
    expect(currencyOf(" eur ")).toBe("EUR");
    expect(currencyOf(null, undefined, "", "EURO", "E1R", "usd", "GBP")).toBe("USD");
    expect(currencyOf()).toBeUndefined();
    expect(currencyOf(null, "EURO")).toBeUndefined();
  });

  it("an amount is exact in its currency, and absent when Shopify sent none", () => {
    expect(amount("19.99", "USD")).toBe(19.99);
    expect(amount("1500", "JPY")).toBe(1500);
    expect(amount(0, "USD")).toBe(0);
    expect(amount(null, "USD")).toBeUndefined();
    expect(amount(undefined, "USD")).toBeUndefined();
  });
});

describe("the website tracker's revenue hash", () => {
  const attr = (name: string | null, value: string | null) => ({ name, value });

  it("is read from any of its attribute names, trimmed", () => {
    expect(revenueHash([attr("gift", "yes"), attr("_ls", " abc ")])).toBe("abc");
    expect(revenueHash([attr("__ls", "def")])).toBe("def");
    expect(revenueHash([attr("ls_revenue_hash", "ghi")])).toBe("ghi");
  });

  it("prefers _ls, then __ls, then ls_revenue_hash, skipping blank values", () => {
    expect(revenueHash([attr("ls_revenue_hash", "c"), attr("__ls", "b"), attr("_ls", "a")])).toBe("a");
    expect(revenueHash([attr("ls_revenue_hash", "c"), attr("__ls", "b")])).toBe("b");
    expect(revenueHash([attr("_ls", "  "), attr("_ls", null), attr("__ls", "b")])).toBe("b");
    expect(revenueHash([attr("_ls", null), attr("_ls", "a")])).toBe("a");
  });

  it("is absent when no attribute carries it", () => {
    expect(revenueHash([])).toBeUndefined();
    expect(revenueHash([attr("ls", "x"), attr(null, "y"), attr("_ls", "")])).toBeUndefined();
  });

  it("may also come from extra attributes, as a list or an object of strings", () => {
    expect(revenueHash([], [attr("__ls", "list")])).toBe("list");
    expect(revenueHash([attr("__ls", "second")], { _ls: "first" })).toBe("first");
    expect(revenueHash([], { _ls: 42, __ls: "text" })).toBe("text");
    expect(revenueHash([], null)).toBeUndefined();
  });
});

const orderItem = (i: number, price: string | null, quantity: number | null, over: Record<string, Json> = {}) =>
  orderLineItem.parse(orderLine(i, price as string, quantity as number, over));

describe("order lines", () => {
  it("Shopify's sample line becomes a product of the order", () => {
    const li = orderLineItem.parse(fixture("orders/create").line_items[0]);
    const lines = mapOrderLines([li], "USD", "https://shop.example.com");
    expect(lines.products).toEqual([
      { id: "788032119674292900", name: "Aviator sunglasses", sku: "SKU2006-001", price: 89.99, quantity: 1, total: 89.99, discounts: 0 },
    ]);
    expect(lines.totalMinor).toBe(8999n);
    expect(lines.totalQuantity).toBe(1);
  });

  it("a line's total is price × quantity less its discount allocations, with its taxes", () => {
    const li = orderItem(1, "19.99", 3, {
      vendor: "Acme",
      total_discount: "9.99",
      discount_allocations: [{ amount: "5.00" }, { amount: "1.00" }],
      tax_lines: [{ price: "1.20" }, { price: "0.30" }],
      image_url: "https://cdn.example/1.png",
    });
    const { products, totalMinor, totalQuantity } = mapOrderLines([li], "USD", "https://shop.example.com/");
    expect(products).toEqual([
      {
        id: "5001",
        name: "Item 1",
        url: "https://shop.example.com/variants/7001",
        brand: "Acme",
        sku: "SKU-1",
        variant_id: "7001",
        image_url: "https://cdn.example/1.png",
        price: 19.99,
        quantity: 3,
        total: 53.97,
        discounts: 6,
        taxes: 1.5,
      },
    ]);
    expect(totalMinor).toBe(5397n);
    expect(totalQuantity).toBe(3);
  });

  it("without allocations the legacy total_discount is taken off, and without either nothing is", () => {
    const legacy = mapOrderLines([orderItem(1, "10.00", 2, { total_discount: "2.50" })], "USD");
    expect(legacy.products[0]).toMatchObject({ total: 17.5, discounts: 2.5 });
    expect(legacy.totalMinor).toBe(1750n);
    const none = mapOrderLines([orderItem(1, "10.00", 2, { total_discount: null })], "USD");
    expect(none.products[0]).toMatchObject({ total: 20, discounts: 0 });
  });

  it("sums every line, in the currency's own minor units", () => {
    const lines = mapOrderLines([orderItem(1, "1500", 2), orderItem(2, "300", 1, { total_discount: "100" })], "JPY");
    expect(lines.products.map((p) => p.total)).toEqual([3000, 200]);
    expect(lines.totalMinor).toBe(3200n);
    expect(lines.totalQuantity).toBe(3);
  });

  it("a line without a price counts its quantity but adds nothing to the total; without a quantity it counts 0", () => {
    const lines = mapOrderLines([orderItem(1, null, 2), orderItem(2, "5.00", null), orderItem(3, "1.00", 1)], "USD");
    expect(lines.products[0]).not.toHaveProperty("price");
    expect(lines.products[0]).not.toHaveProperty("total");
    expect(lines.products[1]).toMatchObject({ quantity: 0, total: 0, price: 5 });
    expect(lines.totalMinor).toBe(100n);
    expect(lines.totalQuantity).toBe(3);
  });

  it("a custom item without a product is named by its line id, else by its place in the order", () => {
    const lines = mapOrderLines(
      [
        orderItem(1, "1.00", 1, { product_id: null }),
        orderItem(2, "1.00", 1, { product_id: null, id: null, admin_graphql_api_id: null }),
      ],
      "USD",
    );
    expect(lines.products.map((p) => p.id)).toEqual(["1001", "line-2"]);
  });

  it("a line's name falls back from name to title to SKU to 'Item', trimmed", () => {
    const names = mapOrderLines(
      [
        orderItem(1, "1.00", 1, { name: "  Hat  " }),
        orderItem(2, "1.00", 1, { name: null, title: "Cap" }),
        orderItem(3, "1.00", 1, { name: " ", title: null, sku: "SKU-9" }),
        orderItem(4, "1.00", 1, { name: null, title: null, sku: "  " }),
        orderItem(5, "1.00", 1, { name: null, title: null, sku: null }),
      ],
      "USD",
    ).products.map((p) => p.name);
    expect(names).toEqual(["Hat", "Cap", "SKU-9", "Item", "Item"]);
  });

  it("a line's picture comes from image_url, else the image (a URL or an object with src or url)", () => {
    const images = mapOrderLines(
      [
        orderItem(1, "1.00", 1, { image_url: "https://cdn.example/a.png", image: "https://cdn.example/ignored.png" }),
        orderItem(2, "1.00", 1, { image: "https://cdn.example/b.png" }),
        orderItem(3, "1.00", 1, { image: { src: "https://cdn.example/c.png", url: "https://cdn.example/ignored.png" } }),
        orderItem(4, "1.00", 1, { image: { src: null, url: "https://cdn.example/d.png" } }),
        orderItem(5, "1.00", 1, { image: { src: null, url: null } }),
        orderItem(6, "1.00", 1, { image: "" }),
        orderItem(7, "1.00", 1, { image: null }),
      ],
      "USD",
    ).products.map((p) => p.image_url);
    expect(images).toEqual([
      "https://cdn.example/a.png",
      "https://cdn.example/b.png",
      "https://cdn.example/c.png",
      "https://cdn.example/d.png",
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("without a storefront or a variant a line has no link", () => {
    expect(mapOrderLines([orderItem(1, "1.00", 1)], "USD").products[0]).not.toHaveProperty("url");
    expect(mapOrderLines([orderItem(1, "1.00", 1, { variant_id: null })], "USD", "https://s.example").products[0]).not.toHaveProperty("url");
  });
});

const cartItem = (over: Record<string, Json> = {}) => cartLineItem.parse({ ...fixture("carts/create").line_items[0], ...over });
const checkoutItem = (over: Record<string, Json> = {}) => cartLineItem.parse({ ...fixture("checkouts/create").line_items[0], ...over });

describe("cart and checkout lines", () => {
  it("a cart line's line_price is already final: its discounts are not taken off again", () => {
    const li = cartItem({ discount_allocations: [{ amount: "5.00" }], image_url: "https://cdn.example/shirt.png" });
    const lines = mapCartLines([li], "USD", "cart", "https://shop.example.com");
    expect(lines.products).toEqual([
      {
        id: "788032119674292900",
        name: "Example T-Shirt - Small",
        url: "https://shop.example.com/variants/704912205188288500",
        brand: "Acme",
        sku: "example-shirt-s",
        variant_id: "704912205188288500",
        image_url: "https://cdn.example/shirt.png",
        price: 19.99,
        quantity: 3,
        total: 59.97,
      },
    ]);
    expect(lines.totalMinor).toBe(5997n);
    expect(lines.totalQuantity).toBe(3);
  });

  it("a checkout line's discounts (allocations and applied discounts) are taken off its line price", () => {
    const li = checkoutItem({ applied_discounts: [{ amount: "10.00" }], discount_allocations: [{ amount: "5.00" }] });
    const lines = mapCartLines([li], "USD", "checkout", "https://shop.example.com");
    expect(lines.products).toEqual([
      {
        id: "632910392",
        name: "IPod Nano - 8GB",
        url: "https://shop.example.com/variants/808950810",
        brand: "Apple",
        sku: "IPOD2008PINK",
        variant_id: "808950810",
        price: 199,
        quantity: 1,
        total: 184,
        discounts: 15,
        taxes: 11.94,
      },
    ]);
    expect(lines.totalMinor).toBe(18400n);
  });

  it("a checkout line without discounts shows none", () => {
    const lines = mapCartLines([checkoutItem({ tax_lines: [] })], "USD", "checkout");
    expect(lines.products[0]).not.toHaveProperty("discounts");
    expect(lines.products[0]).not.toHaveProperty("taxes");
    expect(lines.products[0]).not.toHaveProperty("url");
    expect(lines.products[0]).toMatchObject({ total: 199 });
  });

  it("without a line price the unit price × quantity is the total; the discounted price stands in for a missing price", () => {
    const lines = mapCartLines(
      [
        cartItem({ line_price: null, quantity: 2 }),
        cartItem({ line_price: null, price: null, discounted_price: "15.00", quantity: 2 }),
        cartItem({ line_price: null, price: null, discounted_price: null, quantity: 4 }),
        cartItem({ quantity: null }),
      ],
      "USD",
      "cart",
    );
    expect(lines.products.map((p) => [p.price, p.total, p.quantity])).toEqual([
      [19.99, 39.98, 2],
      [15, 30, 2],
      [undefined, undefined, 4],
      [19.99, 59.97, 0],
    ]);
    expect(lines.totalMinor).toBe(3998n + 3000n + 5997n);
    expect(lines.totalQuantity).toBe(8);
  });

  it("a line is named by product, else variant, else line id, else key, else its place", () => {
    const ids = mapCartLines(
      [
        cartItem({ product_id: null }),
        cartItem({ product_id: null, variant_id: null }),
        cartItem({ product_id: null, variant_id: null, id: null }),
        cartItem({ product_id: null, variant_id: null, id: null, key: null }),
      ],
      "USD",
      "cart",
    ).products.map((p) => p.id);
    expect(ids).toEqual(["704912205188288500", "704912205188288500", "704912205188288575:3abdf474dce81d0025dd15b9a02ef6bf", "line-4"]);
    const byLineId = mapCartLines([cartItem({ product_id: null, variant_id: null, id: 55 })], "USD", "cart").products[0];
    expect(byLineId.id).toBe("55");
  });

  it("a line's name falls back from the buyer's-language title to the title, the SKU, then 'Item'", () => {
    const names = mapCartLines(
      [
        checkoutItem({ presentment_title: " iPod nano " }),
        checkoutItem({ presentment_title: null }),
        checkoutItem({ presentment_title: null, title: null }),
        checkoutItem({ presentment_title: null, title: null, sku: null }),
      ],
      "USD",
      "checkout",
    ).products.map((p) => p.name);
    expect(names).toEqual(["iPod nano", "IPod Nano - 8GB", "IPOD2008PINK", "Item"]);
  });
});
