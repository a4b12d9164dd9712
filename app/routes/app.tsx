import type { HeadersFunction, LinksFunction, LoaderFunctionArgs } from "@remix-run/node";
import { Link, Outlet, useLoaderData, useLocation, useNavigation, useRouteError } from "@remix-run/react";
import { NavMenu } from "@shopify/app-bridge-react";
import polarisStyles from "@shopify/polaris/build/esm/styles.css?url";
import { boundary } from "@shopify/shopify-app-remix/server";
import { AppProvider } from "@shopify/shopify-app-remix/react";
import { useEffect, useRef } from "react";
import { PageSkeleton, useFocusableScrollRegions } from "~/admin/ui";
import { config } from "~/config.server";
import { authenticate } from "~/shopify.server";

export const links: LinksFunction = () => [{ rel: "stylesheet", href: polarisStyles }];

export const loader = async ({ request }: LoaderFunctionArgs) => {
  await authenticate.admin(request);
  const { apiKey, adminApiOrigin } = config();
  // Tests and the demo talk to the fake Admin, which serves an App Bridge stub (the CDN is unreachable).
  return { apiKey, appBridgeUrl: adminApiOrigin ? `${adminApiOrigin}/cdn/app-bridge.js` : undefined };
};

const TITLES: Record<string, string> = {
  "/app": "Sync health",
  "/app/connection": "Connection",
  "/app/settings": "Settings",
  "/app/problems": "Problems",
  "/app/activity": "Activity",
  "/app/campaigns": "Campaigns",
  "/app/templates": "Templates",
  "/app/people": "People",
  "/app/privacy": "Privacy requests",
  "/app/storefront": "Storefront",
};

export default function AppLayout() {
  const { apiKey, appBridgeUrl } = useLoaderData<typeof loader>();
  const navigation = useNavigation();
  const location = useLocation();
  const loading = navigation.state !== "idle";
  const main = useRef<HTMLElement>(null);
  useFocusableScrollRegions(main);
  // Going to another page: its skeleton while its data loads (same page: dimmed, as it refreshes).
  const nextPage = navigation.state === "loading" && navigation.location.pathname !== location.pathname ? navigation.location.pathname : null;
  // The admin's own loading bar (App Bridge), shown while a page loads or a form saves.
  useEffect(() => {
    if (typeof window === "undefined") return;
    const bridge = (window as { shopify?: { loading?: (on: boolean) => void } }).shopify;
    bridge?.loading?.(loading);
  }, [loading]);
  return (
    <AppProvider isEmbeddedApp apiKey={apiKey} {...(appBridgeUrl ? { __APP_BRIDGE_URL: appBridgeUrl } : {})}>
      <NavMenu>
        <Link to="/app" rel="home">
          Sync health
        </Link>
        <Link to="/app/connection">Connection</Link>
        <Link to="/app/settings">Settings</Link>
        <Link to="/app/problems">Problems</Link>
        <Link to="/app/activity">Activity</Link>
        <Link to="/app/campaigns">Campaigns</Link>
        <Link to="/app/templates">Templates</Link>
        <Link to="/app/people">People</Link>
        <Link to="/app/privacy">Privacy</Link>
        <Link to="/app/storefront">Storefront</Link>
      </NavMenu>
      {/* The page's main landmark: in the admin the iframe's content is the main content (the nav
          menu and the save bar are the admin's own, outside it). */}
      <main ref={main} aria-busy={loading} style={{ opacity: navigation.state === "loading" && !nextPage ? 0.6 : 1, transition: "opacity 150ms" }}>
        {nextPage ? <PageSkeleton title={TITLES[nextPage.replace(/\/$/, "")] ?? ""} /> : <Outlet />}
      </main>
    </AppProvider>
  );
}

// Shopify needs Remix to catch thrown responses so that its headers reach the browser.
export function ErrorBoundary() {
  return boundary.error(useRouteError());
}

export const headers: HeadersFunction = (headersArgs) => boundary.headers(headersArgs);
