import { startEmulator } from "/work/wt-admin/dev/emulator/server";
import { createMarketingClient } from "/work/wt-admin/app/services/marketing/client.server";
const emu = await startEmulator({ port: 0 });
const cases: Record<string, string> = {
  good: emu.apiKey,
  plugin: emu.createAccount({ pluginKey: true }).apiKey,
  inactive: emu.createAccount({ status: "inactive" }).apiKey,
  suspended: emu.createAccount({ status: "suspended" }).apiKey,
  wrong: "nope-123456",
};
for (const [name, key] of Object.entries(cases)) {
  const c = createMarketingClient({ baseUrl: emu.url, apiKey: key, retries: 0 });
  try { console.log(name, await c.authenticated(), JSON.stringify(await c.account.get())); } catch (e: any) { console.log(name, "ERR", e.kind, e.status, e.message); }
}
const c = createMarketingClient({ baseUrl: "http://127.0.0.1:1", apiKey: "x", retries: 0, timeoutMs: 2000 });
try { await c.authenticated(); } catch (e: any) { console.log("unreach", e.kind, e.message); }
await emu.close();
