/**
 * An email change the service cannot apply as a change (old contact gone, new address taken) is
 * still delivered, end to end: signed webhooks → pipeline → emulator.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { listDeadLetters } from "~/pipeline/dead-letters.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, startPipelineHarness, type PipelineHarness } from "../support/pipeline";

let shopSeq = 0;
const newShop = () => `email-change-${++shopSeq}-${Date.now().toString(36)}.myshopify.com`;

describeEachDatabase("email change the service cannot apply", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const deliver = (shop: string, topic: string, body: object) => h.deliver({ topic, shop, body });
  /** What the merchant or a signup form does in the service itself. */
  async function service(method: "POST" | "DELETE", path: string, body?: object) {
    const res = await fetch(`${h.emulator.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${h.emulator.apiKey}`, "content-type": "application/json" },
      body: body ? JSON.stringify(body) : undefined,
    });
    expect(res.ok).toBe(true);
  }
  const peoplePosts = () => h.emulator.requests.filter((r) => r.path === "/api/people" && r.method === "POST");

  it("old contact deleted in the service: the customer's update lands on the new address, with its status", async () => {
    const shop = newShop();
    await h.connect(shop);
    await h.app.db.prisma.shop.update({ where: { domain: shop }, data: { settings: { optInMode: "trust_shopify" } } });
    h.startWorkers();
    const [oldEmail, newEmail] = ["old9201@example.com", "new9201@example.com"];
    await deliver(shop, "customers/create", customerBody({ id: "9201", email: oldEmail, consent: "unsubscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    expect(h.emulator.person(oldEmail)?.statusDetails).toBe("unsubscribed");
    await service("DELETE", `/api/people/${encodeURIComponent(oldEmail)}`);

    // New address and a fresh subscribe in the same update.
    await deliver(
      shop,
      "customers/update",
      customerBody({ id: "9201", email: newEmail, firstName: "Renamed", consent: "subscribed", updatedAt: "2026-04-02T09:00:00Z", consentUpdatedAt: "2026-04-02T09:00:00Z" }),
    );
    expect(h.emulator.person(newEmail)).toMatchObject({ statusDetails: "confirmed", customFields: { firstName: "Renamed", referenceId: "9201" } });
    expect(h.emulator.person(oldEmail)).toBeUndefined();
    expect(await listDeadLetters(shop)).toHaveLength(0);
    // Tried as a change first, then sent to the new address.
    expect(peoplePosts().slice(-2).map((r) => r.body)).toMatchObject([
      { email: oldEmail, emailChange: newEmail },
      { email: newEmail, statusDetails: "confirmed" },
    ]);
    expect(peoplePosts().at(-1)?.body).not.toHaveProperty("emailChange");
  });

  it("new address already a contact: an unsubscribe in the same update still unsubscribes that address", async () => {
    const shop = newShop();
    await h.connect(shop);
    h.startWorkers();
    const [oldEmail, newEmail] = ["old9202@example.com", "new9202@example.com"];
    await deliver(shop, "customers/create", customerBody({ id: "9202", email: oldEmail, consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }));
    // The new address signed up (and confirmed) through a form in the service.
    await service("POST", "/api/people", { email: newEmail, source: "form", skipDoubleOptIn: true, statusDetails: "confirmed" });

    await deliver(
      shop,
      "customers/update",
      customerBody({ id: "9202", email: newEmail, consent: "unsubscribed", updatedAt: "2026-04-02T09:00:00Z", consentUpdatedAt: "2026-04-02T09:00:00Z" }),
    );
    expect(h.emulator.person(newEmail)?.statusDetails).toBe("unsubscribed");
    // The old address stays a contact of its own in the service: it must not keep mailing them either.
    expect(h.emulator.person(oldEmail)?.statusDetails).toBe("unsubscribed");
    expect(await listDeadLetters(shop)).toHaveLength(0);
    const calls = await h.app.db.prisma.outboundCall.findMany({ where: { shop } });
    expect(calls.every((c) => c.status === "delivered")).toBe(true);
  });
});
