/**
 * The way back: unsubscribes and blocks at the marketing service are returned to Shopify as the
 * customer's email marketing consent (docs/customers-and-consent.md, "Back to Shopify").
 *
 * The interface sends no notifications and its people list has no "changed since" filter (§4.1:
 * status, tags, segments, email, custom fields; pages of at most 100), so every consentReturnEveryMs
 * each connected shop's sweep reads the people whose status is `unsubscribed`, then `blocked`, 100
 * per page, one page per step. A person whose `referenceId` is a customer the app synced, with the
 * same email, still subscribed (or pending) in Shopify as far as the app knows, gets
 * `customerEmailMarketingConsentUpdate` UNSUBSCRIBED. What the app wrote is kept in the customer's
 * consent memory, so Shopify's consent webhook carrying it back changes nothing at the service.
 *
 * One row per shop (ConsentReturnState), claimed with SKIP LOCKED under a lease like the daily
 * reconciliation: any number of workers sweep each shop once per interval; a crash resumes at the
 * saved status and page.
 */
import { z } from "zod";
import { database } from "../db.server";
import { logger } from "../logger.server";
import { messageOf } from "../errors";
import { adminQuery } from "../shopify/admin-api.server";
import { nextTry, type PipelinePolicy } from "../pipeline/policy";
import { CALL_STATUS } from "../pipeline/status";
import { serviceClientFor } from "../shops/connection.server";
import { customerSyncStateSchema } from "../sync/plan-contract";
import { customerObjectKey } from "../sync/mappers/customers";

/** The service's statuses returned to Shopify, read in this order (§2.2 statusDetails). */
export const RETURNED_STATUSES = ["unsubscribed", "blocked"] as const;
/** §4.1: the largest page the people list gives. */
export const PEOPLE_PAGE = 100;
/** A sweep reads at most this many pages per status (200,000 people); the rest waits for the next sweep. */
export const MAX_PAGES_PER_STATUS = 2_000;

/** Shopify consent states the app returns an unsubscribe over; any other already gets no marketing email. */
const RETURNABLE = new Set(["subscribed", "pending"]);

export const CONSENT_UPDATE = `#graphql
  mutation ReturnEmailConsent($input: CustomerEmailMarketingConsentUpdateInput!) {
    customerEmailMarketingConsentUpdate(input: $input) {
      customer { id }
      userErrors { field message code }
    }
  }`;

const consentAnswer = z.object({
  customerEmailMarketingConsentUpdate: z
    .object({
      customer: z.object({ id: z.string() }).nullable(),
      userErrors: z.array(z.object({ field: z.array(z.string()).nullish(), message: z.string(), code: z.string().nullish() })),
    })
    .nullable(),
});

let lastSeed = 0;
let quietUntil = 0;
const SEED_EVERY_MS = 60_000;

/** Gives every connected shop without one its sweep row, first due one interval after it connected. */
export async function seedConsentReturnStates(policy: Pick<PipelinePolicy, "consentReturnEveryMs">): Promise<void> {
  lastSeed = Date.now();
  await database().sql.query(
    `INSERT INTO "ConsentReturnState" (shop, "dueAt")
     SELECT s.domain, coalesce(s."connectedAt", now()) + ($1::bigint * interval '1 millisecond')
       FROM "Shop" s
      WHERE s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL
        AND NOT EXISTS (SELECT 1 FROM "ConsentReturnState" r WHERE r.shop = s.domain)
     ON CONFLICT (shop) DO NOTHING`,
    [policy.consentReturnEveryMs],
  );
}

interface Claimed {
  shop: string;
  statusIndex: number;
  page: number;
  attempts: number;
}

/**
 * One page of one due sweep (the worker's unit of this work); `shop` limits it to one shop.
 * Returns 1 when it did something.
 */
export async function runConsentReturnStep(workerId: string, policy: PipelinePolicy, shop?: string): Promise<number> {
  if (!shop) {
    if (Date.now() < quietUntil) return 0;
    if (Date.now() - lastSeed > SEED_EVERY_MS) await seedConsentReturnStates(policy);
  }
  const [row] = await database().sql.query<Claimed>(
    `UPDATE "ConsentReturnState" r SET "lockedBy" = $1, "lockedUntil" = now() + ($2::int * interval '1 millisecond'),
       attempts = r.attempts + 1, "startedAt" = coalesce(r."startedAt", now())
     WHERE r.shop = (
       SELECT q.shop FROM "ConsentReturnState" q JOIN "Shop" s ON s.domain = q.shop
        WHERE q."dueAt" <= now() AND (q."lockedUntil" IS NULL OR q."lockedUntil" < now())
          AND s."serviceKeyEnc" IS NOT NULL AND s."uninstalledAt" IS NULL AND s."pausedAt" IS NULL AND ($3::text IS NULL OR q.shop = $3)
        ORDER BY q."dueAt" LIMIT 1
        FOR UPDATE OF q SKIP LOCKED)
     RETURNING r.shop, r."statusIndex", r.page, r.attempts`,
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
    logger().warn({ shop: row.shop, attempt: row.attempts, err: message }, "consent return step failed; will retry");
    // After a few tries the sweep waits for its next interval, from the same status and page.
    const next = nextTry("serviceSweep", { attempts: row.attempts }, policy);
    await database().sql.query(
      `UPDATE "ConsentReturnState" SET "dueAt" = now() + ($3::bigint * interval '1 millisecond'), "lastError" = $4,
         attempts = CASE WHEN $5 THEN 0 ELSE attempts END, "lockedBy" = NULL, "lockedUntil" = NULL
        WHERE shop = $1 AND "lockedBy" = $2`,
      [row.shop, workerId, next.delayMs, message, !next.giveUp && next.rest],
    );
  }
  return 1;
}

interface Candidate {
  customerId: string;
  email: string;
  status: string;
}

async function sweepPage(row: Claimed, workerId: string, policy: PipelinePolicy): Promise<void> {
  const client = await serviceClientFor(row.shop);
  if (!client) throw new Error("the shop cannot reach the service (paused or disconnected)");
  const status = RETURNED_STATUSES[row.statusIndex] ?? "blocked";
  const listed = await client.people.list({ status, page: row.page, perPage: PEOPLE_PAGE });
  // Only the app's customers: a numeric referenceId (the Shopify customer id the app sets).
  const people = listed.data
    .map((p) => ({ customerId: String(p.customFields?.referenceId ?? ""), email: p.email, status: p.statusDetails ?? status }))
    .filter((p) => /^\d{1,20}$/.test(p.customerId));
  const candidates = await candidatesOf(row.shop, people);
  let written = 0;
  const errors: string[] = [];
  for (const c of candidates) {
    try {
      if (await returnUnsubscribe(row.shop, c, policy)) written++;
    } catch (error) {
      // One customer Shopify refuses must not hold the others; the next sweep tries it again.
      errors.push(`customer ${c.customerId}: ${messageOf(error)}`);
    }
  }
  const lastPage = !listed.links.next || listed.data.length === 0 || row.page >= MAX_PAGES_PER_STATUS;
  const next = lastPage ? { statusIndex: row.statusIndex + 1, page: 1 } : { statusIndex: row.statusIndex, page: row.page + 1 };
  const finished = next.statusIndex >= RETURNED_STATUSES.length;
  const lastError = errors.length ? errors.slice(0, 3).join("; ") : null;
  if (errors.length) logger().warn({ shop: row.shop, failed: errors.length, err: lastError }, "some consents could not be returned to Shopify; the next sweep tries again");
  const [mine] = finished
    ? await database().sql.query(
        `UPDATE "ConsentReturnState" SET "dueAt" = GREATEST("startedAt" + ($3::bigint * interval '1 millisecond'), now() + interval '10 seconds'),
           "lastRead" = read + $4, "lastWritten" = written + $5, read = 0, written = 0, "startedAt" = NULL, "statusIndex" = 0, page = 1,
           attempts = 0, "lastError" = $6, "lastSweepAt" = now(), "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1 AND "lockedBy" = $2 RETURNING shop`,
        [row.shop, workerId, policy.consentReturnEveryMs, listed.data.length, written, lastError],
      )
    : await database().sql.query(
        `UPDATE "ConsentReturnState" SET "statusIndex" = $3, page = $4, read = read + $5, written = written + $6, attempts = 0, "lastError" = $7,
           "lockedBy" = NULL, "lockedUntil" = NULL
         WHERE shop = $1 AND "lockedBy" = $2 RETURNING shop`,
        [row.shop, workerId, next.statusIndex, next.page, listed.data.length, written, lastError],
      );
  if (!mine) logger().warn({ shop: row.shop }, "consent return lease lost; another worker goes on");
  if (written || finished) logger().info({ shop: row.shop, status, page: row.page, written, finished }, "consent return page swept");
}

/**
 * The listed people whose Shopify consent the app would change: a customer it synced, not
 * deleted, known under the same email, subscribed or pending as Shopify last told, with no call
 * for it still waiting for the service (a newer Shopify change on its way there wins).
 */
async function candidatesOf(shop: string, people: Candidate[]): Promise<Candidate[]> {
  if (!people.length) return [];
  const rows = await database().sql.query<{ objectKey: string; state: unknown; waiting: boolean }>(
    `SELECT o."objectKey", o.state,
            EXISTS (SELECT 1 FROM "OutboundCall" c WHERE c.shop = o.shop AND c."objectKey" = o."objectKey" AND c.status IN ($3, $4)) AS waiting
       FROM "ObjectState" o WHERE o.shop = $1 AND o."objectKey" = ANY($2::text[])`,
    [shop, people.map((p) => customerObjectKey(p.customerId)), CALL_STATUS.queued, CALL_STATUS.running],
  );
  const byKey = new Map(rows.map((r) => [r.objectKey, r]));
  return people.filter((p) => {
    const row = byKey.get(customerObjectKey(p.customerId));
    const state = customerSyncStateSchema.safeParse(row?.state);
    if (!row || row.waiting || !state.success || state.data.deleted) return false;
    if (state.data.email?.toLowerCase() !== p.email.toLowerCase()) return false;
    return state.data.consent.state !== null && RETURNABLE.has(state.data.consent.state);
  });
}

/** Writes UNSUBSCRIBED to Shopify, then remembers it (the webhook that brings it back is an echo). */
async function returnUnsubscribe(shop: string, c: Candidate, policy: PipelinePolicy): Promise<boolean> {
  // Seconds: Shopify keeps consent times to the second, and the echo is recognised by it.
  const at = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  const data = consentAnswer.parse(
    await adminQuery(
      shop,
      CONSENT_UPDATE,
      {
        input: {
          customerId: `gid://shopify/Customer/${c.customerId}`,
          emailMarketingConsent: { marketingState: "UNSUBSCRIBED", marketingOptInLevel: "SINGLE_OPT_IN", consentUpdatedAt: at },
        },
      },
      { maxWaitMs: Math.floor(policy.leaseMs / 4) },
    ),
  );
  const answer = data.customerEmailMarketingConsentUpdate;
  if (!answer || answer.userErrors.length || !answer.customer) {
    throw new Error(`Shopify refused the consent: ${answer?.userErrors.map((e) => e.message).join("; ") || "no customer in the answer"}`);
  }
  // The service has it already: the consent memory says unsubscribed at `at`, written by the app.
  await database().sql.query(
    `UPDATE "ObjectState" SET state = jsonb_set(state, '{consent}', (state->'consent') || $3::jsonb), "updatedAt" = now()
      WHERE shop = $1 AND "objectKey" = $2`,
    [shop, customerObjectKey(c.customerId), JSON.stringify({ state: "unsubscribed", at, returnedAt: at })],
  );
  logger().info({ shop, customer: c.customerId, status: c.status }, "unsubscribe at the service returned to Shopify");
  return true;
}

export interface ConsentReturnStatus {
  dueAt: Date;
  running: boolean;
  lastSweepAt: Date | null;
  lastRead: number | null;
  lastWritten: number | null;
  lastError: string | null;
}

export async function consentReturnStatus(shop: string): Promise<ConsentReturnStatus | null> {
  const [row] = await database().sql.query<ConsentReturnStatus>(
    `SELECT "dueAt" AT TIME ZONE 'UTC' AS "dueAt", "startedAt" IS NOT NULL AS running, "lastSweepAt" AT TIME ZONE 'UTC' AS "lastSweepAt",
            "lastRead", "lastWritten", "lastError"
       FROM "ConsentReturnState" WHERE shop = $1`,
    [shop],
  );
  return row ?? null;
}
