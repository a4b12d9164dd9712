/*
 * Marketing Sync tracker loader (theme app embed). Loaded async: it never holds up parsing or DOMContentLoaded.
 * 1. Waits for the visitor's consent (Shopify's Customer Privacy API): analytics and marketing.
 * 2. Then turns the inert <template id="marketing-sync-tracker"> into live, async scripts.
 * 3. Copies the tracker's revenue hash (`_ls`: the landing URL's query or the tracker's cookie)
 *    into the cart's attributes, so the order carries it (Shopify turns them into note_attributes).
 *    Once per hash and cart (Shopify's `cart` cookie): after an order the next cart gets it too.
 *    Only to a cart that exists, or as one is made (an add to cart on the page): /cart/update.js
 *    without a cart makes Shopify create one (and a carts/create) for a visitor who buys nothing.
 * 4. A signup (Shopify's newsletter, contact or account form) by a visitor with that same consent:
 *    the email and phone typed go to Shopify's visitor API and, with the tracker's visitor id, to
 *    the marketing service through the app proxy (identify).
 */
(function () {
  "use strict";
  var template = document.getElementById("marketing-sync-tracker");
  if (!template || window.__marketingSyncTracker) return;
  window.__marketingSyncTracker = { started: false };

  function consentAllows(privacy) {
    return Boolean(privacy && privacy.analyticsProcessingAllowed() && privacy.marketingAllowed());
  }

  function start() {
    if (window.__marketingSyncTracker.started) return;
    window.__marketingSyncTracker.started = true;
    template.content.querySelectorAll("script").forEach(function (original) {
      var script = document.createElement("script");
      for (var i = 0; i < original.attributes.length; i++) {
        script.setAttribute(original.attributes[i].name, original.attributes[i].value);
      }
      if (original.src) {
        script.async = true;
        script.addEventListener("load", copyRevenueHash);
      } else {
        script.textContent = original.textContent;
      }
      document.head.appendChild(script);
    });
    copyRevenueHash();
    watchCartAdds();
  }

  function readCookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : null;
  }

  var copying = null; // the hash and cart being copied: start() and each script's load both ask

  var HASH_KEY = "marketing-sync-ls-hash";

  /** The landing URL's hash, kept for the tab: the add to cart may come pages later. */
  function revenueHash() {
    var fromUrl = new URLSearchParams(location.search).get("_ls");
    try {
      if (fromUrl) sessionStorage.setItem(HASH_KEY, fromUrl);
      return fromUrl || sessionStorage.getItem(HASH_KEY) || readCookie("_ls");
    } catch {
      return fromUrl || readCookie("_ls");
    }
  }

  function copyRevenueHash() {
    var hash = revenueHash();
    if (!hash || !/^[\w.-]{1,200}$/.test(hash)) return;
    var cart = readCookie("cart");
    if (!cart) return; // no cart: an attribute would create one; the add that makes it calls again
    var copy = hash + " " + cart;
    if (copying === copy) return;
    try {
      if (sessionStorage.getItem("marketing-sync-ls") === copy) return;
    } catch {
      /* storage blocked: copy again, it is idempotent */
    }
    copying = copy;
    var root = (window.Shopify && window.Shopify.routes && window.Shopify.routes.root) || "/";
    fetch(root + "cart/update.js", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ attributes: { _ls: hash } }),
      credentials: "same-origin",
    })
      .then(function (response) {
        if (response.ok) {
          try {
            sessionStorage.setItem("marketing-sync-ls", hash + " " + (readCookie("cart") || ""));
          } catch {
            /* storage blocked */
          }
        }
      })
      .catch(function () {
        /* offline: the next page tries again */
      })
      .finally(function () {
        copying = null;
      });
  }

  /**
   * An add to cart made on this page (the theme's AJAX /cart/add.js or /cart/add, also those made
   * before the loader ran: buffered) is when a cart is made: the hash is copied once it answered.
   * A form that posts to /cart/add leaves the page: the next page finds the cart cookie.
   */
  function watchCartAdds() {
    if (typeof PerformanceObserver !== "function") return;
    try {
      new PerformanceObserver(function (list) {
        var added = list.getEntries().some(function (entry) {
          return /\/cart\/add(\.js)?(\?|$)/.test(new URL(entry.name, location.href).pathname + "?");
        });
        if (added) copyRevenueHash();
      }).observe({ type: "resource", buffered: true });
    } catch {
      /* resource timing unavailable: the next page copies the hash */
    }
  }

  /*
   * Shopify's visitor API on the online store: Shopify.analytics.visitor({ email, phone }, { appId })
   * (shopify.dev/docs/api/web-pixels-api/emitting-data#visitor-api; Built for Shopify 5.6.4). It
   * returns a boolean and throws on a payload it refuses. Called on the submit of the theme forms
   * where a visitor gives an email (Shopify's `form_type`: the newsletter `customer`, `contact`,
   * `create_customer`), never on a login. The form's own submission is never touched: no
   * preventDefault, every failure caught. Capture phase: a theme handler that stops the event, or
   * submits the form itself (AJAX newsletter forms), still lets this see it.
   */
  var SIGNUP_FORMS = { customer: "newsletter", contact: "contact", create_customer: "account" };
  var EMAIL_FIELDS = 'input[name="contact[email]"], input[name="customer[email]"], input[type="email"]';
  var PHONE_FIELDS = 'input[name="contact[phone]"], input[name="customer[phone]"], input[type="tel"]';

  function fieldValue(form, selector) {
    var input = form.querySelector(selector);
    return input && typeof input.value === "string" ? input.value.trim() : "";
  }

  function identify(event) {
    try {
      var form = event.target;
      if (!form || form.tagName !== "FORM") return;
      var type = form.querySelector('input[name="form_type"]');
      var kind = type && Object.prototype.hasOwnProperty.call(SIGNUP_FORMS, type.value) ? SIGNUP_FORMS[type.value] : null;
      if (!kind || !consentAllows(window.Shopify && window.Shopify.customerPrivacy)) return;
      var visitor = {};
      var email = fieldValue(form, EMAIL_FIELDS);
      var phone = fieldValue(form, PHONE_FIELDS);
      if (email.length <= 254 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) visitor.email = email;
      if (phone.length <= 30 && /^\+?[\d\s().-]*\d{4}[\d\s().-]*$/.test(phone)) visitor.phone = phone;
      if (!visitor.email && !visitor.phone) return;
      toShopify(visitor);
      toService(visitor, kind);
    } catch {
      /* whatever fails here, the form goes on */
    }
  }

  function toShopify(visitor) {
    var analytics = window.Shopify && window.Shopify.analytics;
    if (!analytics || typeof analytics.visitor !== "function") return;
    var appId = template.getAttribute("data-app-id");
    try {
      var result = appId ? analytics.visitor(visitor, { appId: appId }) : analytics.visitor(visitor);
      if (result && typeof result.then === "function") result.then(null, function () {});
    } catch {
      /* Shopify refused the payload: the form goes on */
    }
  }

  /** The same person for the service's tracker: its visitor id (`_mk_vid`) with what was typed. */
  function toService(visitor, kind) {
    var visitorId = readCookie("_mk_vid");
    if (!visitorId) return; // the tracker has not run: no visitor of its to name
    var body = { event: "visitor_identified", visitorId: visitorId, form: kind };
    if (visitor.email) body.email = visitor.email;
    if (visitor.phone) body.phone = visitor.phone;
    try {
      // keepalive: the form's submission leaves the page; the request outlives it.
      fetch(location.origin + "/apps/marketing-sync/events", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "same-origin",
        keepalive: true,
      }).catch(function () {});
    } catch {
      /* fetch unavailable */
    }
  }

  document.addEventListener("submit", identify, true);

  document.addEventListener("visitorConsentCollected", function (event) {
    var detail = event.detail || {};
    if (detail.analyticsAllowed && detail.marketingAllowed) start();
  });

  function whenPrivacyApi() {
    var shopify = window.Shopify;
    if (!shopify || typeof shopify.loadFeatures !== "function") return; // no Shopify, no consent: nothing loads
    shopify.loadFeatures([{ name: "consent-tracking-api", version: "0.1" }], function (error) {
      if (error) return;
      if (consentAllows(window.Shopify.customerPrivacy)) start();
    });
  }
  whenPrivacyApi();
})();
