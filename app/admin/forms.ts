import type { ZodError } from "zod";

/** A zod error as one message per form field (the first), for inline errors. */
export function fieldErrors(error: ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.map(String).join(".") : "_form";
    out[key] ??= issue.message;
  }
  return out;
}
