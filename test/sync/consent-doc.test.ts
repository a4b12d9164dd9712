/**
 * docs/customers-and-consent.md's outcome table is the consent machine's: each cell is computed
 * here from decideConsent, and the document must show the same table.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decideConsent, type ConsentDecision, type ConsentInput, type ConsentMemory } from "../../app/sync/consent";
import { demoStream } from "../../dev/demo/stream";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-02-01T00:00:00.000Z";
const MODES = ["trust_shopify", "double_opt_in"] as const;

const ROWS: Array<[string, ConsentInput]> = [
  ["subscribed (single_opt_in)", { state: "subscribed", optInLevel: "single_opt_in", consentUpdatedAt: T1 }],
  ["subscribed (confirmed_opt_in)", { state: "subscribed", optInLevel: "confirmed_opt_in", consentUpdatedAt: T1 }],
  ["pending", { state: "pending", optInLevel: "confirmed_opt_in", consentUpdatedAt: T1 }],
  ["not_subscribed", { state: "not_subscribed", optInLevel: null, consentUpdatedAt: T1 }],
  ["unsubscribed", { state: "unsubscribed", optInLevel: null, consentUpdatedAt: T1 }],
  ["invalid", { state: "invalid", optInLevel: null, consentUpdatedAt: T1 }],
  ["redacted", { state: "redacted", optInLevel: null, consentUpdatedAt: T1 }],
  ["absent from the payload", { state: null, optInLevel: null, consentUpdatedAt: null }],
];

const memory = (state: "subscribed" | "unsubscribed"): ConsentMemory => ({ state, at: T0, optInLevel: "single_opt_in", contact: true, doiRequested: state === "subscribed" });
const COLUMNS: Array<[string, ConsentMemory | null]> = [
  ["new customer", null],
  ["contact, subscribed before", memory("subscribed")],
  ["contact, unsubscribed before", memory("unsubscribed")],
];

function outcome(d: ConsentDecision, existing: boolean): string {
  if (d.upsert === false) return existing ? "left as is" : "no contact";
  if (d.recreate) return "re-created, confirmation email";
  if (d.requestsDoubleOptIn) return "unconfirmed, confirmation email";
  if (d.upsert.statusDetails === "confirmed") return "confirmed";
  if (d.upsert.statusDetails === "unsubscribed") return "unsubscribed";
  if (d.upsert.statusDetails === "unconfirmed") return "unconfirmed, no email";
  return "left as is";
}

export function outcomeTable(): string {
  const header = `| Shopify consent | ${COLUMNS.flatMap(([c]) => MODES.map((m) => `${c}: ${m}`)).join(" | ")} |`;
  const rule = `|---|${COLUMNS.flatMap(() => MODES.map(() => "---")).join("|")}|`;
  const rows = ROWS.map(
    ([name, input]) =>
      `| ${name} | ${COLUMNS.flatMap(([, mem]) =>
        MODES.map((optInMode) => outcome(decideConsent(input, mem, { optInMode, syncNonSubscribers: false }), mem !== null)),
      ).join(" | ")} |`,
  );
  return [header, rule, ...rows].join("\n");
}

describe("docs/customers-and-consent.md", () => {
  it("shows each consent mode's outcome for each Shopify consent state, as the code decides it", () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, "../../docs/customers-and-consent.md"), "utf8");
    expect(doc, `expected the document to contain:\n${outcomeTable()}`).toContain(outcomeTable());
  });

  it("the demo stream sends customers in the 2026-04 shapes (no tags, consent or totals on customers/*)", () => {
    const stream = demoStream({ customers: 40, seed: 7 });
    const topics = new Set(stream.map((d) => d.topic));
    for (const t of ["customers_email_marketing_consent/update", "customer.tags_added", "customers/purchasing_summary"]) expect(topics).toContain(t);
    for (const d of stream.filter((x) => x.topic.startsWith("customers/create") || x.topic.startsWith("customers/update"))) {
      const body = JSON.parse(d.body) as Record<string, unknown>;
      for (const gone of ["tags", "email_marketing_consent", "orders_count", "total_spent"]) expect(body).not.toHaveProperty(gone);
    }
  });
});
