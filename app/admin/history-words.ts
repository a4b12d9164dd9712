/**
 * The history import's state in the merchant's words, one text for every page that shows it
 * (Sync health and Connection). The stored error stays for support, folded under "Details for support".
 */
import { BACKFILL_STATUS } from "../pipeline/status";
import type { HistoryView } from "./history.server";

const KIND_WORDS: Record<string, string> = { customers: "customers", products: "products", orders: "orders" };

/** Why an import stopped or is being retried (its stored lastError), and what to do. */
export function importProblemText(stored: string, kind: string | null): { why: string; fix: string } {
  const what = kind ? (KIND_WORDS[kind] ?? kind) : "store history";
  if (/ended (FAILED|CANCELED|EXPIRED)/.test(stored)) {
    return { why: `Shopify could not finish preparing the export of your ${what}.`, fix: "Start the import again later; nothing already imported is lost." };
  }
  // NoOfflineSession (app/shopify/admin-api.server.ts): no token the app may still use or refresh.
  if (/must open the app again|not installed there/.test(stored)) {
    return { why: `The app's access to your store had ended, so it could not read your ${what}.`, fix: "Opening the app from your Shopify admin renews its access: start the import again from here." };
  }
  if (/access|scope|permission|denied|unauthori[sz]ed|forbidden|\b40[13]\b/i.test(stored)) {
    return { why: `Shopify did not let the app read your ${what}.`, fix: "Open the app from your Shopify admin to approve its permissions, then start the import again." };
  }
  if (/answered with errors|refused the export/i.test(stored)) {
    return { why: `Shopify did not accept the app's request to export your ${what}.`, fix: "Start the import again; if it stops again, contact support with the details below." };
  }
  if (/download|timeout|timed out|network|ECONN|socket|fetch failed/i.test(stored)) {
    return { why: `The export of your ${what} could not be downloaded from Shopify.`, fix: "Start the import again; it picks up where Shopify's export is." };
  }
  return { why: `Something went wrong while importing your ${what}.`, fix: "Start the import again; if it stops again, contact support with the details below." };
}

export interface HistoryState {
  label: string;
  tone: "info" | "success" | "critical" | "attention";
  /** one sentence: what is happening */
  line: string;
  /** a failure or a retried step, in words, with the stored text for support */
  problem: { why: string; fix: string; details: string } | null;
}

const isActive = (h: HistoryView) => h.status === BACKFILL_STATUS.queued || h.status === BACKFILL_STATUS.running;

/** Running, waiting for Shopify, retrying after a failed step, sending, imported or failed. */
export function historyState(h: HistoryView, formatDone: (iso: string | null) => string): HistoryState {
  const what = h.kind ? (KIND_WORDS[h.kind] ?? h.kind) : null;
  if (h.status === BACKFILL_STATUS.failed) {
    const p = importProblemText(h.lastError ?? "", h.kind);
    return { label: "Failed", tone: "critical", line: "The history import stopped.", problem: { ...p, details: h.lastError ?? "no reason recorded" } };
  }
  if (isActive(h)) {
    // A step that failed is retried automatically (a few times): said, with its reason.
    const problem = h.lastError && !/started again$/.test(h.lastError) ? { ...importProblemText(h.lastError, h.kind), fix: "The app tries again automatically; nothing to do yet.", details: h.lastError } : null;
    if (problem) return { label: "Retrying", tone: "attention", line: "The history import hit a problem and is trying again.", problem };
    if (h.exporting) return { label: "Waiting for Shopify", tone: "info", line: `Waiting for Shopify to prepare the export of your ${what ?? "store history"} (${h.kindNumber} of ${h.kinds}).`, problem: null };
    return { label: "Importing", tone: "info", line: `Importing your ${what ?? "store history"} (${h.kindNumber} of ${h.kinds}).`, problem: null };
  }
  if (h.sending > 0) return { label: "Sending", tone: "info", line: `${h.objects.toLocaleString("en-US")} customers, products and orders read from Shopify, ${h.sending.toLocaleString("en-US")} still being sent.`, problem: null };
  return { label: "Imported", tone: "success", line: `${h.objects.toLocaleString("en-US")} customers, products and orders imported ${formatDone(h.finishedAt)}.`, problem: null };
}
