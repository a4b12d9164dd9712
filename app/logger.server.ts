import pino from "pino";
import { config } from "./config.server";
import { CENSOR, scrub, scrubString } from "./scrub";

export { scrub, scrubString } from "./scrub";

/**
 * Structured logs: keys, tokens and whole customer records must never reach them. Two layers:
 * pino's fast path redaction of the known top-level places, then scrub (./scrub.ts) over every
 * logged object.
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
let toStderr = false;

/** Commands whose standard output is their result (the CLI's JSON, tables) log to stderr. */
export function logToStderr(): void {
  toStderr = true;
  root = undefined;
}

export function logger(): pino.Logger {
  root ??= pino(
    {
    level: config().logLevel,
    base: { app: "marketing-sync" },
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    formatters: { log: (obj) => scrub(obj) as Record<string, unknown> },
    hooks: {
      // Messages are ours, but a message built from an error text may carry an address.
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === "string" ? scrubString(a) : a)) as Parameters<typeof method>);
      },
    },
    },
    toStderr ? pino.destination(2) : undefined,
  );
  return root;
}

/** For tests that change LOG_LEVEL between cases. */
export function resetLoggerForTests(): void {
  root = undefined;
}
