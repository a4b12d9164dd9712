import type { LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { BlockStack, Button, Card, DataTable, Layout, Page, Text } from "@shopify/polaris";
import { listDataRequests, type DataRequestSummary } from "~/compliance/requests.server";
import { authenticate } from "~/shopify.server";

// Customer data requests (customers/data_request); each export is downloaded from
// app.privacy-export.tsx, assembled at that moment.
export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return { shop: session.shop, requests: await listDataRequests(session.shop) };
};

export default function Privacy() {
  const { shop, requests } = useLoaderData<typeof loader>() as { shop: string; requests: DataRequestSummary[] };
  return (
    <Page title="Privacy requests">
      <Layout>
        <Layout.Section>
          <Card>
            <BlockStack gap="300">
              <Text as="p" variant="bodyMd">
                Shopify forwards your customers&apos; data requests for {shop} here. Download what Marketing Sync stores about the
                customer and send it to them. Redaction requests are carried out automatically.
              </Text>
              {requests.length === 0 ? (
                <Text as="p" tone="subdued">
                  No data requests yet.
                </Text>
              ) : (
                <DataTable
                  columnContentTypes={["text", "text", "text", "text"]}
                  headings={["Received", "Customer", "Status", "Export"]}
                  rows={requests.map((r) => [
                    r.receivedAt.slice(0, 16).replace("T", " "),
                    r.customerId ?? "—",
                    r.detail ?? r.status,
                    <Button key={r.id} onClick={() => void download(r.id, r.customerId)}>
                      Download JSON
                    </Button>,
                  ])}
                />
              )}
            </BlockStack>
          </Card>
        </Layout.Section>
      </Layout>
    </Page>
  );
}

// Inside the admin iframe a plain link carries no session token; App Bridge adds it to fetch.
async function download(id: string, customerId: string | null) {
  const res = await fetch(`/app/privacy-export?id=${encodeURIComponent(id)}`);
  if (!res.ok) return;
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement("a"), { href: url, download: `customer-${customerId ?? id}-data.json` });
  a.click();
  URL.revokeObjectURL(url);
}
