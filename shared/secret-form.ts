/**
 * The form in which the proxy looks for a credential in what a provider answers
 * (proxy/upstream/provider-secrets.ts): header values and bodies are read there as latin1, one
 * character per byte, so a credential is searched for as the latin1 text of its UTF-8 bytes. Here
 * rather than in the proxy so that shared/config.ts can work out each provider's configured key in
 * this form once, when the config is built, instead of on every request.
 */

/** The shortest credential redacted (characters): below it, ordinary text would match. */
export const MIN_SECRET_CHARS = 8;

/** `s` as latin1 text of its UTF-8 bytes; `s` itself when ASCII (no allocation then). */
export function asBytes(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.from(s, 'utf8').toString('latin1');
  return s;
}

/** A credential in the form it is searched for ({@link asBytes}), or null when absent or shorter than {@link MIN_SECRET_CHARS}. */
export function secretForm(s: string | null | undefined): string | null {
  return s !== null && s !== undefined && s.length >= MIN_SECRET_CHARS ? asBytes(s) : null;
}

/**
 * The JSON-escaped form of a credential in its searched form ({@link secretForm}), as a provider's JSON error body
 * may carry it: `/` as `\/` (PHP's and some Java encoders write it so; Bedrock API keys and AWS session tokens are
 * base64, with `/`), `"`, `\` and control characters as JSON.stringify writes them. Null when `secret` is null or
 * has none of these (its plain form is then the only one). Worked out once per configured key, with its searched
 * form (shared/config.ts); searched for on error paths only.
 */
export function escapedSecretForm(secret: string | null): string | null {
  if (secret === null) return null;
  const escaped = JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/');
  return escaped === secret ? null : escaped;
}
