import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useLoaderData, useNavigation, useLocation } from "@remix-run/react";
import {
  Button,
  FormLayout,
  IndexTable,
  InlineStack,
  Layout,
  Link,
  Page,
  Select,
  Text,
  TextField,
} from "@shopify/polaris";
import { useEffect, useState } from "react";
import { LoadFailed, PageNav, ServiceUnavailable } from "~/admin/ServiceUi";
import { EmptyState, PageError, SectionCard, formatWhen } from "~/admin/ui";
import { peoplePage } from "~/people/people.server";
import { ConsentCounts, PersonStatus, STATUS_FILTERS } from "~/people/ui";
import { storeTimeZone } from "~/admin/store-zone.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "People · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [page, zone] = await Promise.all([peoplePage(session.shop, new URL(request.url).searchParams), storeTimeZone(session.shop)]);
  return { ...page, zone };
};

// The contact details the app fills in (app/sync's customer mapping), by their names in words.
const FIELD_FILTERS = [
  { label: "Any detail", value: "" },
  { label: "First name", value: "firstName" },
  { label: "Last name", value: "lastName" },
  { label: "Phone number", value: "phoneNumber" },
];

type FilterName = "q" | "tags" | "notTags" | "segments" | "notSegments" | "field" | "value";

export default function People() {
  const data = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  const [form, setForm] = useState<Record<string, string>>(data.form);
  // The fields follow the URL's filters when a search navigates, not on every revalidation: a reload
  // of the same page must not undo a choice the merchant is making.
  const { search } = useLocation();
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => setForm(data.form), [search]);
  const set = (k: string) => (v: string) => setForm((f) => ({ ...f, [k]: v }));
  const errors: Record<string, string> = data.errors;
  const field = (name: FilterName, label: string, help?: string) => (
    <TextField
      label={label}
      name={name}
      value={form[name] ?? ""}
      onChange={set(name)}
      autoComplete="off"
      error={errors[name]}
      helpText={help}
    />
  );

  return (
    <Page title="People" subtitle="Contacts in your marketing account">
      <Layout>
        {data.service ? (
          <ServiceUnavailable service={data.service} what="People" />
        ) : (
          <>
            {data.consent && <ConsentCounts counts={data.consent} />}
            <SectionCard>
              <Form method="get">
                <FormLayout>
                  <FormLayout.Group>
                    {field("q", "Name or email", "A first name, a last name, both, or part of an email address")}
                    <Select
                      label="Status"
                      name="status"
                      options={STATUS_FILTERS}
                      value={form.status ?? ""}
                      onChange={set("status")}
                      error={errors.status}
                    />
                  </FormLayout.Group>
                  <FormLayout.Group>
                    {field("tags", "With any of these tags", "Comma-separated")}
                    {field("notTags", "Without these tags", "Comma-separated")}
                  </FormLayout.Group>
                  <FormLayout.Group>
                    {field(
                      "segments",
                      "In segments",
                      "The segment numbers your marketing account shows, for example 12, 15"
                    )}
                    {field(
                      "notSegments",
                      "Not in segments",
                      "The segment numbers your marketing account shows, for example 12, 15"
                    )}
                  </FormLayout.Group>
                  <FormLayout.Group>
                    <Select
                      label="Contact detail"
                      name="field"
                      options={FIELD_FILTERS}
                      value={form.field ?? ""}
                      onChange={set("field")}
                      error={errors.field}
                    />
                    {field("value", "Is exactly", "For example Ada")}
                  </FormLayout.Group>
                  <InlineStack gap="200" align="end">
                    <Button url="/app/people">Clear</Button>
                    <Button submit variant="primary" loading={navigation.state === "loading"}>
                      Search
                    </Button>
                  </InlineStack>
                </FormLayout>
              </Form>
            </SectionCard>
            {/* The list could not be read: no table, no "nobody matches", only the reason and a retry. */}
            {data.problem ? (
              <LoadFailed problem={data.problem} />
            ) : (
              <SectionCard flush footer={<PageNav page={data.page} />}>
                <IndexTable
                  resourceName={{ singular: "person", plural: "people" }}
                  itemCount={data.people.length}
                  selectable={false}
                  emptyState={
                    <EmptyState
                      title={
                        Object.keys(errors).length
                          ? "Fix the highlighted filters to search"
                          : "Nobody matches these filters"
                      }
                    />
                  }
                  headings={[{ title: "Email" }, { title: "Status" }, { title: "Tags" }, { title: "Added" }]}
                >
                  {data.people.map((p, i) => (
                    <IndexTable.Row id={String(p.id)} key={p.id} position={i}>
                      <IndexTable.Cell>
                        <Link
                          url={`/app/people/${encodeURIComponent(p.email)}`}
                          monochrome
                          removeUnderline
                          dataPrimaryLink
                        >
                          <Text as="span" fontWeight="semibold">
                            {p.email}
                          </Text>
                        </Link>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <PersonStatus status={p.status} details={p.statusDetails} />
                      </IndexTable.Cell>
                      <IndexTable.Cell>{p.tags.join(", ") || "—"}</IndexTable.Cell>
                      <IndexTable.Cell>{formatWhen(p.createdAt, data.zone)}</IndexTable.Cell>
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
  return <PageError title="People" />;
}
