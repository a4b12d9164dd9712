/**
 * Storefront events for the marketing service (product viewed, added to or removed from the
 * cart, cart viewed, checkout started), posted to the app proxy, which checks Shopify's signature, rate-limits per
 * visitor and queues the event (app/storefront/events.server.ts). Shopify runs this pixel only
 * with the visitor's consent (customer_privacy in shopify.extension.toml); it also stops sending
 * when consent is withdrawn on the page. The visitor is the tracker's (`_mk_vid` cookie); the
 * customer's email is never sent from here: the app takes the signed `logged_in_customer_id`.
 */
import { register, type CartLine, type CheckoutLineItem, type ProductVariant } from "@shopify/web-pixels-extension";

const VISITOR_COOKIE = "_mk_vid";
/**
 * A body stays under this, below the app proxy's limit (STOREFRONT_POLICY.maxEventBytes, 64 KiB),
 * so a big cart is never refused: past it, lines after the first few lose their URLs, then lines
 * are left off (sizedBody). A line with URLs is ~330 bytes: 100 of them fit as they are.
 */
const MAX_BODY_BYTES = 60 * 1024;
/** Lines that keep their product and image URLs when a body must shrink (the ones an email shows). */
const LINES_WITH_URLS = 10;

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

interface Cart {
  id?: string;
  currency?: string;
  total?: number;
  lines: Line[];
}

const bytesOf = (text: string) => new TextEncoder().encode(text).length;

/** The JSON body, made to fit MAX_BODY_BYTES by shortening its cart when it must. */
function sizedBody(body: Record<string, unknown> & { cart?: Cart }): string {
  let text = JSON.stringify(defined(body));
  const cart = body.cart;
  if (!cart || bytesOf(text) <= MAX_BODY_BYTES) return text;
  const lines = cart.lines.map((l, i) => (i < LINES_WITH_URLS ? l : defined({ ...l, url: undefined, imageUrl: undefined })));
  text = JSON.stringify(defined({ ...body, cart: { ...cart, lines } }));
  while (bytesOf(text) > MAX_BODY_BYTES && lines.length > 1) {
    lines.splice(Math.ceil(lines.length * 0.9)); // at most a few rounds, even for 100 lines
    text = JSON.stringify(defined({ ...body, cart: { ...cart, lines } }));
  }
  return text;
}

register(({ analytics, browser, init, settings, customerPrivacy }) => {
  const origin = init.context.document.location.origin;
  const endpoint = `${origin}${String(settings.proxyPath || "/apps/marketing-sync")}/events`;
  let allowed = init.customerPrivacy.analyticsProcessingAllowed && init.customerPrivacy.marketingAllowed;
  customerPrivacy.subscribe("visitorConsentCollected", (event) => {
    allowed = event.customerPrivacy.analyticsProcessingAllowed && event.customerPrivacy.marketingAllowed;
  });

  // The cart as this page last knew it: init.data.cart is the cart when the page loaded, so adds
  // made since (quick-add buttons, AJAX forms) are merged in here, and a cart_viewed replaces it.
  let knownCart: Cart | null = init.data.cart
    ? defined({ id: init.data.cart.id ?? undefined, currency: init.data.cart.cost?.totalAmount?.currencyCode, lines: cartLines(init.data.cart.lines ?? [], origin) })
    : null;

  async function send(body: Record<string, unknown> & { cart?: Cart }): Promise<void> {
    if (!allowed) return;
    const visitorId = (await browser.cookie.get(VISITOR_COOKIE)) || undefined;
    try {
      await fetch(endpoint, {
        method: "POST",
        credentials: "include", // the proxy adds logged_in_customer_id from the storefront session
        headers: { "content-type": "application/json" },
        body: sizedBody({ ...body, visitorId }),
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
    const lines = [...(knownCart?.lines ?? [])];
    if (added) {
      // cartLine is what this add put in the cart: a variant already there gains its quantity.
      const index = lines.findIndex((l) => l.productId === added.productId && l.variantId === added.variantId);
      if (index >= 0) lines[index] = { ...lines[index], quantity: lines[index].quantity + added.quantity };
      else lines.push(added);
    }
    const currency = knownCart?.currency ?? event.data.cartLine?.cost?.totalAmount?.currencyCode;
    knownCart = defined({ id: knownCart?.id, currency, lines: lines.slice(0, 100) });
    void send({ event: "product_added_to_cart", url: event.context.document.location.href, cart: knownCart });
  });

  // A line removed (a cart drawer's remove button, say): the cart as it is now, so the service's
  // cart never keeps what the visitor took out. Shopify sends no person on cart webhooks, so this
  // and the adds are where a known shopper's cart comes from.
  analytics.subscribe("product_removed_from_cart", (event) => {
    const removed = event.data.cartLine ? lineOf(event.data.cartLine.merchandise, event.data.cartLine.quantity, origin) : null;
    if (!removed || !knownCart) return;
    const lines = knownCart.lines
      .map((l) => (l.productId === removed.productId && l.variantId === removed.variantId ? { ...l, quantity: l.quantity - removed.quantity } : l))
      .filter((l) => l.quantity > 0);
    knownCart = defined({ ...knownCart, lines });
    void send({ event: "product_removed_from_cart", url: event.context.document.location.href, cart: knownCart });
  });

  analytics.subscribe("cart_viewed", (event) => {
    const cart = event.data.cart;
    if (!cart) return;
    const currency = cart.cost.totalAmount.currencyCode;
    knownCart = defined({ id: cart.id ?? undefined, currency, lines: cartLines(cart.lines, origin) });
    void send({ event: "cart_viewed", url: event.context.document.location.href, cart: defined({ ...knownCart, total: cart.cost.totalAmount.amount }) });
  });

  analytics.subscribe("checkout_started", (event) => {
    const checkout = event.data.checkout;
    void send({
      event: "checkout_started",
      url: event.context.document.location.href,
      cart: defined({
        id: knownCart?.id ?? checkout.token ?? undefined,
        currency: checkout.currencyCode ?? undefined,
        total: checkout.totalPrice?.amount,
        lines: checkoutLines(checkout.lineItems, origin),
      }),
    });
  });
});
