/**
 * Storefront events for the marketing service (product viewed, added to cart, cart viewed,
 * checkout started), posted to the app proxy, which checks Shopify's signature, rate-limits per
 * visitor and queues the event (app/storefront/events.server.ts). Shopify runs this pixel only
 * with the visitor's consent (customer_privacy in shopify.extension.toml); it also stops sending
 * when consent is withdrawn on the page. The visitor is the tracker's (`_mk_vid` cookie); the
 * customer's email is never sent from here: the app takes the signed `logged_in_customer_id`.
 */
import { register, type CartLine, type CheckoutLineItem, type ProductVariant } from "@shopify/web-pixels-extension";

const VISITOR_COOKIE = "_mk_vid";

interface Line {
  productId: string;
  variantId?: string;
  title: string;
  quantity: number;
  price?: number;
  sku?: string;
  url?: string;
  imageUrl?: string;
}

const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined && v !== "")) as T;

function lineOf(variant: ProductVariant | null, quantity: number, origin: string): Line | null {
  if (!variant?.product?.id) return null;
  return defined({
    productId: variant.product.id,
    variantId: variant.id ?? undefined,
    title: variant.product.title,
    quantity,
    price: variant.price?.amount,
    sku: variant.sku ?? undefined,
    url: variant.product.url ? new URL(variant.product.url, origin).href : undefined,
    imageUrl: variant.image?.src ?? undefined,
  });
}

const cartLines = (lines: CartLine[], origin: string) =>
  lines.map((l) => lineOf(l.merchandise, l.quantity, origin)).filter((l): l is Line => l !== null).slice(0, 100);
const checkoutLines = (lines: CheckoutLineItem[], origin: string) =>
  lines.map((l) => lineOf(l.variant, l.quantity, origin)).filter((l): l is Line => l !== null).slice(0, 100);

register(({ analytics, browser, init, settings, customerPrivacy }) => {
  const origin = init.context.document.location.origin;
  const endpoint = `${origin}${String(settings.proxyPath || "/apps/marketing-sync")}/events`;
  let allowed = init.customerPrivacy.analyticsProcessingAllowed && init.customerPrivacy.marketingAllowed;
  customerPrivacy.subscribe("visitorConsentCollected", (event) => {
    allowed = event.customerPrivacy.analyticsProcessingAllowed && event.customerPrivacy.marketingAllowed;
  });

  async function send(body: Record<string, unknown>): Promise<void> {
    if (!allowed) return;
    const visitorId = (await browser.cookie.get(VISITOR_COOKIE)) || undefined;
    try {
      await fetch(endpoint, {
        method: "POST",
        credentials: "include", // the proxy adds logged_in_customer_id from the storefront session
        headers: { "content-type": "application/json" },
        body: JSON.stringify(defined({ ...body, visitorId })),
        keepalive: true,
      });
    } catch {
      // Offline or blocked: a lost browsing event is not worth a retry loop in the visitor's browser.
    }
  }

  analytics.subscribe("product_viewed", (event) => {
    const line = lineOf(event.data.productVariant, 1, origin);
    if (!line) return;
    const variant = event.data.productVariant;
    void send({
      event: "product_viewed",
      url: event.context.document.location.href,
      product: defined({
        id: line.productId,
        variantId: line.variantId,
        title: line.title,
        url: line.url,
        imageUrl: line.imageUrl,
        price: line.price,
        currency: variant.price?.currencyCode,
        sku: line.sku,
        vendor: variant.product.vendor,
        type: variant.product.type ?? undefined,
      }),
    });
  });

  analytics.subscribe("product_added_to_cart", (event) => {
    const added = event.data.cartLine ? lineOf(event.data.cartLine.merchandise, event.data.cartLine.quantity, origin) : null;
    const cart = init.data.cart;
    const lines = cart?.lines ? cartLines(cart.lines, origin) : [];
    if (added && !lines.some((l) => l.variantId === added.variantId)) lines.push(added);
    void send({
      event: "product_added_to_cart",
      url: event.context.document.location.href,
      cart: defined({ id: cart?.id ?? undefined, currency: cart?.cost?.totalAmount?.currencyCode, lines }),
    });
  });

  analytics.subscribe("cart_viewed", (event) => {
    const cart = event.data.cart;
    if (!cart) return;
    void send({
      event: "cart_viewed",
      url: event.context.document.location.href,
      cart: defined({ id: cart.id ?? undefined, currency: cart.cost.totalAmount.currencyCode, total: cart.cost.totalAmount.amount, lines: cartLines(cart.lines, origin) }),
    });
  });

  analytics.subscribe("checkout_started", (event) => {
    const checkout = event.data.checkout;
    void send({
      event: "checkout_started",
      url: event.context.document.location.href,
      cart: defined({
        id: init.data.cart?.id ?? checkout.token ?? undefined,
        currency: checkout.currencyCode ?? undefined,
        total: checkout.totalPrice?.amount,
        lines: checkoutLines(checkout.lineItems, origin),
      }),
    });
  });
});
