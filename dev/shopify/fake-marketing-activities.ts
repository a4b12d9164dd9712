/**
 * The fake Admin's external marketing activities: Mutation.marketingActivityUpsertExternal and
 * marketingActivityDeleteExternal as Shopify's kept schema has them (shopify-schema/: the input
 * MarketingActivityUpsertExternalInput with remoteId, title, remoteUrl, status, tactic and
 * marketingChannelType required; answers carry MarketingActivityUserError with a code).
 *
 * Shopify's rules modelled (the schema's descriptions, read 2026-11-28): the `write_marketing_events`
 * scope is required (ACCESS_DENIED otherwise); a non-hierarchical activity needs UTM parameters or
 * a URL parameter value (NON_HIERARCHIAL_REQUIRES_UTM_URL_PARAMETER); UTM parameters cannot change
 * (IMMUTABLE_UTM_PARAMETERS) nor be shared by two activities (MARKETING_ACTIVITY_WITH_UTM_CAMPAIGN_ALREADY_EXISTS);
 * on upsert, absent or null optional fields are removed from an existing activity; `start` defaults
 * to now on creation, and `end` too when the status is INACTIVE or DELETED_EXTERNALLY; a delete
 * needs an id or a remote id (INVALID_DELETE_ACTIVITY_EXTERNAL_ARGUMENTS). Deleting an unknown
 * activity is answered MARKETING_ACTIVITY_DOES_NOT_EXIST (Shopify's exact answer there is not documented).
 */
export interface FakeMarketingActivity {
  id: string;
  remoteId: string;
  title: string;
  remoteUrl: string;
  status: string;
  tactic: string;
  marketingChannelType: string;
  utm: { campaign: string; source: string; medium: string } | null;
  urlParameterValue: string | null;
  scheduledStart: string | null;
  start: string | null;
  end: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What the resolvers need of a fake Admin (declared here: fake-admin.ts installs them, so importing it would be a cycle). */
interface Host {
  onGraphql(match: string, resolver: (query: string, variables: Record<string, unknown>, shop: string) => unknown): void;
  shops: Map<string, { scopes: string }>;
}

interface State {
  byShop: Map<string, FakeMarketingActivity[]>;
  /** Tests: Shopify failing (an INTERNAL_SERVER_ERROR answer) while set. */
  down: boolean;
  /** A whole answer instead of data (fake-admin's GraphqlReply). */
  reply: (body: Record<string, unknown>) => unknown;
}

const installed = new WeakMap<Host, State>();

/** A shop's external marketing activities (empty for a shop with none). */
export function marketingActivities(admin: Host, shop: string): FakeMarketingActivity[] {
  return installed.get(admin)?.byShop.get(shop) ?? [];
}

/** Tests: the marketing activity mutations fail as an outage of Shopify's does, or work again. */
export function failMarketingActivities(admin: Host, down: boolean): void {
  const state = installed.get(admin);
  if (state) state.down = down;
}

const SCOPE = "write_marketing_events";

function refused(shop: string, admin: Host, field: string, state: State): unknown {
  if (state.down) {
    return state.reply({ errors: [{ message: "Internal error. Looks like something went wrong on our end.", extensions: { code: "INTERNAL_SERVER_ERROR" } }] });
  }
  const scopes = admin.shops.get(shop)?.scopes.split(",") ?? [];
  if (scopes.includes(SCOPE)) return null;
  return state.reply({
    errors: [
      {
        message: `Access denied for ${field} field. Required access: \`${SCOPE}\` access scope.`,
        extensions: { code: "ACCESS_DENIED", documentation: "https://shopify.dev/api/usage/access-scopes", requiredAccess: `\`${SCOPE}\` access scope.` },
        path: [field],
      },
    ],
    data: { [field]: null },
  });
}

const isUrl = (v: unknown) => {
  try {
    return typeof v === "string" && /^https?:$/.test(new URL(v).protocol);
  } catch {
    return false;
  }
};

const sameUtm = (a: FakeMarketingActivity["utm"], b: FakeMarketingActivity["utm"]) => a?.campaign === b?.campaign && a?.source === b?.source && a?.medium === b?.medium;

export function installMarketingActivityResolvers(admin: Host, reply: State["reply"]): void {
  const state: State = { byShop: new Map(), down: false, reply };
  installed.set(admin, state);
  let next = 1;
  const of = (shop: string) => {
    if (!state.byShop.has(shop)) state.byShop.set(shop, []);
    return state.byShop.get(shop)!;
  };
  const error = (code: string, message: string, field: string[] | null = null) => ({ marketingActivity: null, userErrors: [{ code, message, field }] });
  const shape = (a: FakeMarketingActivity) => ({ ...a, isExternal: true, utmParameters: a.utm, marketingChannelType: a.marketingChannelType, tactic: a.tactic });

  admin.onGraphql("marketingActivityUpsertExternal(", (_q, _v, shop) => {
    const denied = refused(shop, admin, "marketingActivityUpsertExternal", state);
    if (denied) return denied;
    return {
      marketingActivityUpsertExternal: (args: { input: Record<string, unknown> }) => {
        const input = args.input as Omit<FakeMarketingActivity, "id" | "createdAt" | "updatedAt"> & { parentRemoteId?: string | null; hierarchyLevel?: string | null };
        const utm = input.utm ?? null;
        const urlParameterValue = input.urlParameterValue ?? null;
        if (!input.hierarchyLevel && !utm && !urlParameterValue) {
          return error("NON_HIERARCHIAL_REQUIRES_UTM_URL_PARAMETER", "Non-hierarchical marketing activities must have UTM parameters or a URL parameter value.", ["input"]);
        }
        if (!isUrl(input.remoteUrl)) return error("INVALID", "Remote url is invalid", ["input", "remoteUrl"]);
        const list = of(shop);
        const existing = list.find((a) => a.remoteId === input.remoteId);
        if (existing && !sameUtm(existing.utm, utm)) return error("IMMUTABLE_UTM_PARAMETERS", "The UTM parameters cannot be modified.", ["input", "utm"]);
        if (utm && list.some((a) => a !== existing && sameUtm(a.utm, utm))) {
          return error("MARKETING_ACTIVITY_WITH_UTM_CAMPAIGN_ALREADY_EXISTS", "A marketing activity with the same UTM campaign, medium, and source already exists.", ["input", "utm"]);
        }
        const now = new Date().toISOString();
        const ending = input.status === "INACTIVE" || input.status === "DELETED_EXTERNALLY";
        const fields = {
          remoteId: input.remoteId,
          title: input.title,
          remoteUrl: input.remoteUrl,
          status: input.status,
          tactic: input.tactic,
          marketingChannelType: input.marketingChannelType,
          utm,
          urlParameterValue,
          scheduledStart: input.scheduledStart ?? null,
          // Absent on an update: removed, as the mutation's description says.
          start: input.start ?? (existing ? null : now),
          end: input.end ?? (!existing && ending ? now : null),
        };
        if (existing) {
          Object.assign(existing, fields, { updatedAt: now });
          return { marketingActivity: shape(existing), userErrors: [] };
        }
        const created: FakeMarketingActivity = { id: `gid://shopify/MarketingActivity/${next++}`, ...fields, createdAt: now, updatedAt: now };
        list.push(created);
        return { marketingActivity: shape(created), userErrors: [] };
      },
    };
  });

  admin.onGraphql("marketingActivityDeleteExternal(", (_q, _v, shop) => {
    const denied = refused(shop, admin, "marketingActivityDeleteExternal", state);
    if (denied) return denied;
    return {
      marketingActivityDeleteExternal: (args: { marketingActivityId?: string | null; remoteId?: string | null }) => {
        if (!args.marketingActivityId && !args.remoteId) {
          return { deletedMarketingActivityId: null, userErrors: [{ code: "INVALID_DELETE_ACTIVITY_EXTERNAL_ARGUMENTS", message: "Either the marketing activity ID or remote ID must be provided for the activity to be deleted.", field: null }] };
        }
        const list = of(shop);
        const index = list.findIndex((a) => (args.marketingActivityId ? a.id === args.marketingActivityId : a.remoteId === args.remoteId));
        if (index < 0) return { deletedMarketingActivityId: null, userErrors: [{ code: "MARKETING_ACTIVITY_DOES_NOT_EXIST", message: "Marketing activity does not exist.", field: null }] };
        const [gone] = list.splice(index, 1);
        return { deletedMarketingActivityId: gone.id, userErrors: [] };
      },
    };
  });
}
