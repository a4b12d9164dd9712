import { expect, it } from "vitest";
import { describeOverHttp } from "../support/over-http";
import { fixture, orderBody, orderLine } from "./fixtures";

// End to end: the fields the interface accepts and Shopify provides, as the service received them
// (the emulator validates every body against the spec and answers 200 only to valid ones).

describeOverHttp("fields the service receives", { shopPrefix: "fields" }, ({ h, shop }) => {
  const deliver = (topic: string, body: object) => h.deliver({ topic, shop, body });
  const posted = (p: string) => h.emulator.requests.filter((r) => r.method === "POST" && r.path === p);
  const only = (p: string) => {
    const hits = posted(p);
    expect(hits, p).toHaveLength(1);
    expect(hits[0].status).toBe(200);
    return hits[0].body as Record<string, unknown>;
  };

  it("product: brand is Shopify's vendor, public_id the handle", async () => {
    await deliver("products/create", fixture("products/create"));
    expect(only("/api/events/product/created")).toMatchObject({
      referenceId: `shop:${shop}`,
      vendor: "Acme",
      brand: "Acme",
      public_id: "example-t-shirt",
      url: `https://${shop}/products/example-t-shirt`,
    });
  });

  it("order line items: brand is the line's vendor, url its variant on the storefront", async () => {
    await deliver("orders/create", orderBody({ line_items: [orderLine(1, "19.99", 3, { vendor: "Roastery" })] }));
    const body = only("/api/events/order/created");
    expect(body.products).toEqual([expect.objectContaining({ id: "5001", brand: "Roastery", url: `https://${shop}/variants/7001` })]);
  });

  it("customer: url is the customer's admin page, shipping_address the default address; no billing_address", async () => {
    await deliver("customers/create", fixture("customers/create"));
    const body = only("/api/events/customer/created");
    const handle = shop.replace(".myshopify.com", "");
    expect(body).toMatchObject({
      url: `https://admin.shopify.com/store/${handle}/customers/706405506930370084`,
      shipping_address: { first_name: "Bob", last_name: "Biller", address1: "151 O'Connor Street", city: "Ottawa", postal_code: "K2P 2L8", country: "CA" },
      address: { first_name: "Bob", address1: "151 O'Connor Street" },
    });
    expect(body).not.toHaveProperty("billing_address");
  });
});
