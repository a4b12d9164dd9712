import type { LoaderFunctionArgs } from "@remix-run/node";
import { config } from "~/config.server";
import { authenticate } from "~/shopify.server";
import { exitIframeAllowed } from "~/shopify/exit-iframe";

export const loader = async ({ request }: LoaderFunctionArgs) => {
  // The library renders any exitIframe target: only the app and the Shopify admin pass.
  if (new URL(request.url).pathname === "/auth/exit-iframe" && !exitIframeAllowed(request.url, config().appUrl)) {
    return new Response("Invalid exit target", { status: 400 });
  }
  await authenticate.admin(request);
  return null;
};
