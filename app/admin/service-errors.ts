/**
 * The merchant's words for every §7 refusal the campaign, template and people pages can meet:
 * one place, keyed by the client's error kinds (and the field of a validation refusal).
 */
import { isMarketingServiceError, type MarketingServiceError } from "../services/marketing/marketing-error";

export interface ProblemLink {
  label: string;
  url: string;
  /** opens outside the admin (the service's dashboard or editor) */
  external: boolean;
}

/** What the page shows about a refused action. Plain data: it travels to the browser. */
export interface ServiceProblem {
  kind: string;
  title: string;
  message: string;
  /** form field → message, shown inline */
  fields?: Record<string, string>;
  links?: ProblemLink[];
  /** review required: the page offers "Send anyway" (force) */
  canForce?: boolean;
  upgrade?: { levelName: string; monthlyAmount: number; proratedAmount: number };
}

const CONNECTION_LINK: ProblemLink = { label: "Open the Connection page", url: "/app/connection", external: false };

/** Absolute hand-off link: the spec allows relative dashboard paths; they live beside the API. */
export function handOffUrl(url: string | undefined, serviceBaseUrl: string): string | undefined {
  if (!url) return undefined;
  try {
    const resolved = new URL(url, serviceBaseUrl.replace(/\/+$/, "") + "/");
    // The service's links open in the merchant's admin: javascript:, data: and the like never do.
    return resolved.protocol === "https:" || resolved.protocol === "http:" ? resolved.href : undefined;
  } catch {
    return undefined;
  }
}

function serviceLinks(e: MarketingServiceError, serviceBaseUrl: string): ProblemLink[] {
  const out: ProblemLink[] = [];
  const editor = handOffUrl(e.links?.editorUrl, serviceBaseUrl);
  const dashboard = handOffUrl(e.links?.campaignUrl, serviceBaseUrl);
  if (editor) out.push({ label: "Open in the email editor", url: editor, external: true });
  if (dashboard) out.push({ label: "Open in your marketing dashboard", url: dashboard, external: true });
  return out;
}

const first = (e: MarketingServiceError, key: string): string | undefined => e.errors?.[key]?.[0];

const money = (n: number) => new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(n);

/** Field refusals (§7 422s and local validation) in the merchant's words. */
function fieldMessages(e: MarketingServiceError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, messages] of Object.entries(e.errors ?? {})) {
    const field = key.replace(/\.\d+$/, "");
    const said = messages[0] ?? "";
    switch (field) {
      case "name":
        out.name = "Give the campaign a name.";
        break;
      case "templateId":
        out.templateId = "That template is no longer available in your marketing account; pick another.";
        break;
      case "_body":
        out._form = "Change at least one field before saving.";
        break;
      case "recipients":
        out.recipients ??= e.local ? "Enter 1 to 10 different email addresses." : said || "Check the recipients.";
        break;
      case "filter.date_from":
      case "dateFrom":
        out.dateFrom = "Use a date like 2026-05-01.";
        break;
      case "filter.date_to":
      case "dateTo":
        out.dateTo = "Use a date like 2026-05-31.";
        break;
      default:
        out[field] ??= said;
    }
  }
  return out;
}

/**
 * Turns whatever a service call threw into what the merchant reads. Anything that is not a
 * service error is rethrown: the page's error boundary shows it without details.
 */
export function describeServiceError(error: unknown, serviceBaseUrl: string): ServiceProblem {
  if (!isMarketingServiceError(error)) throw error;
  const e = error;
  const kind = e.kind;
  switch (kind) {
    case "unauthenticated":
      return {
        kind,
        title: "The marketing service no longer accepts this store's API key",
        message: "Paste a new API key on the Connection page; nothing was changed.",
        links: [CONNECTION_LINK],
      };
    case "account_inactive":
      return {
        kind,
        title: "Your marketing account is not active",
        message:
          "Campaigns cannot be created, changed, tested or sent until the account is active again. Resolve its billing status in your marketing service's dashboard (Billing), then try again.",
        links: serviceLinks(e, serviceBaseUrl),
      };
    case "plugin_key_not_allowed":
      return {
        kind,
        title: "The connected API key cannot send campaigns",
        message:
          "It is a content-site plugin key, which the service does not allow to send, schedule or test-send. Create a dashboard or CLI API key in your marketing account and connect it on the Connection page.",
        links: [CONNECTION_LINK],
      };
    case "campaign_not_found":
      return { kind, title: "Campaign not found", message: "This campaign no longer exists in your marketing account. It may have been deleted." };
    case "person_not_found":
      return { kind, title: "Person not found", message: "Nobody with this email address or id is in your marketing account." };
    case "review_required":
      return {
        kind,
        title: "This campaign has not been reviewed in the email editor",
        message: "The service asks that a campaign is reviewed in its email editor before it goes out. Review it there, or send it anyway.",
        links: serviceLinks(e, serviceBaseUrl),
        canForce: true,
      };
    case "sending_limit":
      return {
        kind,
        title: "Sending limit reached",
        // §7: the service's message states the remaining sends and the reset date.
        message: `${first(e, "send") ?? e.message} Nothing was sent.`,
        links: serviceLinks(e, serviceBaseUrl),
      };
    case "upgrade_required": {
      const u = e.upgrade;
      return {
        kind,
        title: u?.levelName ? `Upgrade to ${u.levelName} to send this campaign` : "A plan upgrade is needed to send this campaign",
        message: u
          ? `${u.levelName ?? "The next plan"} costs ${money(u.monthlyAmount ?? 0)} a month; ${money(u.proratedAmount ?? 0)} would be charged now for the rest of this period. Nothing was sent.`
          : `${first(e, "send") ?? e.message} Nothing was sent.`,
        links: serviceLinks(e, serviceBaseUrl),
        upgrade: u ? { levelName: u.levelName ?? u.level ?? "", monthlyAmount: u.monthlyAmount ?? 0, proratedAmount: u.proratedAmount ?? 0 } : undefined,
      };
    }
    case "scheduled_at_invalid":
      return {
        kind,
        title: "That time cannot be used",
        message: "Pick a date and time in the future.",
        fields: { scheduledAt: "Pick a date and time in the future." },
      };
    case "test_send_recipient_rejected": {
      const who = (e.rejectedRecipients ?? []).join(", ");
      const message = `The service only sends tests to addresses on your verified sending domains or to your account's address. Not allowed: ${who}.`;
      return { kind, title: "Some test recipients are not allowed", message, fields: { recipients: message } };
    }
    case "rate_limited": {
      const seconds = e.retryAfterMs === undefined ? undefined : Math.max(1, Math.ceil(e.retryAfterMs / 1000));
      return {
        kind,
        title: "Too many test sends",
        message: `The service allows only a few test sends a minute. Try again ${seconds ? `in ${seconds} seconds` : "shortly"}.`,
      };
    }
    case "retry_later":
      return { kind, title: "The service could not do this right now", message: "Nothing was sent. Please try again in a few minutes." };
    case "not_accepted":
      return { kind, title: "The marketing service did not take this", message: `${e.message}. Please try again in a few minutes.` };
    case "timeout":
    case "network":
      return { kind, title: "The marketing service could not be reached", message: "Nothing was changed. Please try again in a few minutes." };
    case "server_error":
      return { kind, title: "The marketing service answered with an error", message: "Nothing was changed as far as we know. Please try again in a few minutes." };
    case "validation": {
      const fields = fieldMessages(e);
      if (fields.campaign || e.errors?.campaign) {
        return {
          kind,
          title: "This campaign has no email content yet",
          message: "Design the email in the service's editor (or create the campaign from a template) before testing or sending it.",
          links: serviceLinks(e, serviceBaseUrl),
        };
      }
      if (fields.status) return { kind, title: "Not possible in this campaign's state", message: fields.status };
      if (e.errors?.testSend) {
        return { kind, title: "The test email could not be delivered", message: "Check the addresses and try again; nothing else changed." };
      }
      const message = Object.values(fields).join(" ") || e.message;
      return { kind, title: "Please check the highlighted fields", message, fields };
    }
    case "client_error":
      return { kind, title: "The marketing service refused this", message: e.message };
  }
}

/** Kinds that mean the service did not answer properly, not that it refused. */
const NOT_ANSWERING = new Set(["timeout", "network", "server_error", "retry_later", "rate_limited"]);

/**
 * A page's list or record that could not be read (`what`: "Your campaigns", "This person"): said
 * as a failed load, never in an action's words ("nothing was changed"). Field refusals (a bad
 * filter) keep their fields.
 */
export function describeLoadError(error: unknown, serviceBaseUrl: string, what: string): ServiceProblem {
  const problem = describeServiceError(error, serviceBaseUrl);
  if (!NOT_ANSWERING.has(problem.kind)) return problem;
  return { kind: problem.kind, title: `${what} could not be loaded: the marketing service is not answering right now.`, message: "Nothing is lost. Try again in a minute." };
}
