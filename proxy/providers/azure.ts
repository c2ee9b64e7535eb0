/**
 * Azure OpenAI adapter: Azure speaks OpenAI's chat-completions and embeddings formats, so requests are
 * re-addressed to the deployment URL with an `api-key` header and responses pass through untouched.
 * Source: https://learn.microsoft.com/en-us/azure/ai-services/openai/reference
 */
import type { OpenAIErrorBody } from '../../shared/chat.ts';
import { GatewayError } from '../errors.ts';
import { errorTypeForStatus, fallbackErrorMessage, parseJson, redactSecrets } from './anthropic.ts';
import type { Endpoint, ProviderAdapter, ProviderCall, UpstreamRequest } from './types.ts';

/** The `api-version` query value used when `providers.azure.api-version` is unset (the 2024-10-21 GA version). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The Azure OpenAI URL of a call: `{baseUrl}/openai/deployments/{deployment}/chat/completions?api-version={v}`
 * (`/embeddings` for embeddings), where deployment = `config.deployments[model] ?? model` (URL-encoded) and
 * v = `config.apiVersion ?? 2024-10-21`. A base URL that already ends in `/openai` is not doubled.
 * @throws {GatewayError} 500 `provider_not_configured` when `providers.azure.base-url` is unset.
 */
export function azureUrl(call: ProviderCall, endpoint: Endpoint): URL {
  const { config } = call;
  if (!config.baseUrl) {
    throw new GatewayError(
      500,
      'The azure provider has no endpoint: set providers.azure.base-url (e.g. https://<resource>.openai.azure.com)',
      'server_error',
      'provider_not_configured',
    );
  }
  const root = config.baseUrl.replace(/\/+$/, '').replace(/\/openai$/i, '');
  const deployment = config.deployments[call.body.model] ?? call.body.model;
  const path = endpoint === 'embeddings' ? 'embeddings' : 'chat/completions';
  const url = new URL(`${root}/openai/deployments/${encodeURIComponent(deployment)}/${path}`);
  url.searchParams.set('api-version', config.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  return url;
}

/**
 * Normalises an Azure error body to OpenAI's shape (the status is kept by the caller). Azure usually answers
 * `{"error":{"code","message",...}}` (sometimes without `type`, with a numeric-string `code`), and its API gateway
 * answers `{"statusCode","message"}`; both become `{"error":{"message","type","param","code"}}` with extra members
 * of an existing `error` object kept. Keys are redacted from messages.
 */
export function mapAzureError(status: number, body: Buffer): OpenAIErrorBody {
  const parsed = parseJson(body);
  if (isRecord(parsed) && isRecord(parsed.error)) {
    const e = parsed.error;
    return {
      error: {
        ...e,
        message: typeof e.message === 'string' ? redactSecrets(e.message) : `azure returned HTTP ${status}`,
        type: typeof e.type === 'string' && e.type ? e.type : errorTypeForStatus(status),
        param: typeof e.param === 'string' ? e.param : null,
        code: typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : null,
      },
    };
  }
  const message =
    isRecord(parsed) && typeof parsed.message === 'string' ? redactSecrets(parsed.message) : fallbackErrorMessage('azure', status, body);
  return { error: { message, type: errorTypeForStatus(status), param: null, code: null } };
}

/**
 * The Azure OpenAI provider (passthrough): `POST` to {@link azureUrl} with header `api-key: <AZURE_OPENAI_API_KEY>`
 * (no `Authorization`) and `x-ms-client-request-id: <gateway request id>`; the OpenAI-format body is sent as is.
 * Chat and embeddings. `buildRequest` throws GatewayError 500 `provider_not_configured` when the base URL or the key
 * is missing. `mapError` ({@link mapAzureError}) is available when the proxy wants normalised error bodies.
 */
export const azure: ProviderAdapter = {
  name: 'azure',
  passthrough: true,
  endpoints: ['chat', 'embeddings'],

  buildRequest(call: ProviderCall, endpoint: Endpoint): UpstreamRequest {
    const url = azureUrl(call, endpoint);
    if (!call.config.apiKey) {
      throw new GatewayError(500, 'The azure provider has no API key: set AZURE_OPENAI_API_KEY', 'server_error', 'provider_not_configured');
    }
    return {
      url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        'api-key': call.config.apiKey,
        'x-ms-client-request-id': call.requestId,
      },
      body: Buffer.from(JSON.stringify(call.body)),
    };
  },

  mapError: mapAzureError,
};
