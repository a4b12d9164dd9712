import { createRequestHandler, writeReadableStreamToWritable, type ServerBuild } from "@remix-run/node";
import compression from "compression";
import express, { type Request as ExpressRequest, type Response as ExpressResponse, type NextFunction } from "express";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import { createServer, type Server } from "node:http";
import { answerHealthRequest } from "./health-endpoints.server";
import { STOREFRONT_POLICY } from "../storefront/storefront-policy";
import { readNodeBodyLimited, type BodyRefusal } from "./body.server";
import { closeGracefully } from "./close.server";
import { answerUnexpectedError } from "./errors.server";
import { receiveNodeWebhook } from "../webhooks/ingest.server";

export interface RunningHttpServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Every body Remix may read (the login form, the admin's forms, storefront events): the admin's forms are a few KiB. */
export const FORM_BODY_BYTES = 256 * 1024;

/**
 * The header deadline is checked every CONNECTIONS_CHECK_MS (Node's default, 30 s, made a 10 s
 * deadline hold up to 40 s): a connection that has not sent its headers in HEADERS_TIMEOUT_MS is
 * answered 408 within HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_MS.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const CONNECTIONS_CHECK_MS = 1_000;

/** How long a connection closed after an answer still reads (and drops) what the client sends. */
const CLOSE_LINGER_MS = 2_000;

/**
 * The Remix app behind Express: static assets from the client build, webhook deliveries to the
 * same handler as the Remix route (app/webhooks/ingest.server.ts) without a Fetch Request, and
 * everything else to Remix, with its body already read within its bound.
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
  // POST only: anything else reaches the Remix route, which answers 405. Reads its own body, within
  // the same budget (app/webhooks/receive.server.ts), after its cheap header checks.
  app.post("/webhooks", receiveNodeWebhook);
  app.use(readBodyFirst);
  // Pages, scripts and styles gzip-compressed (the admin's JS is ~4x smaller).
  app.use(compression());
  app.use("/assets", express.static(path.join(options.clientDir, "assets"), { immutable: true, maxAge: "1y" }));
  app.use(express.static(options.clientDir, { maxAge: "1h" }));
  app.all("*", remixHandler(options.build));
  app.use(answerUnexpectedError);

  // Slow senders: Node's defaults (60 s for headers, 300 s for a request) let a trickle of bytes
  // hold a socket and its buffer for minutes. Bodies have their own shorter deadlines and budget
  // (app/server/body.server.ts).
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: 30_000, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    app,
  );
  server.on("connection", lingerOnClose);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  // Shopify waits 5 s for a webhook answer; keep-alive sockets from its retries stay usable.
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () => closeGracefully(server),
  };
}

/**
 * A refusal (413, 408, 503) closes the connection while the client may still be sending its body.
 * Node destroys the socket as soon as the answer is written; with unread bytes in its buffer the
 * kernel then resets the connection, and the client loses the answer it has not read yet. So the
 * socket is half-closed instead (FIN after the answer), and what still arrives is read and dropped
 * (Node's request dump: no memory held) until the client closes or CLOSE_LINGER_MS pass.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    if (this.writable) this.end();
    const destroy = () => this.destroy();
    const timer = setTimeout(destroy, CLOSE_LINGER_MS);
    this.once("close", () => clearTimeout(timer));
    this.once("end", destroy);
  };
}

type Refusal = { status: number; type: string; body: string; headers?: Record<string, string> };

const REFUSALS: Record<BodyRefusal, Refusal> = {
  "too-large": { status: 413, type: "text/plain; charset=utf-8", body: "Payload Too Large" },
  busy: { status: 503, type: "text/plain; charset=utf-8", body: "Busy, try again later", headers: { "retry-after": "5" } },
  "too-slow": { status: 408, type: "text/plain; charset=utf-8", body: "Body not received in time" },
};

/** Storefront events answer in JSON, a body past the bound with 400 (app/server/storefront-proxy.server.ts). */
const json = (status: number, error: string, headers?: Record<string, string>): Refusal => ({
  status, type: "application/json", body: JSON.stringify({ error }), headers: { "cache-control": "no-store", ...headers },
});
const STOREFRONT_REFUSALS: Record<BodyRefusal, Refusal> = {
  "too-large": json(400, `Body larger than ${STOREFRONT_POLICY.maxEventBytes} bytes`),
  busy: json(503, "Busy, try again later", { "retry-after": "5" }),
  "too-slow": json(408, "Body not received in time"),
};

/**
 * Any request with a body, on any route but /webhooks, authenticated or not, has it read here
 * within its bound and its client's share before anything else sees it (the library's login()
 * reads the whole form with no limit of its own). A refusal closes the connection: the rest of
 * the body is never read.
 */
function readBodyFirst(req: ExpressRequest, res: ExpressResponse, next: NextFunction): void {
  if (!hasBody(req)) return next();
  const storefront = req.path === "/proxy/events";
  readNodeBodyLimited(req, storefront ? STOREFRONT_POLICY.maxEventBytes : FORM_BODY_BYTES).then((read) => {
    if (read.ok) {
      res.locals.body = read.body;
      return next();
    }
    const refusal = (storefront ? STOREFRONT_REFUSALS : REFUSALS)[read.refusal];
    res.writeHead(refusal.status, { "content-type": refusal.type, connection: "close", ...refusal.headers });
    res.end(refusal.body);
  }, next);
}

function hasBody(req: ExpressRequest): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/**
 * Remix's Express adapter (@remix-run/express's createRequestHandler, which it does not export in
 * parts), with the body read by readBodyFirst instead of from the request stream.
 */
function remixHandler(build: ServerBuild) {
  const handle = createRequestHandler(build, "production");
  return async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    try {
      const response = await handle(remixRequest(req, res));
      res.statusMessage = response.statusText;
      res.status(response.status);
      for (const [key, value] of response.headers.entries()) res.append(key, value);
      if (response.body) await writeReadableStreamToWritable(response.body, res);
      else res.end();
    } catch (error) {
      next(error);
    }
  };
}

function remixRequest(req: ExpressRequest, res: ExpressResponse): Request {
  // As the adapter: the host's port from X-Forwarded-Host or Host, req.hostname for the name.
  const portOf = (host: string | undefined) => Number.parseInt(host?.split(":")[1] ?? "", 10);
  const port = [portOf(req.get("x-forwarded-host")), portOf(req.get("host"))].find(Number.isSafeInteger);
  const url = new URL(`${req.protocol}://${req.hostname}${port ? `:${port}` : ""}${req.originalUrl}`);
  const headers = new Headers();
  for (const [key, values] of Object.entries(req.headers)) {
    if (values === undefined) continue;
    for (const value of Array.isArray(values) ? values : [values]) headers.append(key, value);
  }
  // Loaders and actions are aborted once no answer can be written (closed before finishing).
  let controller: AbortController | undefined = new AbortController();
  res.on("finish", () => (controller = undefined));
  res.on("close", () => controller?.abort());
  const body = res.locals.body as Buffer | undefined;
  const withBody = req.method !== "GET" && req.method !== "HEAD" && body !== undefined;
  return new Request(url.href, { method: req.method, headers, signal: controller.signal, body: withBody ? new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength) : undefined });
}
