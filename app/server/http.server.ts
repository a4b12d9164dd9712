import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Server } from "node:http";
import { answerUnexpectedError } from "../webhooks/errors.server";
import { receiveRawWebhook } from "../webhooks/ingest.server";
import { MAX_WEBHOOK_BYTES } from "../webhooks/receive.server";

export const BUILD_DIR = path.resolve(import.meta.dirname, "../../build");

export interface RunningHttpServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** The Remix app behind Express: static assets from the client build, everything else to Remix. */
export async function startHttpServer(options: {
  build: ServerBuild;
  port: number;
  host: string;
  /** Serve /webhooks in front of Remix (default); false sends it through the Remix route. */
  fastWebhooks?: boolean;
}): Promise<RunningHttpServer> {
  const app = express();
  app.disable("x-powered-by");
  app.use("/assets", express.static(path.join(BUILD_DIR, "client/assets"), { immutable: true, maxAge: "1y" }));
  app.use(express.static(path.join(BUILD_DIR, "client"), { maxAge: "1h" }));
  // Webhooks skip Remix: the same verification and recording as app/routes/webhooks.tsx, without
  // the cost of Remix's request machinery on the path Shopify times (5 s, and every ms counts).
  if (options.fastWebhooks !== false) {
    app.post("/webhooks", express.raw({ type: () => true, limit: MAX_WEBHOOK_BYTES }), acknowledgeWebhook);
    app.use("/webhooks", rejectUnreadableBody);
  }
  app.all("*", createRequestHandler({ build: options.build, mode: "production" }));
  app.use(answerUnexpectedError);

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port, options.host, () => resolve(s));
    s.once("error", reject);
  });
  // Shopify waits 5 s for a webhook answer; keep-alive sockets from its retries stay usable.
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function loadServerBuild(): Promise<ServerBuild> {
  const file = path.join(BUILD_DIR, "server/index.js");
  return (await import(/* @vite-ignore */ file)) as ServerBuild;
}

const acknowledgeWebhook: RequestHandler = (req, res, next) => {
  const headers = { get: (name: string) => req.get(name) ?? null };
  const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0); // the HMAC covers these bytes
  receiveRawWebhook(headers, rawBody).then(({ status, body }) => void res.status(status).send(body), next);
};

/** Body-parser's refusals (413 too large, 400 unreadable) as plain answers, never a stack. */
const rejectUnreadableBody: ErrorRequestHandler = (error: { status?: number }, _req, res, next) => {
  if (error.status && error.status >= 400 && error.status < 500) {
    res.status(error.status).send(error.status === 413 ? "Payload too large" : "Bad request");
  } else next(error);
};
