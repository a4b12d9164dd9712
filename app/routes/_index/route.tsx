import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";

// The app lives inside the Shopify admin; a direct visit with ?shop= goes there.
export const loader = async ({ request }: LoaderFunctionArgs) => {
  const url = new URL(request.url);
  if (url.searchParams.get("shop")) throw redirect(`/app?${url.searchParams.toString()}`);
  return null;
};

export default function Landing() {
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", maxWidth: 640, margin: "4rem auto", lineHeight: 1.5 }}>
      <h1>Marketing Sync</h1>
      <p>Sync your Shopify customers, consent, orders, products and abandoned carts to your email marketing account.</p>
      <p>Open the app from your Shopify admin, or install it from the Shopify App Store.</p>
    </main>
  );
}
