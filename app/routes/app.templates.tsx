import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigate, useNavigation } from "@remix-run/react";
import { BlockStack, Box, Button, IndexTable, InlineStack, Layout, Page, Text, TextField } from "@shopify/polaris";
import { useEffect, useState } from "react";
import { HandOffLink, LoadFailed, PageNav, ProblemBanner, ServiceUnavailable } from "~/admin/ServiceUi";
import { PageError, SectionCard, formatWhen, useToast } from "~/admin/ui";
import { createCampaign, templatesPage } from "~/campaigns/campaigns.server";
import { storeTimeZone } from "~/admin/store-zone.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Templates · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [page, zone] = await Promise.all([templatesPage(session.shop, new URL(request.url).searchParams), storeTimeZone(session.shop)]);
  return { ...page, zone };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return createCampaign(session.shop, await request.formData());
};

function CreateFromTemplate({ templateId, templateName }: { templateId: string; templateName: string }) {
  const navigation = useNavigation();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(templateName);
  const busy = navigation.state !== "idle" && navigation.formData?.get("templateId") === templateId;
  if (!open) {
    return (
      <Button size="slim" onClick={() => setOpen(true)}>
        Create campaign
      </Button>
    );
  }
  return (
    <Form method="post">
      <input type="hidden" name="intent" value="create" />
      <input type="hidden" name="templateId" value={templateId} />
      <InlineStack gap="200" blockAlign="end" wrap={false}>
        <TextField label="Campaign name" labelHidden name="name" value={name} onChange={setName} autoComplete="off" />
        <Button submit variant="primary" size="slim" loading={busy}>
          Create
        </Button>
        <Button size="slim" variant="plain" onClick={() => setOpen(false)}>
          Cancel
        </Button>
      </InlineStack>
    </Form>
  );
}

export default function Templates() {
  const data = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigate = useNavigate();
  useToast(result);
  useEffect(() => {
    if (result?.ok && result.goTo) navigate(result.goTo);
  }, [result, navigate]);
  const problem = result && !result.ok ? result.problem : null;

  return (
    <Page title="Templates" subtitle="Email designs in your marketing account: yours and the published shared ones">
      <Layout>
        {data.service ? (
          <ServiceUnavailable service={data.service} what="Templates" />
        ) : (
          <>
            {problem && (
              <Layout.Section>
                <ProblemBanner problem={problem} />
              </Layout.Section>
            )}
            {/* The list could not be read: no table, only the reason and a retry. */}
            {data.problem ? (
              <LoadFailed problem={data.problem} />
            ) : (
              <SectionCard
                flush
                footer={
                  <>
                    <PageNav page={data.page} />
                    <Box padding="300">
                      <Text as="p" tone="subdued" variant="bodySm">
                        Previews open in your marketing dashboard and need you to be signed in there.
                      </Text>
                    </Box>
                  </>
                }
              >
                <IndexTable
                  resourceName={{ singular: "template", plural: "templates" }}
                  itemCount={data.templates.length}
                  selectable={false}
                  headings={[{ title: "Template" }, { title: "Created" }, { title: "Preview" }, { title: "Actions", hidden: true }]}
                >
                  {data.templates.map((t, i) => (
                    <IndexTable.Row id={t.id} key={t.id} position={i}>
                      <IndexTable.Cell>
                        <BlockStack gap="050">
                          <Text as="span" fontWeight="semibold">
                            {t.name}
                          </Text>
                          <div style={{ whiteSpace: "normal", maxWidth: 420 }}>
                            <Text as="span" tone="subdued" variant="bodySm">
                              {t.description || "—"}
                            </Text>
                          </div>
                        </BlockStack>
                      </IndexTable.Cell>
                      <IndexTable.Cell>{formatWhen(t.createdAt, data.zone)}</IndexTable.Cell>
                      <IndexTable.Cell>{t.previewUrl ? <HandOffLink url={t.previewUrl}>Preview ↗</HandOffLink> : "—"}</IndexTable.Cell>
                      <IndexTable.Cell>
                        <CreateFromTemplate templateId={t.id} templateName={t.name} />
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
  return <PageError title="Templates" />;
}
