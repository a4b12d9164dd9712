import type { ActionFunctionArgs } from "@remix-run/node";
import { handleProxyEvent } from "~/server/storefront-proxy.server";

// Storefront events from the web pixel, through the app proxy (shopify.app.toml [app_proxy]).
export const action = async ({ request }: ActionFunctionArgs) => handleProxyEvent(request);

export const loader = () => new Response("Method not allowed", { status: 405, headers: { allow: "POST" } });
