import { describe, expect, it } from "vitest";
import { detailChanges, sameDetail, type DetailValues } from "~/campaigns/edit-conflict";

const loaded: DetailValues = {
  name: "Spring",
  subject: "Old subject",
  previewText: "Old preview",
  senderName: "Shop",
  senderEmail: "shop@example.com",
  replyToName: "",
  replyToEmail: "",
};

describe("what a save from the campaign page changes, against what changed elsewhere meanwhile", () => {
  it("saves only the fields the merchant changed, never the page's old value over a change made elsewhere", () => {
    const now = { ...loaded, subject: "Subject from the editor" };
    expect(detailChanges({ ...loaded, senderName: "Shop team" }, loaded, now)).toEqual({ changed: ["senderName"], clash: [] });
  });

  it("refuses a field changed both on the page and elsewhere, to different values", () => {
    const now = { ...loaded, subject: "Subject from the editor" };
    expect(detailChanges({ ...loaded, subject: "Subject from the app", senderName: "Shop team" }, loaded, now)).toEqual({
      changed: ["subject", "senderName"],
      clash: ["subject"],
    });
  });

  it("a field changed both ways to the same value is no clash, and nothing to save", () => {
    const now = { ...loaded, subject: "Same new subject" };
    expect(detailChanges({ ...loaded, subject: "Same new subject" }, loaded, now)).toEqual({ changed: [], clash: [] });
  });

  it("a change the merchant made and then undid is no change, even if the field changed elsewhere", () => {
    const now = { ...loaded, previewText: "Preview from the editor" };
    expect(detailChanges({ ...loaded }, loaded, now)).toEqual({ changed: [], clash: [] });
  });

  it("every Details field is compared", () => {
    const form = { name: "n", subject: "s", previewText: "p", senderName: "sn", senderEmail: "a@example.com", replyToName: "rn", replyToEmail: "r@example.com" };
    expect(detailChanges(form, loaded, loaded).changed).toEqual(["name", "subject", "previewText", "senderName", "senderEmail", "replyToName", "replyToEmail"]);
    expect(detailChanges(form, loaded, { ...form, name: "x" }).clash).toEqual(["name"]);
  });

  it("surrounding spaces and a missing optional field are no change", () => {
    expect(detailChanges({ ...loaded, subject: "  Old subject ", replyToEmail: undefined }, loaded, loaded)).toEqual({ changed: [], clash: [] });
    expect(sameDetail(undefined, "  ")).toBe(true);
    expect(sameDetail("  ", undefined)).toBe(true);
    expect(sameDetail("a", undefined)).toBe(false);
    expect(sameDetail("a", "b")).toBe(false);
    expect(sameDetail(" a", "a ")).toBe(true);
  });
});
