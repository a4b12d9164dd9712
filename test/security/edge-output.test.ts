import { afterAll, beforeAll, expect, it } from "vitest";
import { appProcessEnv, spawnApp, type AppProcess } from "../support/processes";
import { mintSessionToken } from "../support/session-token";

// Issue 48, item 5: the production server process writes nothing but the masking logger's lines.
// URLs no route serves, carrying emails and tokens, and every line of its stdout and stderr read.
const lines: string[] = [];
let app: AppProcess;

beforeAll(async () => {
  // Nothing listens there: nothing is delivered.
  app = await spawnApp({ env: appProcessEnv({ marketingApiUrl: "http://127.0.0.1:9" }), timeoutMs: 120_000, onLine: (l) => lines.push(l) });
}, 150_000);
afterAll(() => app?.stop());

it("URLs carrying emails and tokens reach the output masked, through the logger only, and the visitor sees the app's own not-found page", async () => {
  const token = await mintSessionToken({ shop: "edge-output.myshopify.com" });
  const secrets = ["grace.hopper@example.com", "ada.lovelace@example.org", "shpat_0123456789abcdef0123456789abcdef", token];
  const paths = [
    "/unsubscribe/grace.hopper@example.com",
    "/unsubscribe/grace.hopper%40example.com",
    `/no/such/page?email=ada.lovelace%40example.org&access_token=shpat_0123456789abcdef0123456789abcdef`,
    `/nothing-here/${token}`,
  ];
  const pages: string[] = [];
  for (const path of paths) {
    const res = await fetch(`${app.url}${path}`);
    expect(res.status, path).toBe(404);
    pages.push(await res.text());
  }
  // Each request is logged once, masked (handleError in app/entry.server.tsx).
  await expect.poll(() => lines.filter((l) => l.includes("No route matches URL")).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(paths.length);
  const output = lines.join("\n");
  for (const s of [...secrets, "grace.hopper%40example.com", "ada.lovelace%40example.org"]) expect(output).not.toContain(s);
  // Every line is a JSON log line: nothing was printed around the logger.
  expect(lines.filter((l) => !/^\{".*\}$/.test(l))).toEqual([]);
  // The app's own page (the page echoes the visitor's own URL in Remix's hydration data: theirs, not the log's).
  for (const page of pages) expect(page).toContain("Page not found");
}, 120_000);
