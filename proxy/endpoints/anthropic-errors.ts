/**
 * The error shape of the Messages kinds: a gateway error as Anthropic answers errors,
 * `{"type":"error","error":{"type":"<anthropic type>","message":"…"}}`, the type following the
 * HTTP status as Anthropic's do (400 invalid_request_error, 401 authentication_error, 403
 * permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 500/502
 * api_error, 503 overloaded_error, 504 timeout_error), so the Anthropic SDKs and Claude Code read
 * and retry them as they would Anthropic's own.
 * Source: Anthropic API reference, "Errors" (https://docs.anthropic.com/en/api/errors).
 */
import type { ErrorShape, GatewayError } from '../errors.ts';
import { anthropicErrorBody, anthropicErrorTypeForStatus, type AnthropicErrorBody } from '../translators/wire/anthropic-messages.ts';

/**
 * Anthropic's error type for a gateway error: by status, except a stalled request body (408:
 * `timeout_error`) and a 503 that waiting will not cure (`provider_key_missing`, the operator must
 * set a key: `api_error`, which the SDKs do not retry as they retry `overloaded_error`).
 */
export function anthropicTypeOf(err: GatewayError): string {
  if (err.status === 408) return 'timeout_error';
  if (err.code === 'provider_key_missing') return 'api_error';
  return anthropicErrorTypeForStatus(err.status);
}

/** `{"type":"error","error":{"type","message"}}` of a gateway error (its `Retry-After` and other headers are sent as they are). */
export const anthropicErrorShape: ErrorShape = (err): AnthropicErrorBody => anthropicErrorBody(anthropicTypeOf(err), err.message);
