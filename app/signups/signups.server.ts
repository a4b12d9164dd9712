/**
 * The service's own signups become Shopify customers (docs/customers-and-consent.md, "Signups at
 * the service become Shopify customers"): a person who signed up through the marketing service's
 * forms (any source but the app's) and confirmed is created in Shopify with email marketing consent
 * SUBSCRIBED and the tag SIGNUP_TAG, when the shop's `signupsToShopify` setting is on.
 *
 * The interface sends no notifications and its people list has no "changed since" filter, so every
 * consentReturnEveryMs each connected shop's sweep reads the confirmed people (§4.1
 * `filter[status]=confirmed`), 100 per page, one page per worker step. With the setting off the
 * sweep still reads and counts who would be added (Settings shows the number), creating nothing.
 * Which person became which customer is kept in SignupCustomer, so no person is sent twice; a crash
 * between Shopify's create and that record is covered by looking the email up first (Shopify
 * keeps one customer per email).
 *
 * One row per shop (SignupSweepState), claimed with SKIP LOCKED under a lease like the consent
 * return (app/consent-return): any number of workers, one sweep per shop at a time.
 */
import { z } from "zod";
import { database } from "../db.server";
import { logger } from "../logger.server";
import { messageOf } from "../errors";
import { adminQuery } from "../shopify/admin-api.server";
import { nextTry, type PipelinePolicy } from "../pipeline/policy";
import type { Person } from "../services/marketing/schemas";
import { serviceClientFor, shopContext } from "../shops/connection.server";
import { emptyConsentMemory } from "../sync/consent";
import type { CustomerSyncState } from "../sync/plan-contract";
import { customerObjectKey } from "../sync/mappers/customers";
import { gidNumber } from "../sync/payloads";
import { defaultSettings } from "../sync/settings";

/** The Shopify tag of every customer the app creates from a signup: the merchant sees where they came from. */
export const SIGNUP_TAG = "Marketing Sync signup";
/** §4.1: the largest page the people list gives. */
export const PEOPLE_PAGE = 100;
/** A sweep reads at most this many pages (200,000 confirmed people); the rest waits for the next sweep. */
export const MAX_PAGES = 2_000;

/**
 * The one place that decides whether a person at the service came from the app, and so is never
 * sent back to Shopify. §2.2 names two markers: `referenceId` (the app sets the Shopify customer id
 * on every contact it creates; any other system's id means the person is that system's, not a
 * form's) and `source` (§4.1: first write wins, so it names who created the person). A person
 * created by the app carries the shop's source setting, or the default `shopify` when the merchant
 * renamed it later. A person without a source (the interface does not show how the service's own
 * forms fill it) is not the app's: the app always sends one.
 */
export function isFromTheApp(person: Pick<Person, "customFields">, appSource: string): boolean {
  const ref = person.customFields?.referenceId;
  if (ref !== undefined && ref !== null && String(ref).trim() !== "") return true;
  const source = String(person.customFields?.source ?? "").trim().toLowerCase();
  return source !== "" && (source === appSource.trim().toLowerCase() || source === defaultSettings.source);
}

/** §2.2: confirmed is `statusDetails` confirmed (`active` where a list item gives no details). */
const isConfirmed = (p: Person) => (p.statusDetails ? p.statusDetails === "confirmed" : p.status === "active");

export const SIGNUP_LOOKUP = `#graphql
  query SignupCustomerByEmail($email: String!) {
    customerByIdentifier(identifier: { emailAddress: $email }) {
      id
      tags
    }
  }`;

export const SIGNUP_CREATE = `#graphql
  mutation SignupCustomerCreate($input: CustomerInput!) {
    customerCreate(input: $input) {
      customer { id }
      userErrors { field message }
    }
  }`;

const lookupAnswer = z.object({ customerByIdentifier: z.object({ id: z.string(), tags: z.array(z.string()) }).nullable() });
const createAnswer = z.object({
  customerCreate: z
    .object({
      customer: z.object({ id: z.string() }).nullable(),
      userErrors: z.array(z.object({ field: z.array(z.string()).nullish(), message: z.string() })),
    })
    .nullable(),
});

let lastSeed = 0;
let quietUntil = 0;
const SEED_EVERY_MS = 60_000;

/** Gives every connected shop without one its sweep row, first due one interval after it connected. */
export async function seedSignupStates(policy: Pick<PipelinePolicy, "consentReturnEveryMs">): Promise<void> {
  lastSeed = Date.now();
  await database().sql.query(
    `INSERT INTO "SignupSweepState" (shop, "dueAt")
     SELECT s.domain, coalesce(s."connectedAt", now()) + ($1::bigint * interval '1 millisecond')
       FROM "Shop" s
      WHERE s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "SignupSweepState" r WHERE r.shop = s.domain)
     ON CONFLICT (shop) DO NOTHING`,
    [policy.consentReturnEveryMs],
  );
}

/**
 * A merchant who just connected from the Connection page gets the first sweep now (the number
 * Settings shows, and the signups created if chosen) rather than one interval later. A sweep
 * under way is left to finish.
 */
export async function sweepSignupsSoon(shop: string): Promise<void> {
  await database().sql.query(
    `INSERT INTO "SignupSweepState" (shop, "dueAt") VALUES ($1, now())
     ON CONFLICT (shop) DO UPDATE SET "dueAt" = now() WHERE "SignupSweepState"."startedAt" IS NULL`,
    [shop],
  );
}

interface Claimed {
  shop: string;
  page: number;
  attempts: number;
}

/** One page of one due sweep (the worker's unit of this work); `shop` limits it to one shop. Returns 1 when it did something. */
export async function runSignupStep(workerId: string, policy: PipelinePolicy, shop?: string): Promise<number> {
  if (!shop) {
    if (Date.now() < quietUntil) return 0;
    if (Date.now() - lastSeed > SEED_EVERY_MS) await seedSignupStates(policy);
  }
  const [row] = await database().sql.query<Claimed>(
    `UPDATE "SignupSweepState" r SET "lockedBy" = $1, "lockedUntil" = now() + ($2::int * interval '1 millisecond'),
       attempts = r.attempts + 1, "startedAt" = coalesce(r."startedAt", now())
     WHERE r.shop = (
       SELECT q.shop FROM "SignupSweepState" q JOIN "Shop" s ON s.domain = q.shop
        WHERE q."dueAt" <= now() AND (q."lockedUntil" IS NULL OR q."lockedUntil" < now())
          AND s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL AND s."pausedAt" IS NULL AND ($3::text IS NULL OR q.shop = $3)
        ORDER BY q."dueAt" LIMIT 1
        FOR UPDATE OF q SKIP LOCKED)
     RETURNING r.shop, r.page, r.attempts`,
    [workerId, policy.leaseMs, shop ?? null],
  );
  if (!row) {
    if (!shop) quietUntil = Date.now() + policy.pollMs * 20;
    return 0;
  }
  try {
    await sweepPage(row, workerId, policy);
  } catch (error) {
    const message = messageOf(error);
    logger().warn({ shop: row.shop, attempt: row.attempts, err: message }, "signup sweep step failed; will retry");
    const next = nextTry("serviceSweep", { attempts: row.attempts }, policy);
    await database().sql.query(
      `UPDATE "SignupSweepState" SET "dueAt" = now() + ($3::bigint * interval '1 millisecond'), "lastError" = $4,
         attempts = CASE WHEN $5 THEN 0 ELSE attempts END, "lockedBy" = NULL, "lockedUntil" = NULL
        WHERE shop = $1 AND "lockedBy" = $2`,
      [row.shop, workerId, next.delayMs, message, !next.giveUp && next.rest],
    );
  }
  return 1;
}

async function sweepPage(row: Claimed, workerId: string, policy: PipelinePolicy): Promise<void> {
  const client = await serviceClientFor(row.shop);
  if (!client) throw new Error("the shop cannot reach the service (paused or disconnected)");
  const { settings } = await shopContext(row.shop);
  const listed = await client.people.list({ status: "confirmed", page: row.page, perPage: PEOPLE_PAGE });
  const signups = await notYetCustomers(
    row.shop,
    listed.data.filter((p) => p.email && isConfirmed(p) && !isFromTheApp(p, settings.source)),
  );
  let created = 0;
  const errors: string[] = [];
  if (settings.signupsToShopify) {
    for (const person of signups) {
      try {
        if (await adopt(row.shop, person, policy)) created++;
      } catch (error) {
        // One person Shopify refuses must not hold the others; the next sweep tries again.
        errors.push(`${person.email}: ${messageOf(error)}`);
      }
    }
  }
  // Still waiting: every signup when the setting is off, those Shopify refused when it is on.
  const waiting = settings.signupsToShopify ? errors.length : signups.length;
  const finished = !listed.links.next || listed.data.length === 0 || row.page >= MAX_PAGES;
  const lastError = errors.length ? errors.slice(0, 3).join("; ") : null;
  if (errors.length) logger().warn({ shop: row.shop, failed: errors.length, err: lastError }, "some signups could not become Shopify customers; the next sweep tries again");
  const [mine] = finished
    ? await database().sql.query(
        `UPDATE "SignupSweepState" SET "dueAt" = GREATEST("startedAt" + ($3::bigint * interval '1 millisecond'), now() + interval '10 seconds'),
           "lastRead" = read + $4, "lastWaiting" = waiting + $5, "lastCreated" = created + $6, read = 0, waiting = 0, created = 0,
           "startedAt" = NULL, page = 1, attempts = 0, "lastError" = $7, "lastSweepAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1 AND "lockedBy" = $2 RETURNING shop`,
        [row.shop, workerId, policy.consentReturnEveryMs, listed.data.length, waiting, created, lastError],
      )
    : await database().sql.query(
        `UPDATE "SignupSweepState" SET page = $3, read = read + $4, waiting = waiting + $5, created = created + $6, attempts = 0, "lastError" = $7,
           "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1 AND "lockedBy" = $2 RETURNING shop`,
        [row.shop, workerId, row.page + 1, listed.data.length, waiting, created, lastError],
      );
  if (!mine) logger().warn({ shop: row.shop }, "signup sweep lease lost; another worker goes on");
  if (created || finished) logger().info({ shop: row.shop, page: row.page, created, waiting, finished }, "signup page swept");
}

/**
 * The listed signups no earlier sweep recorded (by person id, or by email: one customer per email),
 * and whose address is not of a customer erased at Shopify's request (customers/redact keeps only
 * a hash, ErasedReference): an erased customer is never created again from the service.
 */
async function notYetCustomers(shop: string, people: Person[]): Promise<Person[]> {
  if (!people.length) return [];
  const rows = await database().sql.query<{ personId: string; email: string }>(
    `SELECT "personId", lower(email) AS email FROM "SignupCustomer" WHERE shop = $1 AND ("personId" = ANY($2::text[]) OR lower(email) = ANY($3::text[]))
     UNION ALL
     SELECT '', e FROM unnest($3::text[]) AS e
      WHERE EXISTS (SELECT 1 FROM "ErasedReference" x WHERE x.shop = $1 AND x.ref = erased_reference_hash($1, 'email:' || e))`,
    [shop, people.map((p) => String(p.id)), people.map((p) => p.email.toLowerCase())],
  );
  const ids = new Set(rows.map((r) => r.personId));
  const emails = new Set(rows.map((r) => r.email));
  return people.filter((p) => !ids.has(String(p.id)) && !emails.has(p.email.toLowerCase()));
}

/** Shopify's time format to the second (Shopify keeps consent times to the second). */
const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/**
 * Makes one signup a Shopify customer, or records that its email already is one. An existing
 * customer is left exactly as it is (its consent is the merchant's record: an unsubscribe there
 * must not be overturned, and the interface does not say when the person confirmed). Returns
 * whether a customer was created now.
 */
async function adopt(shop: string, person: Person, policy: PipelinePolicy): Promise<boolean> {
  const maxWaitMs = Math.floor(policy.leaseMs / 4);
  const email = person.email.trim();
  // §2.2 `timestamp`: the person's creation at the service, the signup; never later than now.
  const signedUpMs = Math.min(person.timestamp ? person.timestamp * 1000 : Date.now(), Date.now());
  const found = lookupAnswer.parse(await adminQuery(shop, SIGNUP_LOOKUP, { email }, { maxWaitMs })).customerByIdentifier;
  if (found) {
    // Ours from a sweep cut short between Shopify's create and the record: recorded as created now.
    const ours = found.tags.includes(SIGNUP_TAG);
    await record(shop, person, found.id, ours ? "created" : "existing", signedUpMs);
    return false;
  }
  const at = isoSeconds(signedUpMs);
  const first = typeof person.customFields?.firstName === "string" ? person.customFields.firstName.trim() : "";
  const last = typeof person.customFields?.lastName === "string" ? person.customFields.lastName.trim() : "";
  const data = createAnswer.parse(
    await adminQuery(
      shop,
      SIGNUP_CREATE,
      {
        input: {
          email,
          ...(first ? { firstName: first } : {}),
          ...(last ? { lastName: last } : {}),
          tags: [SIGNUP_TAG],
          // SINGLE_OPT_IN: the interface does not say whether the person confirmed an email or was
          // set confirmed by an import or the API (§3.2), so the app claims no more than a signup.
          emailMarketingConsent: { marketingState: "SUBSCRIBED", marketingOptInLevel: "SINGLE_OPT_IN", consentUpdatedAt: at },
        },
      },
      { maxWaitMs },
    ),
  );
  const answer = data.customerCreate;
  if (!answer || answer.userErrors.length || !answer.customer) {
    throw new Error(`Shopify refused the customer: ${answer?.userErrors.map((e) => e.message).join("; ") || "no customer in the answer"}`);
  }
  await record(shop, person, answer.customer.id, "created", signedUpMs);
  // The app now knows the customer as a subscribed contact at this consent time: Shopify's
  // customers/create and consent webhooks for it only link the contact (referenceId), never
  // create a person or send a confirmation email (a state the planner already wrote wins).
  const customerId = customerNumber(answer.customer.id);
  const state: CustomerSyncState = {
    kind: "customer",
    email,
    tags: [SIGNUP_TAG],
    consent: { ...emptyConsentMemory, state: "subscribed", at, optInLevel: "single_opt_in", contact: true },
    deleted: false,
    ...(first || last ? { profile: { ...(first ? { firstName: first } : {}), ...(last ? { lastName: last } : {}) } } : {}),
  };
  await database().sql.query(
    `INSERT INTO "ObjectState" (shop, "objectKey", state, "updatedAt") VALUES ($1, $2, $3::jsonb, now()) ON CONFLICT (shop, "objectKey") DO NOTHING`,
    [shop, customerObjectKey(customerId), JSON.stringify(state)],
  );
  logger().info({ shop, customer: customerId }, "signup at the service became a Shopify customer");
  return true;
}

function customerNumber(gid: string): string {
  const id = gidNumber(gid);
  if (!id) throw new Error(`Shopify answered a customer id that is not a gid: ${gid}`);
  return id;
}

async function record(shop: string, person: Person, customerGid: string, outcome: "created" | "existing", signedUpMs: number): Promise<void> {
  await database().sql.query(
    `INSERT INTO "SignupCustomer" (shop, "personId", email, "customerId", outcome, "signedUpAt")
     VALUES ($1, $2, $3, $4, $5, to_timestamp($6::double precision / 1000) AT TIME ZONE 'UTC')
     ON CONFLICT (shop, "personId") DO NOTHING`,
    [shop, String(person.id), person.email.trim().toLowerCase(), customerNumber(customerGid), outcome, signedUpMs],
  );
}

export interface SignupStatus {
  /** Signups the last finished sweep found waiting (all of them with the setting off); null before the first sweep. */
  waiting: number | null;
  lastSweepAt: Date | null;
  lastError: string | null;
  /** Customers the app created from signups, ever (recorded after Shopify accepted each). */
  created: number;
}

export async function signupStatus(shop: string): Promise<SignupStatus> {
  const [row] = await database().sql.query<{ lastWaiting: number | null; lastSweepAt: Date | null; lastError: string | null; created: number }>(
    `SELECT r."lastWaiting", r."lastSweepAt" AT TIME ZONE 'UTC' AS "lastSweepAt", r."lastError",
            (SELECT count(*)::int FROM "SignupCustomer" c WHERE c.shop = $1 AND c.outcome = 'created') AS created
       FROM (SELECT 1) one LEFT JOIN "SignupSweepState" r ON r.shop = $1`,
    [shop],
  );
  return { waiting: row?.lastWaiting ?? null, lastSweepAt: row?.lastSweepAt ?? null, lastError: row?.lastError ?? null, created: row?.created ?? 0 };
}
