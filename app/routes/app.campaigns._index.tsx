import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigate, useNavigation, useSearchParams } from "@remix-run/react";
import {
  Box,
  Button,
  FormLayout,
  IndexTable,
  InlineStack,
  Layout,
  Link,
  Page,
  Select,
  Tabs,
  Text,
  TextField,
} from "@shopify/polaris";
import { useEffect, useState } from "react";
import { LoadFailed, PageNav, ProblemBanner, ServiceUnavailable } from "~/admin/ServiceUi";
import { CAMPAIGN_TABS, StatusBadge } from "~/campaigns/ui";
import { EmptyState, PageError, SectionCard, useToast } from "~/admin/ui";
import { campaignsPage, createCampaign } from "~/campaigns/campaigns.server";
import { serviceAccess } from "~/admin/service-access.server";
import { storeTimeZone } from "~/admin/store-zone.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Campaigns · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const access = await serviceAccess(session.shop);
  // Schedules are picked and shown in the store's zone, as dates on every other admin page (the
  // marketing account's zone only when Shopify cannot say); the form carries the zone it showed.
  const zone = await storeTimeZone(session.shop, access.state === "connected" ? access.accountTimezone : null);
  return campaignsPage(session.shop, new URL(request.url).searchParams, zone);
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return createCampaign(session.shop, await request.formData());
};

/** A tab's empty state in a sentence: "No draft campaigns". */
const EMPTY_TITLE: Record<(typeof CAMPAIGN_TABS)[number], string> = {
  draft: "No draft campaigns",
  scheduled: "No scheduled campaigns",
  sending: "No campaigns are sending",
  sent: "No sent campaigns",
  paused: "No paused campaigns",
  failed: "No failed campaigns",
  all: "No campaigns yet",
};

const TAB_LABEL: Record<(typeof CAMPAIGN_TABS)[number], string> = {
  draft: "Drafts",
  scheduled: "Scheduled",
  sending: "Sending",
  sent: "Sent",
  paused: "Paused",
  failed: "Failed",
  all: "All",
};

const SORTS = [
  { label: "Name A–Z", value: "name:asc" },
  { label: "Name Z–A", value: "name:desc" },
  { label: "Status", value: "status:asc" },
  { label: "Newest first", value: "createdAt:desc" },
  { label: "Oldest first", value: "createdAt:asc" },
];

export default function Campaigns() {
  const data = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  useToast(result);
  useEffect(() => {
    if (result?.ok && result.goTo) navigate(result.goTo);
  }, [result, navigate]);

  const tab = CAMPAIGN_TABS.indexOf(data.query.status);
  const setParam = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    next.delete("page");
    setParams(next);
  };
  const sortValue = `${data.query.sort}:${data.query.order ?? (data.query.sort === "name" ? "asc" : "desc")}`;
  const problem = result && !result.ok ? result.problem : null;

  return (
    <Page
      title="Campaigns"
      subtitle="Email campaigns in your marketing account"
      primaryAction={data.service ? undefined : { content: "Create campaign", onAction: () => setCreating(true) }}
      secondaryActions={data.service ? undefined : [{ content: "Start from a template", url: "/app/templates" }]}
    >
      <Layout>
        {data.service ? (
          <ServiceUnavailable service={data.service} what="Campaigns" />
        ) : (
          <>
            {problem && (
              <Layout.Section>
                <ProblemBanner problem={problem} />
              </Layout.Section>
            )}
            {creating && (
              <SectionCard>
                <Form method="post">
                  <input type="hidden" name="intent" value="create" />
                  <FormLayout>
                    <TextField
                      label="Campaign name"
                      name="name"
                      value={name}
                      onChange={setName}
                      autoComplete="off"
                      error={result && !result.ok ? result.problem.fields?.name : undefined}
                      helpText="A blank draft. To start from a design, pick a template instead."
                    />
                    <InlineStack gap="200" align="end">
                      <Button onClick={() => setCreating(false)}>Cancel</Button>
                      <Button submit variant="primary" loading={navigation.state === "submitting"}>
                        Create draft
                      </Button>
                    </InlineStack>
                  </FormLayout>
                </Form>
              </SectionCard>
            )}
            {/* The list could not be read: no table, no empty state, only the reason and a retry. */}
            {data.problem ? (
              <LoadFailed problem={data.problem} />
            ) : (
              <SectionCard flush footer={<PageNav page={data.page} />}>
                <Tabs
                  tabs={CAMPAIGN_TABS.map((t) => ({ id: t, content: TAB_LABEL[t] }))}
                  selected={tab < 0 ? 0 : tab}
                  onSelect={(i) => setParam({ status: CAMPAIGN_TABS[i] })}
                />
                <Box padding="300">
                  <InlineStack align="end">
                    <div style={{ minWidth: 220 }}>
                      <Select
                        label="Sort"
                        labelInline
                        options={SORTS}
                        value={sortValue}
                        onChange={(v) => {
                          const [sort, order] = v.split(":");
                          setParam({ sort: sort || undefined, order: order || undefined });
                        }}
                      />
                    </div>
                  </InlineStack>
                </Box>
                <IndexTable
                  resourceName={{ singular: "campaign", plural: "campaigns" }}
                  itemCount={data.campaigns.length}
                  selectable={false}
                  emptyState={
                    <EmptyState
                      title={EMPTY_TITLE[data.query.status]}
                      hint="Create a campaign, or start from one of your templates."
                    />
                  }
                  headings={[
                    { title: "Name" },
                    { title: "Status" },
                    { title: "Created" },
                    { title: "Scheduled / sent" },
                  ]}
                >
                  {data.campaigns.map((c, i) => (
                    <IndexTable.Row id={String(c.id)} key={c.id} position={i}>
                      <IndexTable.Cell>
                        <Link url={`/app/campaigns/${c.id}`} monochrome removeUnderline dataPrimaryLink>
                          <Text as="span" fontWeight="semibold">
                            {c.name}
                          </Text>
                        </Link>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <StatusBadge status={c.status} />
                      </IndexTable.Cell>
                      <IndexTable.Cell>{c.times.created ?? "—"}</IndexTable.Cell>
                      <IndexTable.Cell>
                        {c.times.sent
                          ? `Sent ${c.times.sent}`
                          : c.times.scheduled
                          ? `${
                              c.status === "scheduled" && Date.parse(c.scheduledAt ?? "") > Date.now()
                                ? "Goes out"
                                : "Was due"
                            } ${c.times.scheduled}`
                          : "—"}
                      </IndexTable.Cell>
                    </IndexTable.Row>
                  ))}
                </IndexTable>
              </SectionCard>
            )}
          </>
        )}
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Campaigns" />;
}
