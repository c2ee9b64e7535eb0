/**
 * What the translators need to know of each client dialect besides its translators: how a provider's error,
 * mapped to the neutral {@link ProviderError} by its transport, is rendered for a client of that dialect.
 * - OpenAI's dialects (chat completions, embeddings, Responses): `{"error": {message, type, param, code}}`
 *   (https://platform.openai.com/docs/guides/error-codes);
 * - Anthropic's Messages: `{"type": "error", "error": {type, message}}` with Anthropic's error types
 *   (https://docs.anthropic.com/en/api/errors).
 */
import type { OpenAIErrorBody } from '../../shared/chat.ts';
import type { Dialect, ProviderError } from './types.ts';
import { anthropicErrorBody, anthropicErrorType, type AnthropicErrorBody } from './wire/anthropic-messages.ts';

/** The error body of a dialect: OpenAI's for the OpenAI dialects, Anthropic's for `anthropic-messages`. */
export type ClientErrorBody = OpenAIErrorBody | AnthropicErrorBody;

function openAIErrorBody(error: ProviderError): OpenAIErrorBody {
  return { error };
}

/**
 * Anthropic's shape: the type is the Anthropic type the provider named (the Anthropic transport keeps it as
 * `code`), else the one of the HTTP status (400 invalid_request_error, 401 authentication_error, 403
 * permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 529
 * overloaded_error, …), else the one of the neutral type (`rate_limit_exceeded` → rate_limit_error,
 * `insufficient_quota` → billing_error, `server_error` → api_error). The message is kept.
 */
function messagesErrorBody(error: ProviderError, status?: number): AnthropicErrorBody {
  return anthropicErrorBody(anthropicErrorType(error.type, status, error.code), error.message);
}

const ERROR_RENDERERS: Readonly<Record<Dialect, (error: ProviderError, status?: number) => ClientErrorBody>> = {
  'openai-chat': openAIErrorBody,
  'openai-embeddings': openAIErrorBody,
  'anthropic-messages': messagesErrorBody,
  'openai-responses': openAIErrorBody,
};

/**
 * A provider's error, in the neutral vocabulary, as the error body a client of `dialect` reads (the HTTP status is
 * kept by the caller). `status`, when given, decides Anthropic's error type where the provider named none (a 529
 * stays `overloaded_error`); the OpenAI dialects ignore it.
 */
export function clientErrorBody(dialect: Dialect, error: ProviderError, status?: number): ClientErrorBody {
  return ERROR_RENDERERS[dialect](error, status);
}
