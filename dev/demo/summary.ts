import Table from "cli-table3";
import { prisma } from "../../app/db.server";
import type { Emulator } from "../emulator/server";

export interface DemoTotals {
  sent: number;
  acknowledged: number;
  duplicatesSent: number;
  outOfOrderSent: number;
  seconds: number;
  deliverySeconds: number;
  subscribedCustomers: number;
}

/** The end-of-demo tables: what came in, what went out per endpoint, and what it cost. */
export async function renderSummary(shop: string, emulator: Emulator, totals: DemoTotals): Promise<{ text: string; lost: number }> {
  const db = prisma();
  const [outcomes, counters, calls] = await Promise.all([
    db.webhookDelivery.groupBy({ by: ["outcome"], where: { shop }, _count: { _all: true } }),
    db.syncCounter.aggregate({ where: { shop }, _sum: { received: true, duplicates: true, failed: true } }),
    db.outboundCall.groupBy({ by: ["status"], where: { shop }, _count: { _all: true } }),
  ]);
  const outcome = (name: string | null) => outcomes.find((o) => o.outcome === name)?._count._all ?? 0;
  const status = (name: string) => calls.find((c) => c.status === name)?._count._all ?? 0;

  const incoming = new Table({ head: ["Webhooks", "count"], colAligns: ["left", "right"] });
  incoming.push(
    ["sent (signed, over HTTP)", totals.sent],
    ["acknowledged 200", totals.acknowledged],
    ["recorded", counters._sum.received ?? 0],
    [`deduplicated (same Event-Id; ${totals.duplicatesSent} re-sent)`, counters._sum.duplicates ?? 0],
    ["planned into service calls", outcome("planned")],
    [`stale: an older version after a newer (${totals.outOfOrderSent} reordered on purpose)`, outcome("stale")],
    ["unchanged content, skipped", outcome("unchanged")],
    ["nothing to send (e.g. non-subscriber contact)", outcome("ignored")],
    ["invalid body (kept for support)", outcome("invalid")],
  );

  const perEndpoint = new Map<string, { ok: number; failed: number }>();
  for (const r of emulator.requests) {
    if (r.method === "GET") continue;
    const key = `${r.method} ${r.path.replace(/\/api\/people\/[^/]+$/, "/api/people/{idOrEmail}")}`;
    const row = perEndpoint.get(key) ?? { ok: 0, failed: 0 };
    if (r.status !== null && r.status < 300) row.ok++;
    else row.failed++;
    perEndpoint.set(key, row);
  }
  const outgoing = new Table({ head: ["Service endpoint", "delivered", "failed attempts"], colAligns: ["left", "right", "right"] });
  for (const [endpoint, row] of [...perEndpoint.entries()].sort()) outgoing.push([endpoint, row.ok, row.failed]);

  const confirmations = emulator.sentEmails.filter((e) => e.kind === "confirmation").length;
  const delivered = status("delivered");
  const lost = (await db.webhookDelivery.count({ where: { shop, status: { not: "done" } } })) + status("queued") + status("running");
  const totalsTable = new Table({ head: ["Totals", ""], colAligns: ["left", "right"] });
  totalsTable.push(
    ["service calls delivered", delivered],
    ["failed attempts, retried", counters._sum.failed ?? 0],
    ["dead letters", status("dead")],
    ["refused by the service (recorded)", status("refused")],
    ["still waiting", status("queued") + status("running")],
    ["double opt-in emails (subscribers only)", `${confirmations} of ${totals.subscribedCustomers} subscribing customers`],
    ["time taken", `${totals.seconds.toFixed(1)} s`],
    ["calls delivered per second of replay (incl. retry waits)", `${(delivered / Math.max(totals.deliverySeconds, 0.001)).toFixed(0)} calls/s`],
  );
  return { text: [incoming.toString(), outgoing.toString(), totalsTable.toString(), await storyOf(shop, emulator)].join("\n"), lost };
}

/**
 * One customer's story as the service recorded it: the contact, its status, and its events in
 * order. Picks the customer with the most varied history.
 */
async function storyOf(shop: string, emulator: Emulator): Promise<string> {
  const people = emulator.state.people;
  let best: { email: string; statusDetails: string; events: { event: string; timestamp: number }[] } | undefined;
  for (const person of people) {
    const events = emulator.personEvents(person.email);
    if (!best || new Set(events.map((e) => e.event)).size > new Set(best.events.map((e) => e.event)).size) {
      best = { ...person, events };
    }
  }
  const [abandoned, recovered] = await Promise.all([
    prisma().abandonmentTimer.count({ where: { shop, status: "sent" } }),
    prisma().abandonmentTimer.count({ where: { shop, status: "cancelled" } }),
  ]);
  const lines = [`Abandoned checkouts: ${abandoned} reminded (cart/abandoned), ${recovered} recovered by an order before the reminder.`];
  if (best) {
    lines.push(`One customer's story, as the service recorded it: ${best.email} (${best.statusDetails})`);
    for (const e of best.events) lines.push(`  ${e.event}`);
  }
  return lines.join("\n");
}
