import { afterAll, beforeAll, expect, it } from "vitest";
import type { PreparedStatement, SqlValue } from "~/db/migrate.server";
import { executeStatement, prepareStatement } from "~/db/prepared";
import { deliverCalls } from "~/pipeline/deliver.server";
import { planDeliveries } from "~/jobs/index.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";

interface PlanNode {
  "Node Type": string;
  "Subplan Name"?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

const nodeTypes = (node: PlanNode): string[] => [node["Node Type"], ...(node.Plans ?? []).flatMap(nodeTypes)];
/** The plan's own nodes, without its subqueries (InitPlan, SubPlan, CTE). */
const outerNodeTypes = (node: PlanNode): string[] => [
  node["Node Type"],
  ...(node.Plans ?? []).filter((p) => !p["Subplan Name"]).flatMap(outerNodeTypes),
];
const allNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(allNodes)];
/** Every scan of `table` anywhere in the plan, as "Node Type Index Name". */
const scansOf = (plan: PlanNode, table: string) =>
  allNodes(plan)
    .filter((n) => n["Relation Name"] === table && n["Node Type"] !== "ModifyTable")
    .map((n) => `${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""}`);
const findSubplan = (node: PlanNode, name: string): PlanNode | undefined =>
  node["Subplan Name"] === name ? node : (node.Plans ?? []).map((p) => findSubplan(p, name)).find(Boolean);

describeEachDatabase("claims", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  /**
   * The plan of the claim `run` would make on `table` (nothing is claimed). Claims are prepared
   * statements: the plan is the generic one, which the database may keep for every later claim.
   */
  async function claimPlan(table: string, run: () => Promise<number>): Promise<PlanNode | undefined> {
    const { sql } = app.db;
    const prepared = sql.prepared;
    let plan: PlanNode | undefined;
    sql.prepared = async <T,>(statement: PreparedStatement, params: readonly SqlValue[]) => {
      if (!plan && statement.text.includes(`UPDATE "${table}" SET status = 'running'`)) {
        const probe = { ...statement, name: "ms_test_claim_plan" };
        const [row] = await sql.transaction(async (tx) => {
          await tx.exec(`SET LOCAL plan_cache_mode = force_generic_plan; ${prepareStatement(probe)}`);
          const rows = await tx.query<{ "QUERY PLAN": [{ Plan: PlanNode }] | string }>(`EXPLAIN (FORMAT JSON) ${executeStatement(probe, params)}`);
          await tx.exec(`DEALLOCATE ${probe.name}`);
          return rows;
        });
        const explained = row!["QUERY PLAN"];
        plan = (typeof explained === "string" ? (JSON.parse(explained) as [{ Plan: PlanNode }]) : explained)[0].Plan;
        return [] as T[]; // claim nothing: only the plan is under test
      }
      return prepared<T>(statement, params);
    };
    try {
      expect(await run()).toBe(0);
    } finally {
      sql.prepared = prepared;
    }
    return plan;
  }
  const deliveryClaimPlan = () => claimPlan("OutboundCall", () => deliverCalls("claim-plan-test", { ...PIPELINE_POLICY }));

  // Runs first, while the queue table is small: that is when the planner chose to hash-join the
  // claimed ids against a scan of the whole table (`id IN (…)`), 5.6 ms a claim of 64 at 6,000
  // queued calls on PostgreSQL against 3.9 ms by primary key.
  it("the delivery claim updates the rows it chose by primary key, not by scanning the table", async () => {
    const shop = "claim-small.myshopify.com";
    await app.db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc") VALUES ($1, now(), 'sealed')`, [shop]);
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call)
         SELECT '${shop}', 'customer:' || (g / 2), 'customer', '{}'::jsonb FROM generate_series(0, 5999) g`,
    );
    await app.db.sql.exec(`ANALYZE "OutboundCall", "Shop"`);
    const plan = await deliveryClaimPlan();
    expect(plan).toBeDefined();
    expect(outerNodeTypes(plan!)).not.toContain("Seq Scan");
    expect(outerNodeTypes(plan!)).toContain("Index Scan");
    await app.db.sql.query(`DELETE FROM "OutboundCall" WHERE shop = $1`, [shop]);
  });

  // A claim that sorted every due row cost 20 ms per batch at 4,500 queued calls on PGlite, and
  // grew with the backlog; walking the (status, runAt, id) index stops when the batch is full.
  it("the delivery claim walks the queue index in order instead of sorting the whole backlog", async () => {
    const shop = "claim-plan.myshopify.com";
    await app.db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc") VALUES ($1, now(), 'sealed')`, [shop]);
    // Two calls per object: only the first of each is claimable (head of line). Behind them, the
    // calls already delivered, as during a history import.
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status, "runAt")
         SELECT '${shop}', 'customer:done-' || g, 'customer', '{}'::jsonb, 'delivered', now() - interval '1 hour' + g * interval '1 ms'
           FROM generate_series(0, 19999) g`,
    );
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, "runAt")
         SELECT '${shop}', 'customer:' || (g / 2), 'customer', '{}'::jsonb, now() - (6000 - g) * interval '1 ms'
           FROM generate_series(0, 5999) g ORDER BY g`,
    );
    await app.db.sql.exec(`ANALYZE "OutboundCall", "Shop"`);

    const plan = await deliveryClaimPlan();
    // (With the occasional scan for expired leases, the due rows are the CTE "due".)
    const due = (plan && findSubplan(plan, "CTE due")) ?? plan;
    expect(due).toBeDefined();
    expect(nodeTypes(due!)).not.toContain("Sort");
    expect(nodeTypes(due!)).toContain("Index Scan");
  });

  // Planning claims round-robin between shops (fairShareCandidates): one probe per shop into the
  // queued-by-shop partial index, then each shop's oldest from its own slice of it. Through the full
  // (receivedAt, id) index a claim walked past every finished delivery kept for 14 days (53 ms at
  // 65k); a sequential scan grows with everything kept.
  it("the planning claim reads only queued deliveries through an index, however many finished ones are kept", async () => {
    await app.db.sql.exec(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody", status, "receivedAt")
         SELECT 'done-' || g, 's' || (g % 40), 'customers/update', 'w' || g, 'e' || g, '{}', 'done', now() - interval '1 day' + g * interval '1 ms'
           FROM generate_series(1, 20000) g`,
    );
    await app.db.sql.exec(
      `INSERT INTO "WebhookDelivery" (id, shop, topic, "webhookId", "eventId", "rawBody")
         SELECT 'queued-' || g, 's' || (g % 5), 'customers/update', 'qw' || g, 'qe' || g, '{}' FROM generate_series(1, 500) g`,
    );
    await app.db.sql.exec(`ANALYZE "WebhookDelivery"`);
    const plan = await claimPlan("WebhookDelivery", () => planDeliveries("claim-plan-test", { ...PIPELINE_POLICY }));
    expect(plan).toBeDefined();
    const scans = scansOf(plan!, "WebhookDelivery");
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.filter((s) => s.startsWith("Seq Scan"))).toEqual([]);
    // The rows it picks come from the partial index of queued deliveries, never a full one.
    expect(scans.some((s) => s.endsWith("WebhookDelivery_queued_shop_history_receivedAt_id_idx"))).toBe(true);
    expect(scans.filter((s) => /WebhookDelivery_receivedAt(_id)?_idx$/.test(s))).toEqual([]);
  });

  it("the delivery claim probes the queued-by-shop index, with no scan of the whole queue", async () => {
    await app.db.sql.exec(
      `INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc")
         SELECT 'claim-fair-' || g || '.myshopify.com', now(), 'sealed' FROM generate_series(0, 9) g`,
    );
    // One flooding shop, nine trickling ones, and the delivered calls kept behind them.
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call, status)
         SELECT 'claim-fair-' || (g % 10) || '.myshopify.com', 'customer:done-' || g, 'customer', '{}'::jsonb, 'delivered'
           FROM generate_series(0, 19999) g`,
    );
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call)
         SELECT CASE WHEN g < 5000 THEN 'claim-fair-0' ELSE 'claim-fair-' || (g % 10) END || '.myshopify.com',
                'customer:' || g, 'customer', '{}'::jsonb FROM generate_series(0, 5099) g`,
    );
    await app.db.sql.exec(`ANALYZE "OutboundCall", "Shop"`);
    const plan = await deliveryClaimPlan();
    expect(plan).toBeDefined();
    const scans = scansOf(plan!, "OutboundCall");
    expect(scans.filter((s) => !/^Index (Only )?Scan /.test(s))).toEqual([]);
    expect(scans.some((s) => s.endsWith("OutboundCall_queued_shop_background_runAt_id_idx"))).toBe(true);
  });
});
