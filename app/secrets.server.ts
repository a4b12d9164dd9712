import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { config } from "./config.server";

/**
 * Secrets at rest (a shop's marketing-service key, Shopify access tokens): AES-256-GCM with a
 * random nonce, the shop and the secret's purpose as associated data (a ciphertext copied to
 * another shop's row does not open), and the id of the key that sealed it, so that during a
 * rotation ENCRYPTION_KEY_PREVIOUS still opens what the new key has not re-sealed yet.
 *
 *   v2:<key id>:<base64 of nonce ‖ tag ‖ ciphertext>
 *
 * "v1:" (the first scheme: no key id, no associated data) is still read; `npm run cli --
 * reencrypt-keys` rewrites it, and anything sealed with the previous key, as v2.
 */
const V1 = "v1";
const V2 = "v2";

export type SecretPurpose = "service-key" | "shopify-token";

export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretError";
  }
}

/** A short, non-reversible id of a key (the first 8 hex digits of its SHA-256). */
export function keyId(key: Buffer): string {
  return createHash("sha256").update("marketing-sync key id\0").update(key).digest("hex").slice(0, 8);
}

function keys(): { current: Buffer; previous?: Buffer } {
  const cfg = config();
  return { current: cfg.encryptionKey, previous: cfg.encryptionKeyPrevious };
}

function associatedData(shop: string, purpose: SecretPurpose): Buffer {
  return Buffer.from(`marketing-sync\0${purpose}\0${shop}`, "utf8");
}

export function encryptSecret(plain: string, shop: string, purpose: SecretPurpose = "service-key", key: Buffer = keys().current): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(associatedData(shop, purpose));
  const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${V2}:${keyId(key)}:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64")}`;
}

export function decryptSecret(sealed: string, shop: string, purpose: SecretPurpose = "service-key"): string {
  const { current, previous } = keys();
  const parts = sealed.split(":");
  if (parts[0] === V2 && parts.length === 3) {
    const key = [current, previous].find((k) => k && keyId(k) === parts[1]);
    if (!key) throw new SecretError(`stored secret was sealed with key ${parts[1]}, which is neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS`);
    return open(Buffer.from(parts[2], "base64"), key, associatedData(shop, purpose));
  }
  if (parts[0] === V1 && parts.length === 2) {
    for (const key of [current, previous]) {
      if (!key) continue;
      try {
        return open(Buffer.from(parts[1], "base64"), key);
      } catch {
        // try the other key
      }
    }
    throw new SecretError("stored secret (v1) opens with neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS");
  }
  throw new SecretError("stored secret has an unknown format");
}

/** Whether a stored value is sealed at all (sessions written before encryption hold plain tokens). */
export function isSealed(value: string): boolean {
  return /^v[12]:/.test(value);
}

/** Whether a stored secret should be re-sealed: an older scheme, or another key than the current one. */
export function needsReseal(sealed: string): boolean {
  const parts = sealed.split(":");
  return !(parts[0] === V2 && parts[1] === keyId(keys().current));
}

function open(raw: Buffer, key: Buffer, aad?: Buffer): string {
  if (raw.length < 28) throw new SecretError("stored secret is truncated");
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretError("stored secret does not open with its key (wrong key, or copied from another shop)");
  }
}
