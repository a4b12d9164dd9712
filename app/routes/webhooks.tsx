import type { ActionFunctionArgs } from "@remix-run/node";
import { receiveWebhook } from "~/webhooks/ingest.server";

// Every subscribed topic is delivered here (see shopify.app.toml): authenticate, record, answer.
export const action = async ({ request }: ActionFunctionArgs) => receiveWebhook(request);

export const loader = () => new Response("Method not allowed", { status: 405, headers: { allow: "POST" } });
