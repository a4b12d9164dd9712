import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData, useNavigate } from "@remix-run/react";
import { Banner, Layout, Page, SkeletonBodyText } from "@shopify/polaris";
import { useEffect } from "react";
import { ProblemBanner, ServiceUnavailable } from "~/admin/ServiceUi";
import { PageError } from "~/admin/ui";
import { personForCustomer } from "~/people/people.server";
import { authenticate } from "~/shopify.server";

// The admin link on a Shopify customer's page opens this with the customer's id (path or ?id=).
export const meta: MetaFunction = () => [{ title: "Person · Marketing Sync" }];

export const loader = async ({ request, params }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  return personForCustomer(session.shop, params.id ?? new URL(request.url).searchParams.get("id"));
};

const MESSAGES = {
  bad_id: ["This link does not name a Shopify customer", "Open it from a customer's page in the Shopify admin."],
  no_customer: ["This customer no longer exists in Shopify", "It may have been deleted."],
  no_email: ["This customer has no email address", "Only customers with an email address are sent to the marketing service."],
  not_in_service: ["This customer is not in your marketing account yet", "Customers reach the service when they are created or changed in Shopify, or by the history import."],
} as const;

export default function PersonForCustomer() {
  const found = useLoaderData<typeof loader>();
  const navigate = useNavigate();
  // Client-side, so the embedded session goes along (a server redirect would drop it).
  useEffect(() => {
    if (found.kind === "person") navigate(found.to, { replace: true });
  }, [found, navigate]);
  if (found.kind === "person") return <SkeletonBodyText lines={3} />;
  const message = found.kind in MESSAGES ? MESSAGES[found.kind as keyof typeof MESSAGES] : null;
  return (
    <Page title="Customer in the marketing service" backAction={{ content: "People", url: "/app/people" }}>
      <Layout>
        {found.service && <ServiceUnavailable service={found.service} what="People" />}
        {found.problem && (
          <Layout.Section>
            <ProblemBanner problem={found.problem} />
          </Layout.Section>
        )}
        {message && (
          <Layout.Section>
            <Banner tone="info" title={message[0]}>
              <p>
                {message[1]}
                {found.kind === "not_in_service" && found.email ? ` (${found.email})` : ""}
              </p>
            </Banner>
          </Layout.Section>
        )}
      </Layout>
    </Page>
  );
}

export function ErrorBoundary() {
  return <PageError title="Customer in the marketing service" />;
}
