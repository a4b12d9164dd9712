import { describe, expect, it } from "vitest";
import { installationFromStatus } from "~/shops/installed";

describe("what an Admin API refusal proves about the installation", () => {
  it("a refused token (401) or an unknown shop (404): the app is gone", () => {
    expect(installationFromStatus(401)).toEqual({ state: "revoked" });
    expect(installationFromStatus(404)).toEqual({ state: "revoked" });
  });

  it("a frozen (402) or locked (423) shop still has the app: a replayed app/uninstalled must not remove it", () => {
    expect(installationFromStatus(402)).toEqual({ state: "installed", scopes: null });
    expect(installationFromStatus(423)).toEqual({ state: "installed", scopes: null });
  });

  it("anything else proves nothing (asked again later)", () => {
    for (const code of [400, 403, 429, 500, 502, 503, undefined, "401", null]) expect(installationFromStatus(code), String(code)).toBeNull();
  });
});
