import { describe, expect, it } from "vitest";
import { exitIframeAllowed } from "~/shopify/exit-iframe";

const APP = "https://app.example.net";
const exit = (target: string) => `${APP}/auth/exit-iframe?shop=victim.myshopify.com&exitIframe=${encodeURIComponent(target)}`;
const allowed = (target: string, shop: string | null = null) => exitIframeAllowed(exit(target), APP, shop);

describe("where /auth/exit-iframe may send the browser", () => {
  it("allows Shopify's admin, on its origin exactly", () => {
    expect(allowed("https://admin.shopify.com/store/victim/apps")).toBe(true);
    expect(allowed("https://admin.shopify.com")).toBe(true);
  });

  it("refuses hosts that only begin like Shopify's admin, or are not it", () => {
    for (const target of [
      "https://admin.shopify.com.evil.example.com/",
      "https://admin.shopify.com.evil.example.com/store/victim",
      "https://admin.shopify.com@evil.example.com/",
      "https://admin.shopify.community/",
      "https://admin.shopify.com:8443/",
      "http://admin.shopify.com/",
      "https://evil.example.com/?https://admin.shopify.com",
    ]) {
      expect(allowed(target), target).toBe(false);
    }
  });

  it("allows the app's own pages, absolute or relative, and nothing that only begins like the app", () => {
    expect(allowed(`${APP}/app`)).toBe(true);
    expect(allowed("/auth?shop=victim.myshopify.com")).toBe(true);
    expect(allowed("https://app.example.net.evil.example.com/")).toBe(false);
    expect(allowed("//evil.example.com/x")).toBe(false);
  });

  it("allows a shop's own admin only for the shop the session token proves, never from the query", () => {
    expect(allowed("https://victim.myshopify.com/admin/apps", "victim.myshopify.com")).toBe(true);
    expect(allowed("https://victim.myshopify.com/admin/apps")).toBe(false);
    expect(allowed("https://victim.myshopify.com/admin/apps", "other.myshopify.com")).toBe(false);
    expect(allowed("https://victim.myshopify.com.evil.example.com/", "victim.myshopify.com")).toBe(false);
    // No shop authenticated is no shop at all, not one named "null".
    expect(allowed("https://null/admin")).toBe(false);
  });

  it("refuses script and data URLs, and a target that is not a URL", () => {
    // A blob: URL carries the origin of the page that made it: only its scheme tells it apart.
    for (const target of ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "http://[::1", `blob:${APP}/0b1c`, "blob:https://admin.shopify.com/0b1c"]) {
      expect(allowed(target), target).toBe(false);
    }
  });

  it("refuses a missing or repeated target", () => {
    expect(exitIframeAllowed(`${APP}/auth/exit-iframe`, APP, null)).toBe(false);
    const twice = `${APP}/auth/exit-iframe?exitIframe=${encodeURIComponent("https://admin.shopify.com")}&exitIframe=${encodeURIComponent("https://evil.example.com")}`;
    expect(exitIframeAllowed(twice, APP, null)).toBe(false);
  });

  it("allows plain http only for the app itself (a development app URL)", () => {
    expect(exitIframeAllowed(exit("http://localhost:3000/app"), "http://localhost:3000", null)).toBe(true);
  });
});
