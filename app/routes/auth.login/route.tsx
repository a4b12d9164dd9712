import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { AppProvider, Button, Card, FormLayout, Page, Text, TextField } from "@shopify/polaris";
import polarisTranslations from "@shopify/polaris/locales/en.json";
import { useState } from "react";
import { login } from "~/shopify.server";

// Non-embedded entry: a merchant types a shop domain and is sent through Shopify's install flow.
export const loader = async ({ request }: LoaderFunctionArgs) => {
  const errors = await loginErrors(request);
  return { errors, polarisTranslations };
};

export const action = async ({ request }: ActionFunctionArgs) => ({ errors: await loginErrors(request) });

async function loginErrors(request: Request): Promise<{ shop?: string }> {
  const result = await login(request);
  if (!result || typeof result !== "object") return {};
  if (result.shop === "MISSING_SHOP") return { shop: "Please enter your shop domain to log in" };
  if (result.shop === "INVALID_SHOP") return { shop: "Please enter a valid shop domain to log in" };
  return {};
}

export default function Auth() {
  const loaderData = useLoaderData<typeof loader>();
  const actionData = useActionData<typeof action>();
  const [shop, setShop] = useState("");
  const { errors } = actionData ?? loaderData;
  return (
    <AppProvider i18n={loaderData.polarisTranslations}>
      <Page>
        <Card>
          <Form method="post">
            <FormLayout>
              <Text variant="headingMd" as="h2">
                Log in
              </Text>
              <TextField
                type="text"
                name="shop"
                label="Shop domain"
                helpText="example.myshopify.com"
                value={shop}
                onChange={setShop}
                autoComplete="on"
                error={errors.shop}
              />
              <Button submit>Log in</Button>
            </FormLayout>
          </Form>
        </Card>
      </Page>
    </AppProvider>
  );
}
