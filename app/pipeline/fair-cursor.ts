/**
 * Where a worker's next fair-share claim starts (fairShareCandidates walks the shops with queued
 * rows in name order, after the cursor, wrapping around): of the shops the last claim served, the
 * last in walk order (names after the cursor first, then from the start). The cursor stays put when
 * none was served. A cursor that did not move would serve the first `maxShops` shops again and
 * again, and starve every shop after them.
 */
export function nextCursor(cursor: string, served: Iterable<string>): string {
  const shops = [...new Set(served)].sort();
  if (!shops.length) return cursor;
  const before = shops.filter((s) => s <= cursor);
  return before.length ? before[before.length - 1]! : shops[shops.length - 1]!;
}
