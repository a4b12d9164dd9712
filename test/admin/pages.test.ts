import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPipelineHarness, customerBody, type PipelineHarness } from "../support/pipeline";
import { actionData, loadData, openPage, postForm, routeData, type TokenKind } from "./support";

const A = "admin-a.myshopify.com";
const B = "admin-b.myshopify.com";

let h: PipelineHarness;
beforeAll(async () => {
  h = await startPipelineHarness();
  // Both merchants open the app once (token exchange, install recorded).
  for (const shop of [A, B]) expect((await openPage(h.app.url, shop, "/app")).status).toBe(200);
});
afterAll(() => h.close());

describe("explore", () => {
  it("shows formats", async () => {
    const r = await loadData(h.app.url, A, "/app/settings");
    console.log(r.status, JSON.stringify(await routeData(r, "routes/app.settings")));
    const p = await postForm(h.app.url, A, "/app/connection", { intent: "connect", apiKey: "wrong-key-12345" });
    console.log(p.status, JSON.stringify(await actionData(p)));
  });
});
