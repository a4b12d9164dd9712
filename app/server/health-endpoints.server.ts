import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { config } from "../config.server";
import { logger } from "../logger.server";
import { closeGracefully } from "./close.server";
import { messageOf } from "../errors";
import { readiness } from "../observability/health.server";
import { registry } from "../observability/metrics.server";
import { refreshQueueGauges } from "../pipeline/queue-gauges.server";

export const HEALTH_PATHS = ["/healthz", "/readyz", "/metrics"] as const;

/**
 * Answers /healthz, /readyz and /metrics; returns false for any other path. The app's Express
 * server and the worker's own small server both use it.
 */
export function answerHealthRequest(req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? "").split("?")[0];
  if (!(HEALTH_PATHS as readonly string[]).includes(path)) return false;
  if (req.method !== "GET" && req.method !== "HEAD") {
    send(res, 405, "text/plain", "Method Not Allowed", { allow: "GET, HEAD" });
    return true;
  }
  if (path === "/healthz") send(res, 200, "application/json", JSON.stringify({ status: "ok" }));
  else if (path === "/readyz") {
    void readiness().then((r) => send(res, r.ready ? 200 : 503, "application/json", JSON.stringify(r)));
  } else if (!metricsAllowed(req)) send(res, 403, "text/plain", "Forbidden: send Authorization: Bearer <METRICS_TOKEN>");
  else {
    void refreshQueueGauges()
      .catch((error: unknown) => logger().warn({ err: messageOf(error) }, "metrics: the queue gauges could not be read"))
      .then(() => registry.metrics())
      .then((text) => send(res, 200, registry.contentType, text));
  }
  return true;
}

/**
 * With METRICS_TOKEN set, /metrics needs it as a bearer token; without it, only a direct
 * connection from this machine (no proxy header at all) may read it: the slowest shops' domains are in it.
 */
function metricsAllowed(req: IncomingMessage): boolean {
  const token = config().metricsToken;
  if (token) {
    const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "");
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  const from = req.socket.remoteAddress ?? "";
  const loopback = from === "::1" || from.startsWith("127.") || from.startsWith("::ffff:127.");
  return loopback && !Object.keys(req.headers).some((name) => PROXY_HEADER.test(name));
}

/**
 * Headers a proxy adds (X-Forwarded-*, X-Real-IP, Forwarded, Via, the CDNs' client-address
 * headers): a loopback connection carrying any of them was relayed, from anywhere.
 */
const PROXY_HEADER = /^(x-forwarded|forwarded|via$|x-real-ip$|x-client-ip$|client-ip$|true-client-ip$|x-cluster-client-ip$|cf-connecting-ip$|fastly-client-ip$|x-original-forwarded-for$|x-envoy-external-address$)/;

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", "content-length": Buffer.byteLength(body), ...headers });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/** The worker process's own server: health and metrics only. */
export async function startHealthServer(port: number, host: string): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (!answerHealthRequest(req, res)) send(res, 404, "text/plain", "Not Found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return {
    server,
    url: `http://${shown}:${address.port}`,
    close: () => closeGracefully(server),
  };
}
