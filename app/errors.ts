/** What an error says, for a log line or a stored reason (anything thrown, not only Errors). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
