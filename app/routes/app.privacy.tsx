import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigation } from "@remix-run/react";
import { Banner, Box, Button, IndexTable, Layout, Page, Text } from "@shopify/polaris";
import { z } from "zod";
import { useEffect, useState } from "react";
import { ConfirmAction } from "~/admin/ConfirmAction";
import { dataRequestRows } from "~/admin/privacy-requests.server";
import { loadSettings, savePrivacyChoice } from "~/admin/settings.server";
import { storeTimeZone } from "~/admin/store-zone.server";
import { SectionCard, SupportDetails, formatWhen } from "~/admin/ui";
import { authenticate } from "~/shopify.server";

// Customer data requests (customers/data_request); each export is downloaded from
// app.privacy-export.tsx, assembled at that moment.
export const meta: MetaFunction = () => [{ title: "Privacy · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [requests, zone, settings] = await Promise.all([dataRequestRows(session.shop), storeTimeZone(session.shop), loadSettings(session.shop)]);
  return { shop: session.shop, requests, zone, eraseContactOnRedact: settings.eraseContactOnRedact };
};

const choiceSchema = z.object({ eraseContactOnRedact: z.enum(["true", "false"]).transform((v) => v === "true") });

// The merchant's one choice here: whether an erasure request also deletes the service contact.
export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const parsed = choiceSchema.safeParse(Object.fromEntries(await request.formData()));
  if (!parsed.success) return new Response("Invalid choice", { status: 400 });
  const settings = await savePrivacyChoice(session.shop, parsed.data.eraseContactOnRedact);
  return { eraseContactOnRedact: settings.eraseContactOnRedact };
};

export default function Privacy() {
  const { shop, requests, zone, eraseContactOnRedact } = useLoaderData<typeof loader>();
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const navigation = useNavigation();
  // A saved choice closes the question.
  useEffect(() => setConfirming(false), [eraseContactOnRedact]);
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
        <SectionCard title="Erasure requests" gap="200" inlineAlign="start">
          <Text as="p">
            <span data-erasure-choice={eraseContactOnRedact ? "delete" : "keep"} />
            {eraseContactOnRedact
              ? "When a customer asks to be erased, Marketing Sync deletes what it stores about them and deletes their contact in your marketing account."
              : "When a customer asks to be erased, Marketing Sync deletes what it stores about them but keeps their contact in your marketing account: erasing it there is then up to you."}
          </Text>
          {/* Changing what every later erasure does asks first, saying what changes. */}
          {confirming ? (
            <ConfirmAction
              title={eraseContactOnRedact ? "Keep contacts when customers ask to be erased?" : "Delete contacts when customers ask to be erased?"}
              fields={{ eraseContactOnRedact: eraseContactOnRedact ? "false" : "true" }}
              confirmLabel={eraseContactOnRedact ? "Keep the contact" : "Delete the contact too"}
              loading={navigation.state !== "idle" && navigation.formData?.has("eraseContactOnRedact") === true}
              onCancel={() => setConfirming(false)}
            >
              <p>
                {eraseContactOnRedact
                  ? "From now on, an erasure request removes what Marketing Sync stores, but the customer stays a contact in your marketing account with their email and history. Erasing them there is then up to you."
                  : "From now on, an erasure request also deletes the customer's contact in your marketing account, with their history there. Requests already handled stay as they are."}
              </p>
            </ConfirmAction>
          ) : (
            <Button onClick={() => setConfirming(true)}>{eraseContactOnRedact ? "Keep the contact instead…" : "Delete the contact too (recommended)…"}</Button>
          )}
        </SectionCard>
        <SectionCard flush>
          <Box padding="400">
            <Text as="p" variant="bodyMd">
              Shopify forwards your customers&apos; data requests for {shop} here. Download what Marketing Sync stores about the
              customer named in the row and send it to that customer&apos;s email address. Requests to erase a customer&apos;s data are handled automatically.
            </Text>
          </Box>
          {requests.length === 0 ? (
            <Box padding="400" paddingBlockStart="0">
              <Text as="p" tone="subdued">
                No data requests yet.
              </Text>
            </Box>
          ) : (
            // Cells that wrap: the table fits the page, with no sideways scrolling.
            <IndexTable
              resourceName={{ singular: "data request", plural: "data requests" }}
              itemCount={requests.length}
              selectable={false}
              headings={[{ title: "Received" }, { title: "Customer" }, { title: "Status" }, { title: "Export" }]}
            >
              {requests.map((r, i) => (
                <IndexTable.Row id={r.id} key={r.id} position={i}>
                  <IndexTable.Cell>{formatWhen(r.receivedAt, zone)}</IndexTable.Cell>
                  <IndexTable.Cell>
                    <div style={{ whiteSpace: "normal" }}>
                      {r.customerEmail ? `${r.customerEmail} (customer ${r.customerId})` : r.customerId ? `Customer ${r.customerId}` : "—"}
                    </div>
                  </IndexTable.Cell>
                  <IndexTable.Cell>
                    <div style={{ whiteSpace: "normal", maxWidth: 320 }}>
                      {r.status}
                      {r.detail && <SupportDetails>{r.detail}</SupportDetails>}
                    </div>
                  </IndexTable.Cell>
                  <IndexTable.Cell>
                    <Button loading={busy === r.id} onClick={() => onDownload(r.id, r.customerId)}>
                      Download JSON
                    </Button>
                  </IndexTable.Cell>
                </IndexTable.Row>
              ))}
            </IndexTable>
          )}
        </SectionCard>
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
