/**
 * API keys: `sk-svc-` followed by 32 random bytes in base64url (256 bits), stored and compared only
 * as their hex SHA-256.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Prefix of every key the gateway issues. */
export const API_KEY_PREFIX = 'sk-svc-';

/** A new random API key (`sk-svc-` + 43 base64url characters, 256 bits of entropy). */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Hex SHA-256 of a key (64 characters), the only form in which keys are stored or sent to proxies.
 * Uses the one-shot `crypto.hash` (Node ≥ 20.12), about 3× cheaper than a `createHash` object.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex SHA-256 digests (false when lengths differ). */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}

/**
 * Extracts the key from an `Authorization: Bearer <key>` header value.
 * @returns the key, or null when the header is missing or not a Bearer token.
 */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}
