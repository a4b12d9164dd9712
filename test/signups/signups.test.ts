/**
 * Signups at the service become Shopify customers (docs/customers-and-consent.md, "Signups at the
 * service become Shopify customers"): a person who signed up through the service's own form and
 * confirmed is created in Shopify, subscribed and tagged, on the next sweep; the app's own contacts
 * never go back; an email that already is a customer is left alone; Shopify's webhooks for the new
 * customer create no second person and send no email. Over HTTP: emulator control (the form) →
 * sweep → fake Admin; signed webhooks → app → emulator.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { seedSignupStates, signupStatus, SIGNUP_TAG } from "~/signups/signups.server";
import { describeEachDatabase } from "../support/database";
import { customerBody, FAST_POLICY, startPipelineHarness, type PipelineHarness } from "../support/pipeline";
import { install, newShop, until } from "../backfill/helpers";

interface AdminRequest {
  at: string;
  shop: string;
  operation: string;
  variables: {
    email?: string;
    input?: { email: string; firstName?: string; tags: string[]; emailMarketingConsent: { marketingState: string; marketingOptInLevel?: string; consentUpdatedAt?: string } };
  };
}

describeEachDatabase("signups at the service become Shopify customers", (database) => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ database });
  });
  afterAll(() => h.close());
  afterEach(() => h.reset());

  const adminRequests = async (shop: string, operation: string) => {
    const res = await fetch(`${h.app.admin.url}/__requests?operation=${operation}&shop=${shop}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: AdminRequest[] }).data;
  };
  const creates = (shop: string) => adminRequests(shop, "SignupCustomerCreate");
  /** Someone signs up through the service's own form and, unless told otherwise, follows the confirmation link. */
  async function formSignup(email: string, over: { confirm?: boolean; firstName?: string } = {}) {
    const res = await fetch(`${h.emulator.url}/__emulator/people/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, source: "signup-form", ...over }),
    });
    expect(res.status).toBe(200);
  }
  /** The shop's sweep is due now; a worker runs it to the end. */
  async function sweep(shop: string) {
    await seedSignupStates(PIPELINE_POLICY);
    const before = (await h.app.db.sql.query<{ at: Date | null }>(`SELECT "lastSweepAt" AS at FROM "SignupSweepState" WHERE shop = $1`, [shop]))[0]?.at?.getTime() ?? 0;
    await h.app.db.sql.query(`UPDATE "SignupSweepState" SET "dueAt" = now() WHERE shop = $1`, [shop]);
    if (!h.workers.length) h.startWorkers(1, FAST_POLICY);
    return until("the sweep", async () => {
      const [row] = await h.app.db.sql.query<{ lastSweepAt: Date | null; lastCreated: number | null; lastWaiting: number | null; lastError: string | null }>(
        `SELECT "lastSweepAt", "lastCreated", "lastWaiting", "lastError" FROM "SignupSweepState" WHERE shop = $1`,
        [shop],
      );
      return row?.lastSweepAt && row.lastSweepAt.getTime() > before && row;
    });
  }
  const setSignups = (shop: string, on: boolean) =>
    h.app.db.sql.query(`UPDATE "Shop" SET settings = jsonb_set(settings, '{signupsToShopify}', $2::jsonb) WHERE domain = $1`, [shop, JSON.stringify(on)]);
  const customerIdOf = async (shop: string, email: string) =>
    (await h.app.db.sql.query<{ customerId: string; outcome: string }>(`SELECT "customerId", outcome FROM "SignupCustomer" WHERE shop = $1 AND email = $2`, [shop, email]))[0];
  const personPosts = (email: string) =>
    h.emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/people" && (r.body as { email?: string }).email === email);
  const confirmations = (email: string) => h.emulator.sentEmails.filter((e) => e.kind === "confirmation" && e.to.includes(email));

  it("a confirmed form signup becomes a subscribed, tagged customer once; the app's contacts and unconfirmed signups never go back; Shopify's echo creates no person and sends no email", async () => {
    const shop = newShop("signups");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    // A customer the app synced: a confirmed contact with the app's source and referenceId.
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "7101", consent: "subscribed", consentUpdatedAt: "2026-04-01T09:00:00Z" }) });
    expect(h.emulator.person("customer7101@example.com")?.statusDetails).toBe("confirmed");
    const ada = "ada.signup@example.com";
    await formSignup(ada, { firstName: "Ada" });
    await formSignup("bob.unconfirmed@example.com", { confirm: false });
    expect(h.emulator.person(ada)?.statusDetails).toBe("confirmed");
    expect(confirmations(ada)).toHaveLength(1);

    expect(await sweep(shop)).toMatchObject({ lastCreated: 1, lastWaiting: 0, lastError: null });
    const made = await creates(shop);
    expect(made).toHaveLength(1);
    const input = made[0].variables.input!;
    expect(input).toMatchObject({ email: ada, firstName: "Ada", tags: [SIGNUP_TAG] });
    const signedUp = h.emulator.person(ada)!.timestamp;
    expect(input.emailMarketingConsent).toEqual({
      marketingState: "SUBSCRIBED",
      marketingOptInLevel: "SINGLE_OPT_IN",
      consentUpdatedAt: new Date(signedUp * 1000).toISOString().replace(".000Z", "Z"),
    });
    expect((await signupStatus(shop)).created).toBe(1);

    // Shopify tells the app of the customer it created (2026-04 customers/create carries no consent
    // or tags; the consent comes by its own topic): the person exists already, it is only linked.
    const { customerId } = (await customerIdOf(shop, ada))!;
    const personId = h.emulator.person(ada)!.id;
    const created = customerBody({ id: customerId, email: ada, firstName: "Ada" });
    delete created.email_marketing_consent;
    delete created.tags;
    await h.deliver({ topic: "customers/create", shop, body: created });
    await h.deliver({
      topic: "customers_email_marketing_consent/update",
      shop,
      body: { customer_id: Number(customerId), email_address: ada, email_marketing_consent: { state: "subscribed", opt_in_level: "single_opt_in", consent_updated_at: input.emailMarketingConsent.consentUpdatedAt } },
    });
    const person = h.emulator.person(ada)!;
    expect(person.id).toBe(personId);
    expect(person.statusDetails).toBe("confirmed");
    expect(person.customFields.referenceId).toBe(customerId);
    expect(person.customFields.source).toBe("signup-form");
    expect(personPosts(ada).filter((r) => "statusDetails" in (r.body as object) || "status" in (r.body as object))).toEqual([]);
    expect(confirmations(ada)).toHaveLength(1);

    // The next sweep creates nothing, and neither does one after a crash between Shopify's create
    // and the record: the email is looked up first and found tagged as the app's.
    expect(await sweep(shop)).toMatchObject({ lastCreated: 0, lastError: null });
    await h.app.db.sql.query(`DELETE FROM "SignupCustomer" WHERE shop = $1`, [shop]);
    // Unlinked again at the service, as if the webhooks had not come yet.
    h.emulator.person(ada)!.customFields.referenceId = undefined;
    expect(await sweep(shop)).toMatchObject({ lastCreated: 0, lastError: null });
    expect(await creates(shop)).toHaveLength(1);
    expect(await customerIdOf(shop, ada)).toEqual({ customerId, outcome: "created" });
  });

  it("with the setting off nothing is created and the signups waiting are counted; turned on, they are created", async () => {
    const shop = newShop("signups-off");
    await install(h, shop);
    await setSignups(shop, false);
    h.startWorkers(1, FAST_POLICY);
    await formSignup("off.one@example.com");
    await formSignup("off.two@example.com");
    expect(await sweep(shop)).toMatchObject({ lastCreated: 0, lastWaiting: 2, lastError: null });
    expect(await creates(shop)).toEqual([]);
    expect(await adminRequests(shop, "SignupCustomerByEmail")).toEqual([]);
    expect(await signupStatus(shop)).toMatchObject({ waiting: 2, created: 0 });

    await setSignups(shop, true);
    expect(await sweep(shop)).toMatchObject({ lastCreated: 2, lastWaiting: 0 });
    expect((await creates(shop)).map((r) => r.variables.input!.email).sort()).toEqual(["off.one@example.com", "off.two@example.com"]);
  });

  it("an email that already is a Shopify customer is not created again and its consent is left alone", async () => {
    const shop = newShop("signups-existing");
    await install(h, shop);
    h.startWorkers(1, FAST_POLICY);
    // A customer who never subscribed at Shopify: no contact; then the same address signs up at the service.
    await h.deliver({ topic: "customers/create", shop, body: customerBody({ id: "7201", email: "carol@example.com", consent: "not_subscribed" }) });
    expect(h.emulator.person("carol@example.com")).toBeUndefined();
    await formSignup("carol@example.com");
    expect(await sweep(shop)).toMatchObject({ lastCreated: 0, lastError: null });
    expect((await adminRequests(shop, "SignupCustomerByEmail")).map((r) => r.variables.email)).toEqual(["carol@example.com"]);
    expect(await creates(shop)).toEqual([]);
    expect(await adminRequests(shop, "ReturnEmailConsent")).toEqual([]);
    expect(await customerIdOf(shop, "carol@example.com")).toEqual({ customerId: "7201", outcome: "existing" });
    // Recorded: the next sweep does not ask Shopify again.
    await sweep(shop);
    expect(await adminRequests(shop, "SignupCustomerByEmail")).toHaveLength(1);
    expect((await signupStatus(shop)).created).toBe(0);
  });
});
