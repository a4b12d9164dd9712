import { check } from "@shopify/theme-check-node";
import { describe, expect, it } from "vitest";
import { renderEmbed, THEME_EXTENSION } from "./render";

describe("theme app extension", () => {
  it("passes Shopify's theme-check with zero errors", async () => {
    const offenses = await check(THEME_EXTENSION);
    const errors = offenses.filter((o) => o.severity === 0);
    expect(errors.map((o) => `${o.check}: ${o.message} (${o.uri})`)).toEqual([]);
    // Warnings are reported too; there are none today.
    expect(offenses.map((o) => `${o.check}: ${o.message}`)).toEqual([]);
  });

  it("with no metafield, or an empty snippet, the embed renders nothing and raises nothing", async () => {
    expect((await renderEmbed(undefined)).trim()).toBe("");
    expect((await renderEmbed({ type: "json", value: JSON.stringify({ mode: "modern", snippet: "", syncedAt: "2026-01-01T00:00:00Z" }) })).trim()).toBe("");
  });

  it("a snippet is rendered inert: only inside <template>, with one async loader and nothing else that runs", async () => {
    const snippet = `<script type="module" src="https://cdn.example/t.js" data-account="7" async></script>`;
    const html = await renderEmbed({ type: "json", value: JSON.stringify({ mode: "modern", snippet, syncedAt: "2026-01-01T00:00:00Z" }) });
    const template = /<template id="marketing-sync-tracker" data-mode="modern">([\s\S]*)<\/template>/.exec(html);
    expect(template?.[1]).toBe(snippet);
    const outside = html.replace(template![0], "");
    expect(outside.match(/<script\b[^>]*>/g)).toEqual([`<script src="https://cdn.shopify.example/extensions/assets/tracker-loader.js" async>`]);
  });

  it("the app's id, for Shopify's visitor API, is on the template when the metafield has one", async () => {
    const snippet = `<script src="https://cdn.example/t.js"></script>`;
    const html = await renderEmbed({ type: "json", value: JSON.stringify({ mode: "modern", snippet, appId: "7042816", syncedAt: "2026-01-01T00:00:00Z" }) });
    expect(html).toContain(`<template id="marketing-sync-tracker" data-mode="modern" data-app-id="7042816">${snippet}</template>`);
  });

  it("the theme editor's preview (request.design_mode) does not load the tracker; the live storefront does", async () => {
    const metafield = { type: "json", value: JSON.stringify({ mode: "modern", snippet: `<script type="module" src="https://cdn.example/t.js" data-account="7" async></script>`, syncedAt: "2026-01-01T00:00:00Z" }) };
    expect(await renderEmbed(metafield)).toContain("tracker-loader.js");
    const preview = await renderEmbed(metafield, undefined, { designMode: true });
    expect(preview).not.toContain("tracker-loader.js");
    expect(preview).not.toContain("cdn.example/t.js");
  });
});
