import { PassThrough } from "node:stream";
import { createReadableStreamFromReadable, type ActionFunctionArgs, type EntryContext, type LoaderFunctionArgs } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { logger } from "./logger.server";
import { addDocumentResponseHeaders } from "./shopify.server";

const STREAM_TIMEOUT_MS = 5_000;

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
) {
  addDocumentResponseHeaders(request, responseHeaders);
  const userAgent = request.headers.get("user-agent");
  // Bots get the whole document at once; browsers get it streamed as soon as the shell is ready.
  const readyEvent = userAgent && isbot(userAgent) ? "onAllReady" : "onShellReady";

  return new Promise<Response>((resolve, reject) => {
    const { pipe, abort } = renderToPipeableStream(
      <RemixServer context={remixContext} url={request.url} abortDelay={STREAM_TIMEOUT_MS} />,
      {
        [readyEvent]: () => {
          const body = new PassThrough();
          responseHeaders.set("Content-Type", "text/html");
          resolve(
            new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }),
          );
          pipe(body);
        },
        onShellError: reject,
        onError: (error: unknown) => {
          responseStatusCode = 500;
          logger().error({ err: error, path: new URL(request.url).pathname }, "render failed");
        },
      },
    );
    setTimeout(abort, STREAM_TIMEOUT_MS + 1_000);
  });
}

/**
 * Remix's hook for errors thrown by loaders, actions and rendering: logged through pino with the
 * stack (the answer itself never carries one: the production build sends a generic message).
 */
export function handleError(error: unknown, { request }: LoaderFunctionArgs | ActionFunctionArgs): void {
  if (request.signal.aborted) return; // the client went away; not an error of ours
  logger().error({ err: error, method: request.method, path: new URL(request.url).pathname }, "request failed");
}
