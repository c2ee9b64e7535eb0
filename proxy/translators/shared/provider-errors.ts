/**
 * Helpers for turning a provider's error answer into the neutral {@link ProviderError}: the error family of
 * a status, a message from a body that is not JSON, and keeping API keys out of messages. Used by the
 * transports' error mapping and by translators for errors that arrive inside a stream or answers they cannot read.
 */
import type { MappedResponse, ProviderError, TranslatorCall } from '../types.ts';

/**
 * The error type family of an HTTP status, for errors whose body names no type: 401 authentication_error,
 * 403 permission_error, 404 not_found_error, 429 rate_limit_exceeded, 5xx server_error, else invalid_request_error.
 */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Replaces anything that looks like a provider API key (`sk-...`, `sk-ant-...`) in `text` by a mask. */
export function redactSecrets(text: string): string {
  return text.replace(/\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}/g, 'sk-***');
}

/**
 * A provider's error text as a stream translator may put it in the error event it ends a failed stream with: the
 * attempt's exact credentials redacted (`call.redactor`, whatever they look like: Groq's `gsk_…`, Gemini's `AIza…`,
 * a Bedrock API key, a client's own), then the key shapes of {@link redactSecrets}. Error paths only.
 */
export function providerErrorText(text: string, call: TranslatorCall): string {
  return redactSecrets(call.redactor ? call.redactor.redactProviderText(text) : text);
}

/** A short, secret-free message from a non-JSON error body (its first 500 characters), or a generic one when empty. */
export function fallbackErrorMessage(provider: string, status: number, body: Buffer | string): string {
  const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  return text ? redactSecrets(text.slice(0, 500)) : `${provider} returned HTTP ${status}`;
}

/** A {@link ProviderError} for an error body the provider's mapping cannot read: the body's text as message, type by status, no code. */
export function unreadableProviderError(provider: string, status: number, body: Buffer | string): ProviderError {
  return { message: fallbackErrorMessage(provider, status, body), type: errorTypeForStatus(status), param: null, code: null };
}

/**
 * The answer to an OpenAI-dialect client when the provider's 2xx body is not what the translator can read: 502,
 * `{"error": {"message", "type": "server_error", "param": null, "code": "upstream_bad_response"}}` (OpenAI's error
 * object shape, https://platform.openai.com/docs/guides/error-codes), a fresh object on each call.
 */
export function upstreamBadResponse(message: string): MappedResponse {
  return { status: 502, body: { error: { message, type: 'server_error', param: null, code: 'upstream_bad_response' } } };
}
