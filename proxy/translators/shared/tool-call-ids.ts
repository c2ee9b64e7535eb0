/**
 * Tool call ids as a provider accepts them. Mistral answers 400 unless a tool call id is exactly 9 alphanumeric
 * characters, so ids other providers (or OpenAI) made are mapped to such an id, the same one in an assistant's call
 * and in the tool result that answers it: derived from the id by SHA-256, with no state kept between requests.
 * Source: https://docs.mistral.ai/api/ (`tool_call_id`).
 */
import { createHash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `id` unchanged, or when `alnum9` (Mistral) and it is not already 9 alphanumeric characters, 9 such characters derived from it. */
export function targetToolCallId(id: string, alnum9: boolean): string {
  if (!alnum9 || /^[A-Za-z0-9]{9}$/.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[digest[i]! % ALPHABET.length];
  return out;
}
