/**
 * The gateway's provider credentials in what a provider answers. A provider may repeat the credential
 * it was sent: OpenAI's 401 says "Incorrect API key provided: sk-proj-****abcd" (masked), and a
 * misbehaving provider or a proxy in front of it may echo it whole, in the error body or a response
 * header. Those credentials never leave the gateway, so an attempt's secrets are redacted:
 *
 * - the secrets: the credential the gateway sent (the token of `Authorization`, else `x-api-key`
 *   or Azure's `api-key`; a client's own under Svc-Auth is redacted too) and the provider's
 *   configured key (`providers.<name>` from the environment), each at least {@link MIN_SECRET_CHARS}
 *   characters (a shorter one would rewrite ordinary text);
 * - every response header value the client gets, on every answer (one `includes` per value and secret);
 * - a passed-through error body (non-2xx), with the key shapes of `redactSecrets` besides;
 * - an error body the gateway maps into the client's dialect, before the transport's `mapError` reads it
 *   (./mapped.ts), likewise;
 * - the provider's text a stream translator puts in the error event it ends a failed stream with
 *   (`call.redactor`, ./exchange.ts `redactProviderText`, through {@link redactAttemptText}).
 * A successful body is never read for this: it stays the provider's bytes (or its mapped stream), streamed as they
 * come, and the stream translators redact only when they fail.
 *
 * Each secret is replaced by {@link REDACTED}. Matching is on bytes: header values and bodies are
 * read as latin1 (one character per byte), so a body that is not UTF-8 keeps its other bytes.
 */
import type { UpstreamRequest } from '../providers/types.ts';
import { redactSecrets } from '../translators/shared/provider-errors.ts';

/** What a redacted credential becomes. */
export const REDACTED = '***';

/** The shortest credential redacted (characters): below it, ordinary text would match. */
const MIN_SECRET_CHARS = 8;

/** `s` as latin1 text of its UTF-8 bytes (how header values and bodies are read here); `s` itself when ASCII. */
function asBytes(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.from(s, 'utf8').toString('latin1');
  return s;
}

function usable(s: string | null | undefined): string | null {
  return s !== null && s !== undefined && s.length >= MIN_SECRET_CHARS ? asBytes(s) : null;
}

/**
 * The credential an attempt sent upstream: the token of its `Authorization` (after the scheme), else
 * its `x-api-key` (Anthropic) or `api-key` (Azure); null when none, or too short to redact.
 */
export function sentCredential(up: UpstreamRequest | null): string | null {
  if (up === null) return null;
  const h = up.headers;
  const authorization = h.authorization;
  if (authorization !== undefined) {
    const space = authorization.indexOf(' ');
    return usable(space < 0 ? authorization : authorization.slice(space + 1));
  }
  return usable(h['x-api-key'] ?? h['api-key']);
}

/** The provider's configured key when it is a secret apart from `sent` (see {@link sentCredential}); else null. */
export function configuredKey(apiKey: string | null | undefined, sent: string | null): string | null {
  const key = usable(apiKey);
  return key === sent ? null : key;
}

/** A response header value (latin1) with secrets `a` and `b` (either null) replaced by {@link REDACTED}. */
export function redactHeaderValue(value: string, a: string | null, b: string | null): string {
  if (a !== null && value.includes(a)) value = value.replaceAll(a, REDACTED);
  if (b !== null && value.includes(b)) value = value.replaceAll(b, REDACTED);
  return value;
}

/**
 * A provider's error body with secrets `a` and `b` (either null) replaced by {@link REDACTED}, then
 * the key shapes `redactSecrets` knows (`sk-…`, `sk-ant-…` → `sk-***`).
 * @returns `body` itself when nothing was redacted, else a new buffer (shorter or longer).
 */
export function redactErrorBody(body: Buffer, a: string | null, b: string | null): Buffer {
  const text = body.toString('latin1');
  let out = text;
  if (a !== null) out = out.replaceAll(a, REDACTED);
  if (b !== null) out = out.replaceAll(b, REDACTED);
  out = redactSecrets(out);
  return out === text ? body : Buffer.from(out, 'latin1');
}

/**
 * A provider's text (a JS string, as a stream translator parsed it) with secrets `a` and `b` (either null)
 * replaced by {@link REDACTED}, matched on UTF-8 bytes as everything here is.
 * @returns `text` itself when neither occurs in it.
 */
function redactText(text: string, a: string | null, b: string | null): string {
  const bytes = asBytes(text);
  let out = bytes;
  if (a !== null && out.includes(a)) out = out.replaceAll(a, REDACTED);
  if (b !== null && out.includes(b)) out = out.replaceAll(b, REDACTED);
  if (out === bytes) return text;
  return bytes === text ? out : Buffer.from(out, 'latin1').toString('utf8');
}

/**
 * `text` less the credentials of the attempt that sent `up` ({@link sentCredential}) and the provider's
 * configured key `apiKey` ({@link configuredKey}), worked out when asked (error paths only: a stream
 * translator's failure).
 */
export function redactAttemptText(text: string, up: UpstreamRequest | null, apiKey: string | null | undefined): string {
  const sent = sentCredential(up);
  const key = configuredKey(apiKey, sent);
  return redactText(text, sent ?? key, sent === null ? null : key);
}
