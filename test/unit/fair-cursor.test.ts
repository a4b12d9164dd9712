import { describe, expect, it } from "vitest";
import { nextCursor } from "~/pipeline/fair-cursor";

/** The shops a fair claim walks (fairShareCandidates): in name order after `cursor`, wrapping around, at most `max`. */
function walk(shops: string[], cursor: string, max: number): string[] {
  const sorted = [...shops].sort();
  return [...sorted.filter((s) => s > cursor), ...sorted.filter((s) => s <= cursor)].slice(0, max);
}
const shopNames = (n: number) => Array.from({ length: n }, (_, i) => `shop-${String(i).padStart(3, "0")}.myshopify.com`);

describe("where the next fair claim starts", () => {
  it("serves every shop within two claims when more shops wait than one claim walks (70 shops, 64 a claim)", () => {
    const shops = shopNames(70);
    const served = new Set<string>();
    let cursor = "";
    for (let claim = 0; claim < 2; claim++) {
      const walked = walk(shops, cursor, 64);
      walked.forEach((s) => served.add(s));
      cursor = nextCursor(cursor, walked);
    }
    expect(shops.filter((s) => !served.has(s))).toEqual([]);
  });

  it("goes round every shop equally over many claims", () => {
    const shops = shopNames(10);
    const turns = new Map<string, number>();
    let cursor = "";
    for (let claim = 0; claim < 30; claim++) {
      const walked = walk(shops, cursor, 3);
      for (const s of walked) turns.set(s, (turns.get(s) ?? 0) + 1);
      cursor = nextCursor(cursor, walked);
    }
    expect(new Set(turns.values())).toEqual(new Set([9]));
  });

  it("is the last shop served after the cursor when the walk did not wrap", () => {
    expect(nextCursor("b", ["d", "c", "e"])).toBe("e");
    expect(nextCursor("", ["a", "b"])).toBe("b");
  });

  it("is the last shop served from the start when the walk wrapped around", () => {
    expect(nextCursor("m", ["x", "z", "a", "c"])).toBe("c");
    // The cursor's own shop is walked last (from the start, up to and including it).
    expect(nextCursor("m", ["z", "m", "a"])).toBe("m");
  });

  it("stays where it was when no shop was served", () => {
    expect(nextCursor("m", [])).toBe("m");
  });

  it("counts a shop served many times once", () => {
    expect(nextCursor("", ["b", "a", "b", "b"])).toBe("b");
  });
});
