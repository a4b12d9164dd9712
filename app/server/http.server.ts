import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import express from "express";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Server } from "node:http";
import { answerUnexpectedError } from "../webhooks/errors.server";

export interface RunningHttpServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/**
 * The Remix app behind Express: static assets from the client build, everything else (webhooks
 * included: app/routes/webhooks.tsx) to Remix. A webhook path in front of Remix was measured
 * (bench/README.md) and did not earn a second copy of the route's logic.
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
  app.use("/assets", express.static(path.join(options.clientDir, "assets"), { immutable: true, maxAge: "1y" }));
  app.use(express.static(options.clientDir, { maxAge: "1h" }));
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
