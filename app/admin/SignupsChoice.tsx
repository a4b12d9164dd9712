import { Checkbox } from "@shopify/polaris";
import { formatNumber } from "./ui";

/** What the signup sweep last found (app/signups signupStatus, dates as the loader sends them). */
export interface SignupCounts {
  waiting: number | null;
  lastSweepAt: string | Date | null;
  lastError: string | null;
  created: number;
}

const people = (n: number) => `${formatNumber(n)} ${n === 1 ? "person" : "people"}`;

/**
 * The number beside the choice, as read from the marketing account by the last sweep; when it
 * could not be read, it says so. `counts` null: not connected yet, nothing can be read.
 */
export function signupCountText(counts: SignupCounts | null, on: boolean): string {
  if (!counts) return "The number is shown in Settings once your marketing account is connected: the app counts them there.";
  const added = counts.created ? ` ${people(counts.created)} added so far.` : "";
  if (counts.waiting === null) {
    return counts.lastError
      ? `The number could not be read from your marketing account: ${counts.lastError}.${added}`
      : `Not counted yet: the app reads your marketing account shortly after connecting.${added}`;
  }
  const failed = counts.lastError ? ` The last count could not finish: ${counts.lastError}.` : "";
  if (on) {
    return counts.waiting
      ? `${people(counts.waiting)} could not be added yet; the app tries again.${added}${failed}`
      : `Everyone who signed up and confirmed is a Shopify customer.${added}${failed}`;
  }
  return `Up to ${people(counts.waiting)} would be added (people whose address is already a customer are left as they are).${added}${failed}`;
}

/**
 * The choice at connection and in Settings: people who signed up through the marketing account's
 * own forms become Shopify customers. Posts `signupsToShopify` ("true" when ticked).
 */
export function SignupsChoice({ checked, onChange, counts, error }: { checked: boolean; onChange: (v: boolean) => void; counts: SignupCounts | null; error?: string }) {
  return (
    <Checkbox
      value="true"
      label="Add people who sign up through your marketing account's forms to Shopify as customers (recommended)"
      name="signupsToShopify"
      checked={checked}
      onChange={onChange}
      error={error}
      helpText={
        <span data-signup-count>
          Once they confirm, they become Shopify customers subscribed to email marketing, tagged “Marketing Sync signup”. {signupCountText(counts, checked)}
        </span>
      }
    />
  );
}
