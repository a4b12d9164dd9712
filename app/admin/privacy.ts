/** Personal data minimised for display: "jane.doe@example.com" → "j•••@example.com". */
export function maskEmail(email: string | null | undefined): string | null {
  if (!email) return null;
  const at = email.lastIndexOf("@");
  if (at < 1) return "•••";
  return `${email[0]}•••${email.slice(at)}`;
}

/** Replaces every e-mail address in a text (service messages may quote them). */
export function maskEmailsIn(text: string | null | undefined): string | null {
  if (!text) return text ?? null;
  return text.replace(/[^\s"'<>(),;:]+@[^\s"'<>(),;:]+\.[A-Za-z]{2,}/g, (m) => maskEmail(m) ?? "•••");
}
