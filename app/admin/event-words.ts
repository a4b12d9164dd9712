/**
 * The service's raw names and event data in the merchant's words: event names ("order_completed"
 * → "Order completed"), field names ("firstName" → "First name"), and a one-line summary of an
 * event's data ("Order #1001 · €42.50") instead of its JSON.
 */

const FIELD_LABELS: Record<string, string> = {
  firstName: "First name",
  lastName: "Last name",
  phoneNumber: "Phone number",
  referenceId: "Customer number in your store",
  source: "Source",
};

/** "order_completed", "pageView", "cart-abandoned" → "Order completed", "Page view", "Cart abandoned". */
export function inWords(name: string): string {
  const words = name
    .replace(/([a-z\d])([A-Z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .trim()
    .toLowerCase();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : name;
}

/** An event's one name on every page: the service's name in words ("order_refunded" → "Order refunded"). */
export const eventLabel = (serviceName: string): string => inWords(serviceName);

// Event names the service stores in camelCase (the tracker's); every other name is snake_case.
const CAMEL_EVENTS = ["pageView"];

/**
 * What the merchant typed in the event filter, as the service's event name: the words the pages
 * show ("Order completed", "page view") or the name itself ("order_completed").
 */
export function eventFilterName(typed: string): string {
  const t = typed.trim();
  if (!/\s/.test(t) && !/^[A-Z]/.test(t)) return t;
  const camel = CAMEL_EVENTS.find((n) => inWords(n).toLowerCase() === inWords(t).toLowerCase());
  if (camel) return camel;
  return t.toLowerCase().split(/\s+/).join("_");
}

export const fieldLabel = (name: string): string => FIELD_LABELS[name] ?? inWords(name);

/** An amount in the event's currency when it names a valid one ("€42.50"), else a plain number. */
export function money(amount: number, currency: unknown): string {
  if (typeof currency === "string" && /^[A-Za-z]{3}$/.test(currency)) {
    try {
      return new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(amount);
    } catch {
      // not a currency Intl knows: fall through
    }
  }
  return new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(amount);
}

type Props = Record<string, unknown>;
const isRecord = (v: unknown): v is Props => typeof v === "object" && v !== null && !Array.isArray(v);
const amount = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : null);
const items = (v: unknown): string | null => (Array.isArray(v) && v.length ? `${v.length} ${v.length === 1 ? "item" : "items"}` : null);

function shortValue(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  if (Array.isArray(v)) return items(v) ?? "none";
  if (isRecord(v)) return "…";
  const s = String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

const MAX_PAIRS = 6;

/** Any other shape: "Key: value" pairs, a few of them, nested data reduced to a count. */
function pairs(props: Props): string {
  const entries = Object.entries(props);
  const shown = entries.slice(0, MAX_PAIRS).map(([k, v]) => `${fieldLabel(k)}: ${shortValue(v)}`);
  if (entries.length > MAX_PAIRS) shown.push(`${entries.length - MAX_PAIRS} more`);
  return shown.join(" · ") || "No details";
}

/** Orders and carts (§4.5 lifecycle events) read as a sentence; anything else as key: value pairs. */
export function eventSummary(event: string, properties: unknown): string {
  if (!isRecord(properties)) return properties === null || properties === undefined ? "No details" : shortValue(properties);
  const kind = event.toLowerCase().split(/[_.\-\s]/)[0];
  if (kind === "order" || kind === "cart") {
    const ref = properties.publicId ?? properties.id;
    // A refund's data holds what was paid back (amount), not an order total.
    const total = amount(properties.total) ?? amount(properties.amount);
    const parts = [
      kind === "order" ? (ref !== undefined && ref !== null && ref !== "" ? `Order ${String(ref)}` : "Order") : "Cart",
      total === null ? null : money(total, properties.currency),
      items(properties.products),
    ].filter((p): p is string => Boolean(p));
    return parts.join(" · ");
  }
  return pairs(properties);
}
