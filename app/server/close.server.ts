import type { Server } from "node:http";

/** How long requests under way (a webhook being recorded) may take to finish when a server stops. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Stops accepting connections, lets the requests under way finish (a webhook being recorded is
 * answered, not cut off) and closes idle keep-alive sockets; after the grace, cuts what is left.
 * The app's server and the worker's health server both close this way.
 */
export function closeGracefully(server: Server, graceMs = CLOSE_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
