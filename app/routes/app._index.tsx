import type { LoaderFunctionArgs } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { Badge, BlockStack, Card, InlineStack, Layout, Page, Text } from "@shopify/polaris";
import { describeShop } from "~/shops/shops.server";
import { authenticate } from "~/shopify.server";

export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return describeShop(session.shop);
};

export default function Index() {
  const shop = useLoaderData<typeof loader>();
  return (
    <Page title="Marketing Sync">
      <Layout>
        <Layout.Section>
          <Card>
            <BlockStack gap="300">
              <InlineStack gap="200" blockAlign="center">
                <Text as="h2" variant="headingMd">
                  Email marketing connection
                </Text>
                {shop.connected ? <Badge tone="success">Connected</Badge> : <Badge tone="attention">Not connected</Badge>}
              </InlineStack>
              <Text as="p" variant="bodyMd">
                {shop.connected
                  ? `Customers, orders, products and carts from ${shop.domain} are synced to your marketing account.`
                  : `Connect ${shop.domain} to your marketing account to start syncing customers, orders, products and carts.`}
              </Text>
            </BlockStack>
          </Card>
        </Layout.Section>
      </Layout>
    </Page>
  );
}
