import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { config } from "../config.server";

// AES-256-GCM with a random nonce; "v1:" leaves room to rotate the scheme or the key later.
const VERSION = "v1";

export function encryptSecret(plain: string, key: Buffer = config().encryptionKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64")}`;
}

export function decryptSecret(sealed: string, key: Buffer = config().encryptionKey): string {
  const [version, payload] = sealed.split(":", 2);
  if (version !== VERSION || !payload) throw new Error("stored secret has an unknown format");
  const raw = Buffer.from(payload, "base64");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
}
