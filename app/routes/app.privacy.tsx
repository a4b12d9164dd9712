import type { LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { Banner, BlockStack, Button, Card, DataTable, Layout, Page, Text } from "@shopify/polaris";
import { useState } from "react";
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
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const onDownload = (id: string, customerId: string | null) => {
    setFailure(null);
    setBusy(id);
    void download(id, customerId)
      .catch(() => "The app could not be reached, or the download was cut off. Check your connection and try again.")
      .then(setFailure)
      .finally(() => setBusy(null));
  };
  return (
    <Page title="Privacy requests">
      <Layout>
        {failure && (
          <Layout.Section>
            <Banner tone="critical" title="The export could not be downloaded" onDismiss={() => setFailure(null)}>
              <p>{failure}</p>
            </Banner>
          </Layout.Section>
        )}
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
                    <Button key={r.id} loading={busy === r.id} onClick={() => onDownload(r.id, r.customerId)}>
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
// Returns why the download failed, or null once the file was handed to the browser.
async function download(id: string, customerId: string | null): Promise<string | null> {
  const res = await fetch(`/app/privacy-export?id=${encodeURIComponent(id)}`);
  if (res.status === 404) return "This data request is no longer stored. Reload the page to see the current list.";
  if (res.status === 401 || res.status === 403) return "Your session has expired. Reload the page and try again.";
  if (!res.ok) return `The app answered with an error (HTTP ${res.status}). Try again in a moment.`;
  const url = URL.createObjectURL(await res.blob());
  const a = Object.assign(document.createElement("a"), { href: url, download: `customer-${customerId ?? id}-data.json` });
  a.click();
  URL.revokeObjectURL(url);
  return null;
}
