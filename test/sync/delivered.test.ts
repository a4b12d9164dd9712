import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { describeOverHttp } from "../support/over-http";
import { FIXTURE_DIR, orderBody, orderLine, type Json } from "./fixtures";

// End to end: signed webhook → app → mappers → worker → emulator. What the service received (and
// answered) for payloads whose blank tokens/names or foreign-currency refunds the mappers misread.

const variant = (file: string): Record<string, Json> =>
  JSON.parse(readFileSync(path.join(FIXTURE_DIR, "variants", file), "utf8")) as Record<string, Json>;

describeOverHttp("what the service receives", { shopPrefix: "delivered" }, ({ h, shop }) => {
  const deliver = (topic: string, body: object) => h.deliver({ topic, shop, body });
  const posted = (p: string) => h.emulator.requests.filter((r) => r.method === "POST" && r.path === p);
  const failedCalls = async () =>
    (await h.app.db.prisma.outboundCall.findMany({ where: { shop } })).filter((c) => c.status !== "delivered");

  it("a checkout with cart_token \"\" (draft order, wallet) is recovered under its checkout token", async () => {
    const checkout = variant("checkouts.create.blank-cart-token.json");
    await deliver("checkouts/create", checkout);
    const updated = posted("/api/events/cart/updated");
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({ status: 200, body: { id: checkout.token, email: "walter.wallet@example.com" } });
    expect(await failedCalls()).toEqual([]);

    const where = { shop_checkoutToken: { shop, checkoutToken: checkout.token as string } };
    await h.app.db.prisma.abandonmentTimer.update({ where, data: { dueAt: new Date(Date.now() - 1_000) } });
    await h.settle();
    const abandoned = posted("/api/events/cart/abandoned");
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]).toMatchObject({ status: 200, body: { id: checkout.token, email: "walter.wallet@example.com" } });
    expect((await h.app.db.prisma.abandonmentTimer.findUniqueOrThrow({ where })).status).toBe("sent");
  });

  it("subscription lines with a blank title are named by their variant title, else a default", async () => {
    await deliver("subscription_contracts/create", variant("subscription_contracts.create.blank-line-titles.json"));
    const created = posted("/api/events/subscription/created");
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      status: 200,
      body: { referenceId: "1", products: [{ id: "6543", name: "Coffee beans, 1 kg", quantity: 2 }, { id: "6544", name: "Subscription item" }] },
    });
    expect(await failedCalls()).toEqual([]);
  });

  it("an EUR order refunded in GBP reports 100 EUR, refunded; the earlier restock moved no money and reports nothing", async () => {
    const order = orderBody({
      id: 31000,
      admin_graphql_api_id: "gid://shopify/Order/31000",
      email: "eva@example.com",
      customer: { id: 310, email: "eva@example.com" },
      currency: "EUR",
      presentment_currency: "GBP",
      financial_status: "paid",
      total_price: "100.00",
      total_tax: "15.97",
      line_items: [orderLine(1, "84.03", 1)],
    });
    await deliver("orders/create", order);
    await deliver("refunds/create", variant("refunds.create.restock-only.json"));
    expect(posted("/api/events")).toHaveLength(0);
    expect(posted("/api/events/order/updated")).toHaveLength(0);

    await deliver("refunds/create", variant("refunds.create.presentment-gbp.json"));
    const refunded = posted("/api/events");
    expect(refunded).toHaveLength(1);
    expect(refunded[0]).toMatchObject({
      status: 200,
      body: { email: "eva@example.com", eventName: "order_refunded", properties: { refund_id: "31900", amount: 100, currency: "EUR" } },
    });
    expect(posted("/api/events/order/updated").at(-1)).toMatchObject({ status: 200, body: { id: "31000", status: "refunded", currency: "EUR" } });
    expect(await failedCalls()).toEqual([]);
  });
});
