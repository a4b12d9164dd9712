/**
 * Where tagging a picked segment's current members stands, in the merchant's words (Settings →
 * Customer segments). Pure: the page and the tests use it.
 */
import type { MirroredSegmentRow } from "./segments.server";

const count = (n: number) => n.toLocaleString("en-US");
const members = (n: number) => `${count(n)} ${n === 1 ? "member" : "members"}`;
/** "are not subscribed" → "is not subscribed" for one member. */
const verb = (n: number, reason: string) => (n === 1 ? reason.replace(/^are /, "is ").replace(/^have /, "has ").replace(/^were /, "was ") : reason);

/** Tagged counts what the service confirmed; members not tagged are counted with the reason. */
export function importProgress(p: MirroredSegmentRow): string {
  const o = p.outcome;
  const total = p.importTotal ?? p.importDone;
  const notTagged = [
    ...o.skipped.map((s) => `${members(s.count)} ${verb(s.count, s.reason)}: not tagged`),
    ...(o.failed ? [`${members(o.failed)} could not be tagged (the service did not take the change; see Problems)`] : []),
  ];
  const rest = notTagged.length ? `. ${notTagged.join("; ")}` : "";
  if (p.importStatus === "failed") return `Tagging current members stopped: ${count(o.tagged)} of ${count(total)} tagged${rest}`;
  if (p.importTotal == null) return "Tagging current members: reading them from Shopify";
  const reading = p.importStatus !== "done";
  if (reading || o.waiting > 0) {
    return `Tagging current members: ${count(o.tagged)} of ${count(total)} tagged so far${o.waiting ? `, ${count(o.waiting)} on their way` : ""}${rest}`;
  }
  // Deliveries and their calls are kept 14 days: past that, what became of each member is not known.
  const unknown = p.importDone - o.counted;
  const gone = unknown > 0 ? `. What became of ${members(unknown)} is no longer kept (details are kept 14 days)` : "";
  if (o.tagged === total && total > 0) return `All ${count(total)} current members tagged`;
  return `${count(o.tagged)} of ${count(total)} current members tagged${rest}${gone}`;
}

