import type { LoaderFunctionArgs } from "@remix-run/node";
import { config } from "~/config.server";
import { authenticate } from "~/shopify.server";
import { exitIframeAllowed } from "~/shopify/exit-iframe";
import { shopOfSessionToken } from "~/shopify/session-token.server";

export const loader = async ({ request }: LoaderFunctionArgs) => {
  // The library renders any exitIframe target: only the app, Shopify's admin and the authenticated shop's admin pass.
  const url = new URL(request.url);
  if (url.pathname === "/auth/exit-iframe") {
    const shop = await shopOfSessionToken(url.searchParams.get("id_token"));
    if (!exitIframeAllowed(request.url, config().appUrl, shop)) return new Response("Invalid exit target", { status: 400 });
  }
  await authenticate.admin(request);
  return null;
};
