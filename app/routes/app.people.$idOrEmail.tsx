import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useLoaderData, useNavigation, useLocation } from "@remix-run/react";
import { Button, DataTable, FormLayout, InlineStack, Layout, Page, Text, TextField } from "@shopify/polaris";
import { useEffect, useState } from "react";
import { DateField } from "~/admin/DateField";
import { LoadFailed, PageNav, ServiceUnavailable } from "~/admin/ServiceUi";
import { EmptyState, PageError, SectionCard, formatWhen } from "~/admin/ui";
import { personPage } from "~/people/people.server";
import { PersonStatus, personStatusLabel } from "~/people/ui";
import { storeTimeZone } from "~/admin/store-zone.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Person · Marketing Sync" }];

export const loader = async ({ request, params }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [page, zone] = await Promise.all([personPage(session.shop, params.idOrEmail, new URL(request.url).searchParams), storeTimeZone(session.shop)]);
  if (page.notFound) throw new Response("Person not found", { status: 404 });
  return { ...page, zone };
};

const FILTERS = ["event", "search", "from", "to"] as const;

export default function PersonPage() {
  const data = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  const [filters, setFilters] = useState<Record<string, string>>(data.filters);
  // The fields follow the URL's filters when a search navigates, not on every revalidation: a reload
  // of the same page must not undo a choice the merchant is making.
  const { search } = useLocation();
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => setFilters(data.filters), [search]);
  const set = (k: string) => (v: string) => setFilters((f) => ({ ...f, [k]: v }));
  const errors: Record<string, string> = data.errors;
  const p = data.person;

  return (
    <Page title={p?.email ?? "Person"} titleMetadata={p ? <PersonStatus status={p.status} details={p.statusDetails} /> : undefined} backAction={{ content: "People", url: "/app/people" }}>
      <Layout>
        {data.service && <ServiceUnavailable service={data.service} what="People" />}
        {/* The person could not be read: only the reason and a retry. */}
        {!p && data.problem && <LoadFailed problem={data.problem} />}
        {p && (
          <>
            <SectionCard title="Consent" variant="oneThird">
              <Text as="p">
                <span data-consent>
                  {p.status === "active" ? "Receives email" : "Does not receive email"} ({personStatusLabel(p.status, p.statusDetails).toLowerCase()})
                </span>
              </Text>
              <Text as="p" tone="subdued">
                Person id {p.id} · added {formatWhen(p.createdAt, data.zone)}
              </Text>
              <Text as="h2" variant="headingMd">
                Tags
              </Text>
              <Text as="p">{p.tags.join(", ") || "No tags"}</Text>
              <Text as="h2" variant="headingMd">
                Series
              </Text>
              <Text as="p">{p.series.map((s) => s.name).join(", ") || "Not in any series"}</Text>
            </SectionCard>
            <SectionCard title="Fields" gap="200">
              {p.customFields.length ? (
                <DataTable columnContentTypes={["text", "text"]} headings={["Field", "Value"]} rows={p.customFields.map((f) => [f.label, f.value || "—"])} />
              ) : (
                <Text as="p" tone="subdued">
                  No fields
                </Text>
              )}
            </SectionCard>
            <SectionCard title="Tracked events">
              <Text as="p" tone="subdued">
                What the marketing service recorded for this person, newest first: orders, carts and other events your store sent.
              </Text>
              <Form method="get">
                <FormLayout>
                  <FormLayout.Group>
                    <TextField label="Event name" name="event" value={filters.event ?? ""} onChange={set("event")} autoComplete="off" error={errors.event} placeholder="e.g. Order completed" helpText="An event name as the table below shows it" />
                    <TextField label="Keyword" name="search" value={filters.search ?? ""} onChange={set("search")} autoComplete="off" error={errors.search} placeholder="An order number, a product…" />
                    <DateField label="From" name="from" value={filters.from ?? ""} onChange={set("from")} error={errors.from ?? errors.dateFrom} />
                    <DateField label="To" name="to" value={filters.to ?? ""} onChange={set("to")} error={errors.to ?? errors.dateTo} />
                  </FormLayout.Group>
                  <InlineStack gap="200" align="end">
                    <Button url={`/app/people/${encodeURIComponent(p.email)}`}>Clear</Button>
                    <Button submit variant="primary" loading={navigation.state === "loading"}>
                      Filter events
                    </Button>
                  </InlineStack>
                </FormLayout>
              </Form>
            </SectionCard>
            {/* The events could not be read (a bad filter is said beside it): no table, no "no events". */}
            {data.problem && !Object.keys(errors).length ? (
              <LoadFailed problem={data.problem} />
            ) : (
              <SectionCard flush footer={<PageNav page={data.page} />}>
                {data.events.length ? (
                  <DataTable
                    columnContentTypes={["text", "text", "text"]}
                    headings={["When", "Event", "Details"]}
                    rows={data.events.map((e) => [
                      formatWhen(e.at, data.zone),
                      e.label,
                      // The stored data stays one hover away for support.
                      <div key={e.at + e.event} title={e.properties} style={{ whiteSpace: "normal", maxWidth: 560, wordBreak: "break-word" }}>
                        {e.summary}
                      </div>,
                    ])}
                  />
                ) : (
                  <EmptyState title={FILTERS.some((k) => filters[k]) ? "No events match these filters" : "No events recorded for this person yet"} />
                )}
              </SectionCard>
            )}
          </>
        )}
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return (
    <PageError
      title="Person"
      notFound={{
        title: "Person not found",
        banner: "Nobody with this email address or id is in your marketing account",
        hint: "Search the People page by email to find them.",
        back: { content: "People", url: "/app/people" },
      }}
    />
  );
}
