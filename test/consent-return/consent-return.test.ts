/**
 * The way back (docs/customers-and-consent.md, "Back to Shopify"): an unsubscribe or a block at
 * the service reaches Shopify as `customerEmailMarketingConsentUpdate` UNSUBSCRIBED on the next
 * sweep, and Shopify's consent webhook carrying the app's own write back changes nothing at the
 * service. Over HTTP: signed webhooks → app → emulator; emulator control → sweep → fake Admin.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { consentReturnStatus, seedConsentReturnStates } from "~/consent-return/consent-return.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, until } from "../backfill/helpers";

interface AdminRequest {
  at: string;
  shop: string;
  operation: string;
  variables: { input?: { customerId: string; emailMarketingConsent: { marketingState: string; marketingOptInLevel?: string; consentUpdatedAt?: string } } };
}

describeEachDatabase("consent returned to Shopify", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const consentWrites = async (shop: string) => {
    const res = await fetch(`${h.app.admin.url}/__requests?operation=ReturnEmailConsent&shop=${shop}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: AdminRequest[] }).data;
  };
  /** A recipient's unsubscribe link, or the service's block, through the emulator's control route. */
  async function atTheService(email: string, statusDetails: "unsubscribed" | "blocked") {
    const res = await fetch(`${h.emulator.url}/__emulator/people/status`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, statusDetails }),
    });
    expect(res.status).toBe(200);
  }
  /** The shop's sweep is due now; a worker runs it to the end. */
  async function sweep(shop: string) {
    await seedConsentReturnStates(PIPELINE_POLICY);
    const before = (await consentReturnStatus(shop))?.lastSweepAt?.getTime() ?? 0;
    await h.app.db.sql.query(`UPDATE "ConsentReturnState" SET "dueAt" = now() WHERE shop = $1`, [shop]);
    if (!h.workers.length) h.startWorkers(1, FAST_POLICY);
    return until("the sweep", async () => {
      const s = await consentReturnStatus(shop);
      return s?.lastSweepAt && s.lastSweepAt.getTime() > before && s;
    });
  }
  const personPosts = (email: string) =>
    h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people" && (r.body as { email?: string }).email === email);
  const confirmations = (email: string) => h.emulator.sentEmails.filter((e) => e.kind === "confirmation" && e.to.includes(email));

  it("an unsubscribe and a block at the service reach Shopify as UNSUBSCRIBED; the echo and an older subscribe change nothing", async () => {
    const shop = newShop("consent-return");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    const [gone, blocked, stays] = ["7001", "7002", "7003"];
    for (const id of [gone, blocked, stays]) {
      await h.deliver({ topic: "customers/create", shop, body: customerBody({ id, consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }) });
    }
    const email = (id: string) => `customer${id}@example.com`;
    expect(h.emulator.person(email(gone))?.statusDetails).toBe("confirmed");
    await atTheService(email(gone), "unsubscribed");
    await atTheService(email(blocked), "blocked");

    const swept = await sweep(shop);
    expect(swept).toMatchObject({ lastWritten: 2, lastError: null });
    const writes = await consentWrites(shop);
    expect(writes.map((w) => w.variables.input!.customerId).sort()).toEqual([`gid://shopify/Customer/${gone}`, `gid://shopify/Customer/${blocked}`]);
    for (const w of writes) expect(w.variables.input!.emailMarketingConsent).toMatchObject({ marketingState: "UNSUBSCRIBED", consentUpdatedAt: expect.any(String) });

    // Shopify's consent webhook brings the app's own write back: nothing goes to the service.
    const written = writes.find((w) => w.variables.input!.customerId.endsWith(gone))!.variables.input!.emailMarketingConsent;
    const postsBefore = personPosts(email(gone)).length;
    const consent = (state: string, at: string) => ({
      customer_id: Number(gone),
      email_address: email(gone),
      email_marketing_consent: { state, opt_in_level: "single_opt_in", consent_updated_at: at },
    });
    await h.deliver({ topic: "customers_email_marketing_consent/update", shop, body: consent("unsubscribed", written.consentUpdatedAt!) });
    expect(personPosts(email(gone))).toHaveLength(postsBefore);
    // A "subscribed" older than the unsubscribe, arriving late, does not subscribe the person again.
    await h.deliver({ topic: "customers_email_marketing_consent/update", shop, body: consent("subscribed", "2026-04-02T09:00:00Z") });
    expect(h.emulator.person(email(gone))?.statusDetails).toBe("unsubscribed");
    expect(personPosts(email(gone)).slice(postsBefore).filter((r) => (r.body as { statusDetails?: string }).statusDetails !== undefined)).toEqual([]);
    expect(confirmations(email(gone))).toHaveLength(0);

    // The next sweep finds both already returned: no second write.
    expect(await sweep(shop)).toMatchObject({ lastWritten: 0 });
    expect(await consentWrites(shop)).toHaveLength(2);
  });
});
