import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useNavigation } from "@remix-run/react";
import {
  Avatar,
  Badge,
  Banner,
  BlockStack,
  Box,
  Button,
  Divider,
  FormLayout,
  InlineStack,
  Layout,
  List,
  Page,
  Text,
  TextField,
} from "@shopify/polaris";
import { useEffect, useState } from "react";
import { ConsentChoice, type OptInMode } from "~/admin/ConsentChoice";
import { shopifyConsentCounts } from "~/admin/consent-counts.server";
import { connectionAction } from "~/admin/connect-page.server";
import { HistoryImport } from "~/admin/HistoryImport";
import { historyAction, historyView, orderWindow } from "~/admin/history.server";
import { pauseText } from "~/admin/plain-words";
import { loadSettings, saveConsentChoice, saveSignupsChoice } from "~/admin/settings.server";
import { SignupsChoice } from "~/admin/SignupsChoice";
import { storeTimeZone } from "~/admin/store-zone.server";
import { ActionError, PageError, SectionCard, SupportDetails, formatWhen, useToast } from "~/admin/ui";
import { importedText, NOT_CAUGHT_UP, type ConnectionNotice } from "~/shops/connection-text";
import { describeShop } from "~/shops/shops.server";
import { authenticate } from "~/shopify.server";

export const meta: MetaFunction = () => [{ title: "Connection · Marketing Sync" }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const [shop, history, zone, ordersWindow, settings] = await Promise.all([
    describeShop(session.shop),
    historyView(session.shop),
    storeTimeZone(session.shop),
    orderWindow(session.shop),
    loadSettings(session.shop),
  ]);
  // Before the first connection the merchant chooses the consent mode, with this store's numbers.
  const consentCounts = shop.account ? null : await shopifyConsentCounts(session.shop);
  return { ...shop, optInMode: settings.optInMode, signupsToShopify: settings.signupsToShopify, consentCounts, pausedAt: shop.pausedAt?.toISOString() ?? null, connectedAt: shop.connectedAt?.toISOString() ?? null, history, zone, ordersWindow };
};

export const action = async ({ request }: ActionFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const form = await request.formData();
  if (form.get("intent") === "resync") return historyAction(session.shop, form);
  // The consent choice made while connecting is saved first: the history import follows it.
  if (form.get("intent") === "connect" && form.has("optInMode")) {
    const saved = await saveConsentChoice(session.shop, form.get("optInMode"));
    if (!saved.ok) return { ok: false as const, errors: saved.errors, at: Date.now() };
  }
  // The signups choice (a checkbox: absent when unticked, so the form says it offered the choice).
  if (form.get("intent") === "connect" && form.has("signupsChoice")) await saveSignupsChoice(session.shop, form.get("signupsToShopify") === "true");
  return connectionAction(session.shop, form);
};

const STATE_BADGE = {
  connected: <Badge tone="success">Connected</Badge>,
  paused: <Badge tone="critical">Paused</Badge>,
  not_connected: <Badge tone="attention">Not connected</Badge>,
  not_installed: <Badge tone="attention">Not connected</Badge>,
} as const;

function initials(name: string): string {
  const words = name.split(/[\s@.]+/).filter(Boolean);
  return (words.length > 1 ? words[0][0] + words[1][0] : name.slice(0, 2)).toUpperCase();
}

export default function Connection() {
  const shop = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const navigation = useNavigation();
  const [apiKey, setApiKey] = useState("");
  const [optInMode, setOptInMode] = useState<OptInMode>(shop.optInMode);
  const [signups, setSignups] = useState(shop.signupsToShopify);
  // Replacing a key may switch accounts: the merchant confirms first.
  const [confirming, setConfirming] = useState(false);
  // Disconnecting stops the sync: asked first too.
  const [confirmingDisconnect, setConfirmingDisconnect] = useState(false);
  // What the last connection did (from the action), until dismissed.
  const [dismissed, setDismissed] = useState<number | null>(null);
  useToast(result);
  // The key never comes back from the server; clear the field once it is saved.
  useEffect(() => {
    if (result?.ok) setApiKey("");
    setConfirming(false);
    setConfirmingDisconnect(false);
  }, [result]);
  const submitting = navigation.state === "submitting";
  const connecting = submitting && navigation.formData?.get("intent") === "connect";
  const error = result && !result.ok ? result.errors.apiKey : undefined;
  // Only a connection's result has one (the history form's has none).
  const notice = result?.ok && dismissed !== result.at && "notice" in result ? (result.notice as ConnectionNotice | undefined) : undefined;
  const account = shop.account;
  const accountName = account ? (account.company ?? account.email) : null;

  const keyForm = (
    <Form
      method="post"
      onSubmit={(event) => {
        // Enter in the key field submits too: a replacement still asks first.
        if (account && !confirming) {
          event.preventDefault();
          setConfirming(true);
        }
      }}
    >
      <input type="hidden" name="intent" value="connect" />
      <FormLayout>
        {!account && <ConsentChoice value={optInMode} onChange={setOptInMode} counts={shop.consentCounts} error={result && !result.ok ? result.errors.optInMode : undefined} />}
        {!account && <input type="hidden" name="signupsChoice" value="1" />}
        {!account && <SignupsChoice checked={signups} onChange={setSignups} counts={null} />}
        <TextField
          label="API key"
          name="apiKey"
          type="password"
          autoComplete="off"
          value={apiKey}
          onChange={setApiKey}
          error={error}
          helpText={
            "Find it in your marketing account under Settings → API keys. Use a dashboard (API) key, not a content-site plugin key." +
            (account ? ` A key of another marketing account switches this store from ${accountName} to that account.` : "")
          }
        />
        {account && confirming ? (
          <Banner tone="warning" title={`Replace the API key of ${accountName}?`}>
            <BlockStack gap="200">
              <p>
                A new key of the same account only replaces the key. A key of another marketing account switches this store to that account: the app
                forgets what it sent to {accountName} and imports your store&apos;s history ({importedText(shop.ordersWindow)}) into the new account, without starting
                automations. {accountName} keeps what it already has and receives nothing more.
              </p>
              <InlineStack gap="200">
                <Button submit variant="primary" loading={connecting}>
                  {shop.state === "paused" ? "Save key and resume" : "Save key"}
                </Button>
                <Button onClick={() => setConfirming(false)}>Cancel</Button>
              </InlineStack>
            </BlockStack>
          </Banner>
        ) : (
          <InlineStack align="end">
            {account ? (
              <Button variant="primary" onClick={() => setConfirming(true)}>
                {shop.state === "paused" ? "Update key and resume…" : "Replace key…"}
              </Button>
            ) : (
              <Button submit variant="primary" loading={connecting}>
                Connect
              </Button>
            )}
          </InlineStack>
        )}
      </FormLayout>
    </Form>
  );

  return (
    <Page title="Connection" subtitle="Your email marketing account">
      <Layout>
        <ActionError result={result} />
        {shop.state === "paused" && (
          <Layout.Section>
            <Banner tone="critical" title="Sync is paused: the marketing service rejected your API key">
              <BlockStack gap="200">
                <p>
                  {pauseText(shop.pauseReason)} Paused {formatWhen(shop.pausedAt, shop.zone)}. Nothing is sent until you paste a valid key;
                  changes are kept and sent once it works again.
                </p>
                {shop.pauseReason && <SupportDetails>{shop.pauseReason}</SupportDetails>}
              </BlockStack>
            </Banner>
          </Layout.Section>
        )}
        {notice && result && (
          <Layout.Section>
            <Banner tone="info" title={notice.title} onDismiss={() => setDismissed(result.at)}>
              <p>{notice.body}</p>
            </Banner>
          </Layout.Section>
        )}
        <SectionCard title="Marketing account" badge={STATE_BADGE[shop.state]} gap="400">
          {account ? (
            <BlockStack gap="300">
              <InlineStack gap="300" blockAlign="center">
                {account.logoUrl ? (
                  <img src={account.logoUrl} alt="" width={40} height={40} style={{ borderRadius: 8 }} />
                ) : (
                  <Avatar initials={initials(account.company ?? account.email)} name={account.company ?? account.email} />
                )}
                <BlockStack gap="050">
                  <Text as="p" variant="bodyMd" fontWeight="semibold">
                    {account.company ?? account.email}
                  </Text>
                  <Text as="p" variant="bodySm" tone="subdued">
                    {account.email}
                  </Text>
                </BlockStack>
              </InlineStack>
              <Divider />
              <List type="bullet">
                <List.Item>Plan: {account.plan ?? "unknown"}</List.Item>
                <List.Item>Account status: {account.status}</List.Item>
                <List.Item>Time zone: {account.timezone ?? "unknown"}</List.Item>
                <List.Item>API key: •••• {account.keyLast4}</List.Item>
                <List.Item>Connected: {formatWhen(shop.connectedAt, shop.zone)}</List.Item>
              </List>
            </BlockStack>
          ) : (
            <Text as="p" tone="subdued">
              Connect {shop.domain} to your marketing account to start syncing customers, consent, orders, products and abandoned carts.
            </Text>
          )}
        </SectionCard>
        <SectionCard title={account ? "Use another API key" : "Connect with your API key"}>
          {keyForm}
        </SectionCard>
        {account && <HistoryImport history={shop.history} timeZone={shop.zone} ordersWindow={shop.ordersWindow} />}
        {account && (
          <SectionCard title="Disconnect">
            {!confirmingDisconnect && (
              <Text as="p" tone="subdued">
                Stops all syncing for this store and forgets the API key. Nothing is sent while disconnected. If you connect again, your store&apos;s
                history is imported to catch up: {importedText(shop.ordersWindow)}, without starting automations. {NOT_CAUGHT_UP}
              </Text>
            )}
            {confirmingDisconnect ? (
              <Banner tone="critical" title={`Disconnect ${accountName}?`}>
                <BlockStack gap="200">
                  <p>
                    Nothing more is sent until you connect again. Connecting again imports your store&apos;s {importedText(shop.ordersWindow)}. {NOT_CAUGHT_UP}
                  </p>
                  <Form method="post">
                    <input type="hidden" name="intent" value="disconnect" />
                    <InlineStack gap="200" align="start">
                      <Button submit variant="primary" tone="critical" loading={submitting && navigation.formData?.get("intent") === "disconnect"}>
                        Disconnect
                      </Button>
                      <Button onClick={() => setConfirmingDisconnect(false)}>Cancel</Button>
                    </InlineStack>
                  </Form>
                </BlockStack>
              </Banner>
            ) : (
              <Box>
                <Button tone="critical" onClick={() => setConfirmingDisconnect(true)}>
                  Disconnect…
                </Button>
              </Box>
            )}
          </SectionCard>
        )}
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Connection" />;
}
