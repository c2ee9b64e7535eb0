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

/** JSON's two-character escapes (RFC 8259 §7), by the character they stand for. */
const JSON_SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Regex source matching the hex digits of `n` (`width` of them), a letter in either case. */
function hexSource(n: number, width: number): string {
  return [...n.toString(16).padStart(width, '0')].map((h) => (h >= 'a' ? `[${h}${h.toUpperCase()}]` : h)).join('');
}

/** Regex source matching the one character `c` (code unit below 0x100) as itself. */
const literalSource = (c: number): string => `\\x${c.toString(16).padStart(2, '0')}`;

/** Regex source matching a JSON escape of UTF-16 unit `u`: `\uXXXX` (either hex case), or its short escape. */
function jsonEscapeSource(u: number): string {
  const short = JSON_SHORT_ESCAPES[String.fromCharCode(u)];
  const unicode = `\\\\u${hexSource(u, 4)}`;
  return short === undefined ? unicode : `${unicode}|${[...short].map((c) => literalSource(c.charCodeAt(0))).join('')}`;
}

/** Regex source matching byte `b` (a latin1 character) as itself, JSON-escaped (ASCII only: JSON escapes code points, not bytes) or percent-encoded (`%XX`, its `%` possibly JSON-escaped). */
function byteSource(b: number): string {
  const forms = [literalSource(b), `(?:%|\\\\u0025)${hexSource(b, 2)}`];
  if (b < 0x80) forms.push(jsonEscapeSource(b));
  return `(?:${forms.join('|')})`;
}

/**
 * A global RegExp matching a credential in its searched form ({@link secretForm}: latin1 text of UTF-8 bytes) in
 * latin1 text however a provider may have encoded it, a character at a time: as itself; JSON-escaped (`\uXXXX` in
 * either hex case, a UTF-16 surrogate pair beyond the BMP, or a two-character escape such as `\/`; RFC 8259 §7);
 * percent-encoded per UTF-8 byte (`%XX` in either case, RFC 3986 §2.1), the `%` itself possibly written `\u0025`
 * (a JSON string holding a percent-encoded key). Any mix of these, so the text a JSON parser, then a percent-decoder,
 * makes of a match is the credential. Built on error paths only (a provider's error body or error event), where
 * the plain and JSON.stringify forms were looked for first.
 * @param secret a credential in its searched form, at least {@link MIN_SECRET_CHARS} characters.
 * @returns a RegExp with the `g` flag (String.prototype.replace resets its lastIndex, so it may be shared).
 */
export function encodedSecretPattern(secret: string): RegExp {
  const parts: string[] = [];
  for (const ch of Buffer.from(secret, 'latin1').toString('utf8')) {
    const bytes = [...Buffer.from(ch, 'utf8')].map(byteSource).join('');
    if (ch.charCodeAt(0) < 0x80) {
      parts.push(bytes);
      continue;
    }
    const units = [...Array(ch.length).keys()].map((i) => `\\\\u${hexSource(ch.charCodeAt(i), 4)}`).join('');
    parts.push(`(?:${bytes}|${units})`);
  }
  return new RegExp(parts.join(''), 'g');
}
