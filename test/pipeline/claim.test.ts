import { afterAll, beforeAll, expect, it } from "vitest";
import { deliverCalls } from "~/pipeline/deliver.server";
import { PIPELINE_POLICY } from "~/pipeline/policy";
import { startTestApp, type TestApp } from "../support/app";
import { describeEachDatabase } from "../support/database";

interface PlanNode {
  "Node Type": string;
  "Subplan Name"?: string;
  Plans?: PlanNode[];
}

const nodeTypes = (node: PlanNode): string[] => [node["Node Type"], ...(node.Plans ?? []).flatMap(nodeTypes)];

describeEachDatabase("claims", (database) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ database });
  });
  afterAll(() => app.close());

  // A claim that sorted every due row cost 20 ms per batch at 4,500 queued calls on PGlite, and
  // grew with the backlog; walking the (status, runAt, id) index stops when the batch is full.
  it("the delivery claim walks the queue index in order instead of sorting the whole backlog", async () => {
    const shop = "claim-plan.myshopify.com";
    await app.db.sql.query(`INSERT INTO "Shop" (domain, "updatedAt", "serviceKeyEnc") VALUES ($1, now(), 'sealed')`, [shop]);
    // Two calls per object: only the first of each is claimable (head of line).
    await app.db.sql.exec(
      `INSERT INTO "OutboundCall" (shop, "objectKey", kind, call)
         SELECT '${shop}', 'customer:' || (g / 2), 'customer', '{}'::jsonb FROM generate_series(0, 5999) g ORDER BY g`,
    );
    await app.db.sql.exec(`ANALYZE "OutboundCall", "Shop"`);

    const { sql } = app.db;
    const query = sql.query;
    let plan: PlanNode | undefined;
    sql.query = async <T,>(text: string, params?: unknown[]) => {
      if (!plan && text.includes(`UPDATE "OutboundCall" SET status = 'running'`)) {
        const [row] = await query<{ "QUERY PLAN": [{ Plan: PlanNode }] | string }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
        const explained = row["QUERY PLAN"];
        plan = (typeof explained === "string" ? (JSON.parse(explained) as [{ Plan: PlanNode }]) : explained)[0].Plan;
        return [] as T[]; // claim nothing: only the plan is under test
      }
      return query<T>(text, params);
    };
    try {
      expect(await deliverCalls("claim-plan-test", { ...PIPELINE_POLICY })).toBe(0);
    } finally {
      sql.query = query;
    }
    const due = plan?.Plans?.find((p) => p["Subplan Name"] === "CTE due");
    expect(due).toBeDefined();
    expect(nodeTypes(due!)).not.toContain("Sort");
    expect(nodeTypes(due!)).toContain("Index Scan");
  });
});
