import { describe, expect, it } from "vitest";
import { mapAbandonedCheckout } from "../../app/sync/plan-webhook";
import { eventOf, fixture, makeCtx, orderBody, run, type Json } from "./fixtures";

// Shopify sends "" (or spaces) where a token or a name is absent: it must read as missing, so the
// fallbacks used for null apply. Every plan here is also checked against the service's schemas.

describe("blank tokens and names read as missing", () => {
  it("a checkout with a blank cart token is one cart under its checkout token, and can be abandoned", () => {
    for (const cartToken of ["", "   "]) {
      const plan = run("checkouts/update", { ...fixture("checkouts/create"), cart_token: cartToken });
      expect(eventOf(plan, "cart", "updated").id).toBe("123123123");
      if (plan.abandonment?.action !== "schedule") throw new Error("expected a schedule");
      expect(plan.abandonment.snapshot).toMatchObject({ cartToken: null, cartId: "123123123" });
      const abandoned = mapAbandonedCheckout(plan.abandonment.snapshot, makeCtx());
      expect(abandoned).toMatchObject({ type: "cart", action: "abandoned", body: { id: "123123123" } });
    }
  });

  it("a timer stored with an empty cart id (before this fix) still sends cart/abandoned", () => {
    const plan = run("checkouts/update", fixture("checkouts/create"));
    if (plan.abandonment?.action !== "schedule") throw new Error("expected a schedule");
    const stored = { ...plan.abandonment.snapshot, cartToken: "", cartId: "" };
    expect(mapAbandonedCheckout(stored, makeCtx())).toMatchObject({ body: { id: "123123123", email: "example@email.com" } });
  });

  it("a blank order name falls back to the order number", () => {
    const plan = run("orders/create", orderBody({ name: " ", order_number: 1001 }));
    expect(eventOf(plan, "order", "created").publicId).toBe("1001");
  });

  it("refunded and ordered lines with a blank name use the title", () => {
    const line = { name: "", title: "Wool scarf" };
    const order = run("orders/create", orderBody({ line_items: [{ ...orderBody().line_items[0], ...line }] }));
    expect((eventOf(order, "order", "created").products as Json[])[0].name).toBe("Wool scarf");
    const refund = fixture("refunds/create");
    refund.refund_line_items[0].line_item = { ...refund.refund_line_items[0].line_item, ...line };
    const plan = run("refunds/create", { ...refund, order_id: 4242 }, makeCtx({ prior: order.nextState }));
    const custom = plan.calls[0];
    expect(custom.op === "event.custom" && (custom.body.properties as Json).items[0].name).toBe("Wool scarf");
  });
});
