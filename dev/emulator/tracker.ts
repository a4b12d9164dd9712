/**
 * The website tracker the snippet loads (§2.7, §6.6: "the website tracker snippet produces page
 * events"), served by the emulator itself when started with `trackerScripts: true`, so a browser
 * test can load it without the CDN. The script keeps a visitor id (cookie `_mk_vid`) and a
 * revenue hash (cookie `_ls`, §4.5's "revenue tracking hash") and posts a `pageView` to
 * /tracker/collect, which stores it as a page event of the account.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export interface TrackerHit {
  at: string;
  accountId: number;
  event: string;
  url: string;
  visitor: string;
}

const SCRIPT = `(function () {
  var me = document.querySelector('script[data-account][src*="/tracker/"]');
  if (!me || window.__marketingTracker) return;
  function cookie(name) {
    var m = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return m ? decodeURIComponent(m[1]) : null;
  }
  var visitor = cookie("_mk_vid");
  if (!visitor) {
    visitor = "v" + Math.random().toString(36).slice(2, 12);
    document.cookie = "_mk_vid=" + visitor + "; path=/; max-age=31536000; SameSite=Lax";
  }
  if (!cookie("_ls")) document.cookie = "_ls=ls-" + visitor + "; path=/; max-age=2592000; SameSite=Lax";
  var account = me.getAttribute("data-account");
  window.__marketingTracker = { account: account, visitor: visitor };
  fetch(new URL("/tracker/collect", me.src).href, {
    method: "POST",
    mode: "no-cors",
    keepalive: true,
    body: JSON.stringify({ account: account, event: "pageView", url: location.href, visitor: visitor }),
  });
})();
`;

/** Handles /tracker/* requests; false when the path is not one of them. */
export function trackerRoute(
  pathname: string,
  method: string,
  raw: string,
  res: ServerResponse,
  record: (hit: Omit<TrackerHit, "at">) => boolean,
  _req?: IncomingMessage,
): boolean {
  if (method === "GET" && /^\/tracker\/(modern|legacy)\.js$/.test(pathname)) {
    res.writeHead(200, { "content-type": "text/javascript", "cache-control": "no-cache", "access-control-allow-origin": "*" });
    res.end(SCRIPT);
    return true;
  }
  if (method === "POST" && pathname === "/tracker/collect") {
    let ok: boolean;
    try {
      const body = JSON.parse(raw) as { account?: unknown; event?: unknown; url?: unknown; visitor?: unknown };
      ok = record({ accountId: Number(body.account), event: String(body.event ?? "pageView"), url: String(body.url ?? ""), visitor: String(body.visitor ?? "") });
    } catch {
      ok = false;
    }
    res.writeHead(ok ? 204 : 400, { "access-control-allow-origin": "*" });
    res.end();
    return true;
  }
  return false;
}
