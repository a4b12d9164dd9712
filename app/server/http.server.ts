import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import compression from "compression";
import express from "express";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Server } from "node:http";
import { answerHealthRequest } from "../observability/endpoints.server";
import { closeGracefully } from "./close.server";
import { answerUnexpectedError } from "./errors.server";
import { receiveNodeWebhook } from "../webhooks/ingest.server";

export interface RunningHttpServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/**
 * The Remix app behind Express: static assets from the client build, webhook deliveries to the
 * same handler as the Remix route (app/webhooks/ingest.server.ts) without a Fetch Request, and
 * everything else to Remix.
 */
export async function startHttpServer(options: {
  build: ServerBuild;
  /** The client build (build/client): static assets. */
  clientDir: string;
  port: number;
  host: string;
}): Promise<RunningHttpServer> {
  const app = express();
  app.disable("x-powered-by");
  // Health and metrics first: a load balancer's probes never reach Remix.
  app.use((req, res, next) => {
    if (!answerHealthRequest(req, res)) next();
  });
  // Pages, scripts and styles gzip-compressed (the admin's JS is ~4x smaller); webhook answers are
  // a few bytes and Shopify waits on them, so they are left as they are.
  app.use(compression({ filter: (req, res) => !req.path.startsWith("/webhooks") && compression.filter(req, res) }));
  app.use("/assets", express.static(path.join(options.clientDir, "assets"), { immutable: true, maxAge: "1y" }));
  app.use(express.static(options.clientDir, { maxAge: "1h" }));
  // POST only: anything else reaches the Remix route, which answers 405.
  app.post("/webhooks", receiveNodeWebhook);
  app.all("*", createRequestHandler({ build: options.build, mode: "production" }));
  app.use(answerUnexpectedError);

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port, options.host, () => resolve(s));
    s.once("error", reject);
  });
  // Shopify waits 5 s for a webhook answer; keep-alive sockets from its retries stay usable.
  server.keepAliveTimeout = 65_000;
  // Slow senders: Node's defaults (60 s for headers, 300 s for a request) let a trickle of bytes
  // hold a socket and its buffer for minutes. Bodies read before authentication have their own
  // shorter deadline and a global budget (app/server/body.server.ts).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () => closeGracefully(server),
  };
}
