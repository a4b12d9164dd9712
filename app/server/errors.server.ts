import type { ErrorRequestHandler } from "express";
import { logger } from "../logger.server";

/**
 * Express's last error handler: whatever escaped a route is logged through pino with its stack,
 * and answered with a status and a plain line, never the stack Express's default handler shows
 * outside NODE_ENV=production.
 */
export const answerUnexpectedError: ErrorRequestHandler = (error: { status?: number; statusCode?: number }, req, res, next) => {
  const status = error?.status ?? error?.statusCode;
  if (res.headersSent) return next(error);
  if (status && status >= 400 && status < 500) {
    res.status(status).type("text/plain").send("Bad request");
    return;
  }
  logger().error({ err: error, method: req.method, path: req.path }, "request failed");
  res.status(500).type("text/plain").send("Internal error");
};
