// The tracker snippet sits in the embed's inert <template> in every storefront page's <head>. Only
// complete <script> elements are published: an unclosed <script>, <style>, <textarea>, <title> or
// "<!--" from the service would keep the template from closing and blank every page, so such a
// snippet is refused (with a reason support can read) and the storefront is left as it was.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createMarketingClient } from "~/services/marketing/client.server";
import { trackerMetafieldValue, UnsafeSnippet } from "~/storefront/tracker.server";
import { startEmulator, type Emulator } from "../../dev/emulator/server";
import { renderEmbed } from "../storefront/render";
import { launchChromium } from "./support";

const KEY = "mk_live_key_123";
let browser: Browser;
let emulator: Emulator;

beforeAll(async () => {
  browser = await launchChromium();
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await browser?.close();
  await emulator?.close();
});

/** A product page with the embed in its <head>, as Chromium sees it. */
async function productPage(snippet: string) {
  const embed = await renderEmbed({ type: "json", value: JSON.stringify(trackerMetafieldValue({ mode: "modern", snippet }, KEY)) }, "/assets/");
  const page = await browser.newPage();
  try {
    await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><title>Store</title>${embed}<link rel="stylesheet" href="data:text/css,"></head><body><h1>Red scarf</h1><p>$25.00</p></body></html>`);
    return await page.evaluate(() => ({
      h1: document.querySelector("h1")?.textContent ?? null,
      loader: document.querySelectorAll('script[src$="tracker-loader.js"]').length,
      scriptsInTemplate: (document.getElementById("marketing-sync-tracker") as HTMLTemplateElement | null)?.content.querySelectorAll("script").length ?? 0,
    }));
  } finally {
    await page.close();
  }
}

const BROKEN: Record<string, string> = {
  "an unclosed <script>": `<script type="module" src="https://cdn.example/modern.js" data-account="7" async>`,
  "an unclosed comment": `<!-- tracker v2\n<script type="module" src="https://cdn.example/modern.js" data-account="7" async></script>`,
  "an unclosed <style>": `<style>.x{}<script src="https://cdn.example/t.js"></script>`,
  "an unclosed <textarea>": `<script src="https://cdn.example/t.js"></script><textarea>`,
  "an unclosed <title>": `<title>Tracker<script src="https://cdn.example/t.js"></script>`,
  "a self-closed <script/>": `<script src="https://cdn.example/t.js" />`,
  "a comment inside a script's text": `<script><!--<script>window.t=1</script>`,
  "text around the scripts": `Tracker: <script src="https://cdn.example/t.js"></script>`,
};

it.each(Object.entries(BROKEN))("a snippet with %s is refused, naming why", (_name, snippet) => {
  expect(() => trackerMetafieldValue({ mode: "modern", snippet }, KEY)).toThrow(UnsafeSnippet);
  expect(() => trackerMetafieldValue({ mode: "modern", snippet }, KEY)).toThrow(/snippet from the marketing service is refused.*not published/);
});

it("every mode's snippet from the service is published, and the product page renders with the loader", async () => {
  const client = createMarketingClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, retries: 0 });
  for (const mode of ["modern", "legacy", "compat"] as const) {
    const { snippet } = await client.websiteTracker(mode);
    expect(await productPage(snippet)).toEqual({ h1: "Red scarf", loader: 1, scriptsInTemplate: mode === "compat" ? 2 : 1 });
  }
});

it("an inline script, and a quoted attribute holding '>', are published and the page still renders", async () => {
  const snippet = `<script>window.mkq = window.mkq || []; if (1 > 0) mkq.push(["init", 7]);</script>\n  <SCRIPT async data-note="a > b" src='https://cdn.example/t.js'></SCRIPT >`;
  expect(await productPage(snippet)).toEqual({ h1: "Red scarf", loader: 1, scriptsInTemplate: 2 });
});
