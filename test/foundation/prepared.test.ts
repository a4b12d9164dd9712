import { describe, expect, it } from "vitest";
import { openDatabase } from "~/db.server";
import { executeStatement, prepareStatement, sqlLiteral } from "~/db/prepared";

describe("prepared statements on PGlite (values written as literals)", () => {
  it("quotes text the SQL-standard way and refuses what it cannot write faithfully", () => {
    expect(sqlLiteral("it's \\ $1")).toBe("'it''s \\ $1'");
    expect(sqlLiteral(null)).toBe("NULL");
    expect(sqlLiteral(false)).toBe("false");
    expect(sqlLiteral(42)).toBe("42");
    expect(() => sqlLiteral("a\u0000b")).toThrow(/U\+0000/);
    expect(() => sqlLiteral(Number.NaN)).toThrow(/finite/);
    expect(() => sqlLiteral({} as unknown as string)).toThrow(/not an SQL scalar/);
  });

  it("checks the statement's name and its number of parameters", () => {
    const statement = { name: "ms_x", text: "SELECT $1::text", types: ["text"] };
    expect(prepareStatement(statement)).toBe("PREPARE ms_x(text) AS SELECT $1::text");
    expect(executeStatement(statement, ["a"])).toBe("EXECUTE ms_x('a')");
    expect(() => executeStatement(statement, [])).toThrow(/takes 1 parameters/);
    expect(() => prepareStatement({ ...statement, name: "x; DROP TABLE y" })).toThrow(/not a statement name/);
  });
});

describe("prepared statements on one PGlite connection", () => {
  const statement = { name: "ms_test_add_one", types: ["int"], text: "SELECT $1::int + 1 AS n" };
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  it("passes arrays of texts and numbers whole, whatever characters the texts hold", async () => {
    const db = openDatabase({ kind: "pglite", dataDir: "memory://" });
    try {
      const arrays = { name: "ms_test_arrays", types: ["text[]", "bigint[]", "int[]"], text: "SELECT $1 AS texts, $2::text[] AS ids, $3 AS ints" };
      const texts = [`a"b`, "c\\d", "it's", "x,y", "{z}", "", "NULL", " sp "];
      const ids = ["9007199254740993", "1"];
      expect(await db.sql.prepared(arrays, [texts, ids, [3, -4]])).toEqual([{ texts, ids, ints: [3, -4] }]);
      expect(await db.sql.prepared(arrays, [[], [], []])).toEqual([{ texts: [], ids: [], ints: [] }]);
    } finally {
      await db.close();
    }
  });

  it("first used inside a transaction while a query outside waits to prepare it: both answer, no deadlock", async () => {
    const db = openDatabase({ kind: "pglite", dataDir: "memory://" });
    try {
      await db.sql.query(`SELECT 1`); // started: its initdb is not what is timed below
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const inside = db.sql.transaction(async (tx) => {
        await gate;
        return tx.prepared<{ n: number }>(statement, [1]);
      });
      await sleep(10); // the transaction holds the connection
      const outside = db.sql.prepared<{ n: number }>(statement, [2]); // its preparation queues behind it
      await sleep(10);
      release();
      const answers = await Promise.race([Promise.all([inside, outside]), sleep(5_000).then(() => "deadlocked")]);
      expect(answers).toEqual([[{ n: 2 }], [{ n: 3 }]]);
      expect(await db.sql.prepared(statement, [41])).toEqual([{ n: 42 }]);
    } finally {
      await db.close();
    }
  });
});
