/*
 * Marketing Sync tracker loader (theme app embed). Loaded async: it never holds up parsing or DOMContentLoaded.
 * 1. Waits for the visitor's consent (Shopify's Customer Privacy API): analytics and marketing.
 * 2. Then turns the inert <template id="marketing-sync-tracker"> into live, async scripts.
 * 3. Copies the tracker's revenue hash (`_ls`: the landing URL's query or the tracker's cookie)
 *    into the cart's attributes, so the order carries it (Shopify turns them into note_attributes).
 *    Once per hash and cart (Shopify's `cart` cookie): after an order the next cart gets it too.
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
  }

  function readCookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : null;
  }

  var copying = null; // the hash and cart being copied: start() and each script's load both ask

  function copyRevenueHash() {
    var hash = new URLSearchParams(location.search).get("_ls") || readCookie("_ls");
    if (!hash || !/^[\w.-]{1,200}$/.test(hash)) return;
    var copy = hash + " " + (readCookie("cart") || "");
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
            // The cart now exists (Shopify creates one when there was none): remembered with it.
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
