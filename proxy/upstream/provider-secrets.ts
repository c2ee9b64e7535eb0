/**
 * The gateway's provider credentials in what a provider answers. A provider may repeat the credential
 * it was sent: OpenAI's 401 says "Incorrect API key provided: sk-proj-****abcd" (masked), and a
 * misbehaving provider or a proxy in front of it may echo it whole, in the error body or a response
 * header. Those credentials never leave the gateway, so an attempt's secrets are redacted:
 *
 * - the secrets: the provider's configured key (`providers.<name>` from the environment; Bedrock's
 *   session token with SigV4 keys, `x-amz-security-token`, else its bearer token), in its searched form once at load (`ProviderConfig.secret`, ../../shared/secret-form.ts),
 *   which is what the gateway sends with its own key; and, when the client brought its own under
 *   Svc-Auth, the credential the attempt sent (the token of `Authorization`, else `x-api-key` or
 *   Azure's `api-key`), each at least `MIN_SECRET_CHARS` (8) characters (a shorter one would rewrite
 *   ordinary text);
 * - every response header value the client gets, on every answer: a value shorter than the shortest
 *   secret costs one length comparison (most do: provider keys are 40-170 characters), a longer one an
 *   `includes` per secret;
 * - a passed-through error body (non-2xx), with the key shapes of `redactSecrets` besides;
 * - an error body the gateway maps into the client's dialect, before the transport's `mapError` reads it
 *   (./mapped.ts), likewise;
 * - the provider's text a stream translator puts in the error event it ends a failed stream with
 *   (`call.redactor`, ./exchange.ts `redactProviderText`, through {@link redactAttemptText}).
 * A successful body is never read for this: it stays the provider's bytes (or its mapped stream), streamed as they
 * come, and the stream translators redact only when they fail. So an error event inside a passed-through 2xx
 * stream (Messages → Anthropic, chat → OpenAI, Groq, Gemini) reaches the client as the provider sent it, a
 * choice: scanning every passed-through stream would cost every successful request a search per piece. The log
 * redacts it (the record's error and body, through {@link redactAttemptText}, off the request path, only when the
 * stream carried an error event: ../observers/log-record.ts).
 *
 * Each secret is replaced by {@link REDACTED}, on the error paths also in its JSON-escaped form (`/` as `\/`: a
 * base64 key in a JSON error body; worked out at load for the configured key, `ProviderConfig.secretEscaped`), and,
 * when the text holds a backslash or a percent sign, in any JSON escaping or percent-encoding of its characters, mixed
 * as they may be (`sk\u002dprovider…`, `\u0073\u006B…`, `sk%2Dprovider…`: `encodedSecretPattern`,
 * ../../shared/secret-form.ts), so neither the client, nor the log (admin parses the JSON body, undoing the
 * escapes) gets a credential a provider echoed encoded. The match replaces the encoded run in place, so the rest of
 * an error body stays as the provider wrote it.
 * Matching is on bytes: header values and bodies are
 * read as latin1 (one character per byte), so a body that is not UTF-8 keeps its other bytes.
 */
import type { ProviderConfig } from '../../shared/config.ts';
import { asBytes, encodedSecretPattern, escapedSecretForm, secretForm } from '../../shared/secret-form.ts';
import type { ProviderCall, UpstreamRequest } from '../providers/types.ts';
import { redactSecrets } from '../translators/shared/provider-errors.ts';

/** What a redacted credential becomes. */
export const REDACTED = '***';

/**
 * The provider's configured key in its searched form: worked out once when the config was built
 * (`config.secret`); a config written by hand (tests) has it worked out here.
 */
export function configuredSecret(config: ProviderConfig | undefined): string | null {
  if (config === undefined) return null;
  const secret = config.secret;
  return secret !== undefined ? secret : secretForm(config.apiKey);
}

/**
 * The credential an attempt sent upstream: the token of its `Authorization` (after the scheme), else
 * its `x-api-key` (Anthropic) or `api-key` (Azure); null when none, or too short to redact. Asked only
 * when the client brought its own credential (Svc-Auth): with the gateway's key, what is sent is the
 * provider's configured key ({@link configuredSecret}).
 */
export function sentCredential(up: UpstreamRequest | null): string | null {
  if (up === null) return null;
  const h = up.headers;
  const authorization = h.authorization;
  if (authorization !== undefined) {
    const space = authorization.indexOf(' ');
    return secretForm(space < 0 ? authorization : authorization.slice(space + 1));
  }
  return secretForm(h['x-api-key'] ?? h['api-key']);
}

/**
 * The client's own credential the attempt sent (`call.clientCredential`: Svc-Auth), in its searched
 * form; null when the gateway's key was sent (then {@link configuredSecret} is the one to redact).
 */
export function clientSecret(call: ProviderCall | null, up: UpstreamRequest | null): string | null {
  return call === null || call.clientCredential == null ? null : sentCredential(up);
}

/** A response header value (latin1) with secrets `a` and `b` (either null) replaced by {@link REDACTED}. */
export function redactHeaderValue(value: string, a: string | null, b: string | null): string {
  if (a !== null && value.includes(a)) value = value.replaceAll(a, REDACTED);
  if (b !== null && value.includes(b)) value = value.replaceAll(b, REDACTED);
  return value;
}

/**
 * The JSON-escaped form of `secret`, one of an attempt's secrets (`escapedSecretForm`): the provider's configured
 * key's was worked out at load (`config.secretEscaped`), another's (a client's own) is worked out here; null when
 * `secret` is null or has nothing JSON escapes. Error paths only.
 */
function escapedOf(secret: string | null, config: ProviderConfig | undefined): string | null {
  if (secret === null) return null;
  if (config !== undefined && config.secretEscaped !== undefined && secret === config.secret) return config.secretEscaped;
  return escapedSecretForm(secret);
}

/**
 * `text` (latin1) less secrets `a` and `b` (either null), each as written and JSON-escaped ({@link escapedOf}), then
 * in any other encoding ({@link patternOf}) when `text` holds an escape or a percent sign.
 */
function withoutSecrets(text: string, a: string | null, b: string | null, config: ProviderConfig | undefined): string {
  text = withoutSecret(text, a, escapedOf(a, config));
  text = withoutSecret(text, b, escapedOf(b, config));
  // Only a backslash or a percent sign can hide a credential from the two exact searches above.
  if (!text.includes('\\') && !text.includes('%')) return text;
  if (a !== null) text = text.replace(patternOf(a, config), REDACTED);
  if (b !== null) text = text.replace(patternOf(b, config), REDACTED);
  return text;
}

/** `text` less `secret` (null: nothing) and its JSON-escaped form `escaped` (null: none). */
function withoutSecret(text: string, secret: string | null, escaped: string | null): string {
  if (secret === null) return text;
  if (text.includes(secret)) text = text.replaceAll(secret, REDACTED);
  if (escaped !== null && text.includes(escaped)) text = text.replaceAll(escaped, REDACTED);
  return text;
}

/** The provider's configured key's {@link encodedSecretPattern}, built on its first error, by config. */
const configuredPatterns = new WeakMap<ProviderConfig, { secret: string; pattern: RegExp }>();

/**
 * The pattern of `secret` in any encoding (`encodedSecretPattern`: JSON escapes, percent-encoding, mixed), one of an
 * attempt's secrets: the configured key's is kept with its config after its first use; another's (a client's own
 * credential) is built here. Error paths only, and only for text holding an escape or a percent sign.
 */
function patternOf(secret: string, config: ProviderConfig | undefined): RegExp {
  if (config === undefined || secret !== configuredSecret(config)) return encodedSecretPattern(secret);
  const kept = configuredPatterns.get(config);
  if (kept !== undefined && kept.secret === secret) return kept.pattern;
  const pattern = encodedSecretPattern(secret);
  configuredPatterns.set(config, { secret, pattern });
  return pattern;
}

/**
 * A provider's error body with secrets `a` and `b` (either null) replaced by {@link REDACTED}, as written,
 * JSON-escaped (`/` as `\/`: an error body is JSON, and an encoder may escape a base64 key's `/`) or in any other
 * JSON escaping or percent-encoding of its characters ({@link withoutSecrets}), then the key shapes `redactSecrets`
 * knows (`sk-…`, `sk-ant-…` → `sk-***`).
 * @param config the attempt's provider config: where the configured key's escaped form was worked out.
 * @returns `body` itself when nothing was redacted, else a new buffer (shorter or longer).
 */
export function redactErrorBody(body: Buffer, a: string | null, b: string | null, config?: ProviderConfig): Buffer {
  const text = body.toString('latin1');
  const out = redactSecrets(withoutSecrets(text, a, b, config));
  return out === text ? body : Buffer.from(out, 'latin1');
}

/**
 * A provider's text (a JS string, as a stream translator parsed it, or JSON it passes on: Bedrock's chunk) with
 * secrets `a` and `b` (either null) replaced by {@link REDACTED}, as written, JSON-escaped or percent-encoded
 * ({@link withoutSecrets}), matched on UTF-8 bytes as everything here is.
 * @returns `text` itself when neither occurs in it.
 */
function redactText(text: string, a: string | null, b: string | null, config: ProviderConfig | undefined): string {
  const bytes = asBytes(text);
  const out = withoutSecrets(bytes, a, b, config);
  if (out === bytes) return text;
  return bytes === text ? out : Buffer.from(out, 'latin1').toString('utf8');
}

/**
 * `text` less the credentials of the attempt of `call` that sent `up`: the client's own
 * ({@link clientSecret}) and the provider's configured key ({@link configuredSecret}); asked only on
 * error paths (a stream translator's failure).
 */
export function redactAttemptText(text: string, call: ProviderCall | null, up: UpstreamRequest | null): string {
  const sent = clientSecret(call, up);
  const config = call?.config;
  const key = configuredSecret(config);
  return redactText(text, sent ?? key, secondSecret(sent, key), config);
}

/**
 * An attempt's second secret to redact beside its first (`sent ?? key`): the provider's configured key `key`
 * when the client's own credential `sent` was sent and differs from it, else null (one secret only).
 */
export function secondSecret(sent: string | null, key: string | null): string | null {
  return sent === null || sent === key ? null : key;
}
