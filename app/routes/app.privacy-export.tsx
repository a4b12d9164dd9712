import type { LoaderFunctionArgs } from "@remix-run/node";
import { exportForRequest } from "~/compliance/requests.server";
import { authenticate } from "~/shopify.server";

// GET /app/privacy-export?id=<data request id>: what the app stores about that request's customer,
// as a JSON download, for the signed-in shop's own requests only.
export const loader = async ({ request }: LoaderFunctionArgs) => {
  const { session } = await authenticate.admin(request);
  const id = new URL(request.url).searchParams.get("id") ?? "";
  const data = /^[0-9a-f-]{36}$/.test(id) ? await exportForRequest(session.shop, id) : null;
  if (!data) return new Response("No such data request", { status: 404 });
  return new Response(JSON.stringify(data, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v), 2), {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="customer-${data.customer.id}-data.json"`,
      "cache-control": "no-store",
    },
  });
};
