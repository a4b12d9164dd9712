import { describe, expect, it } from "vitest";
import { BACKGROUND_SOURCES, DELIVERY_SOURCES, LOOKUP_SOURCES, SILENT_SOURCES, sourceSql } from "~/sync/sources";

// Where a delivery came from decides how its calls go out (app/sync/sources.ts): a live webhook's
// events start automations and go first; the app's own imports are silent and wait behind it.

describe("delivery sources", () => {
  it("a live webhook goes first, starts automations, and may look up an object the app never saw", () => {
    expect(BACKGROUND_SOURCES.has("webhook")).toBe(false);
    expect(SILENT_SOURCES.has("webhook")).toBe(false);
    expect(LOOKUP_SOURCES.has("webhook")).toBe(true);
  });

  it("history imports (backfill, reconcile, segment import) wait behind live calls, silently", () => {
    expect([...BACKGROUND_SOURCES].sort()).toEqual(["backfill", "reconcile", "segment-import"]);
    expect([...SILENT_SOURCES].sort()).toEqual(["backfill", "lookup", "reconcile", "segment-import"]);
  });

  it("only a live webhook and an imported segment member look up what the app never saw", () => {
    expect([...LOOKUP_SOURCES].sort()).toEqual(["segment-import", "webhook"]);
  });

  it("an object fetched for a live webhook follows it at once, silently", () => {
    expect(DELIVERY_SOURCES.lookup).toEqual({ background: false, silent: true, lookup: false });
    expect(BACKGROUND_SOURCES.has("lookup")).toBe(false);
  });

  it("a source is named in SQL as a quoted literal", () => {
    expect(sourceSql("backfill")).toBe("'backfill'");
    expect(sourceSql("segment-import")).toBe("'segment-import'");
  });
});
