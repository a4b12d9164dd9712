import { describe, expect, it } from "vitest";
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
