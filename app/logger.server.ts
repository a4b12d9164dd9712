import pino from "pino";
import { config } from "./config.server";

/**
 * Structured logs. Keys, tokens and whole customer records must never reach them: the redact
 * list below is the safety net, the rule is to log ids and counts only.
 */
export const REDACT_PATHS = [
  "apiKey",
  "serviceKey",
  "accessToken",
  "authorization",
  "headers.authorization",
  "*.apiKey",
  "*.accessToken",
  "*.authorization",
  "body",
  "payload",
  "*.body",
  "*.payload",
];

let root: pino.Logger | undefined;

export function logger(): pino.Logger {
  root ??= pino({
    level: config().logLevel,
    base: { app: "marketing-sync" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
  });
  return root;
}
