/**
 * The Azure OpenAI transport: Azure speaks OpenAI's chat-completions, embeddings and Responses formats, so requests
 * are re-addressed to the deployment URL (Responses: the v1 API's `/openai/v1/responses`) with an `api-key` header,
 * and responses pass through untouched; its error
 * bodies are mapped, since Azure's API gateway answers errors in a shape OpenAI clients cannot read.
 * Source: https://learn.microsoft.com/en-us/azure/ai-services/openai/reference
 */
import type { EndpointName } from '../endpoints/types.ts';
import { providerKeyMissing } from '../errors.ts';
import { errorTypeForStatus, redactSecrets, unreadableProviderError } from '../translators/shared/provider-errors.ts';
import { isRecord, parseJson } from '../translators/shared/values.ts';
import type { ProviderError, Translator } from '../translators/types.ts';
import { modelPathSegment } from './model-path.ts';
import { assertProviderConfigured } from './not-configured.ts';
import { copyOpenAIHeaders } from './openai-headers.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from './types.ts';

/** The `api-version` query value used when `providers.azure.api-version` is unset (the 2024-10-21 GA version). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/**
 * The resource's root URL: `providers.azure.base-url` without trailing slashes or a final `/openai`.
 * @throws {GatewayError} 400 `provider_not_configured` when it is unset (./not-configured.ts).
 */
function azureRoot(call: ProviderCall): string {
  const { config } = call;
  assertProviderConfigured(config, process.env);
  return config.baseUrl.replace(/\/+$/, '').replace(/\/openai$/i, '');
}

/**
 * The Azure OpenAI URL of a call: `{baseUrl}/openai/deployments/{deployment}/chat/completions?api-version={v}`
 * (`/embeddings` for embeddings), where deployment = `config.deployments[model] ?? model` (URL-encoded) and
 * v = `config.apiVersion ?? 2024-10-21`. A base URL that already ends in `/openai` is not doubled.
 * @throws {GatewayError} 400 `provider_not_configured` when `providers.azure.base-url` is unset; 400 `invalid_model`
 *   when the deployment is empty, `.` or `..` (./model-path.ts: it would leave `/openai/deployments/{deployment}/`).
 */
export function azureUrl(call: ProviderCall, endpoint: EndpointName): URL {
  const { config } = call;
  const path = endpoint === 'embeddings' ? 'embeddings' : 'chat/completions';
  const deployment = modelPathSegment('azure', deploymentOf(call), call.body.model);
  const url = new URL(`${azureRoot(call)}/openai/deployments/${deployment}/${path}`);
  url.searchParams.set('api-version', config.apiVersion ?? AZURE_DEFAULT_API_VERSION);
  return url;
}

/**
 * The Azure OpenAI v1 URL of a Responses call: `{baseUrl}/openai/v1/responses`, plus a stored-response call's path
 * (`/{id}`, `/{id}/input_items`, `/{id}/cancel`, the client's query as sent). The v1 API takes no `api-version`
 * (it defaults to `v1`) and no deployment in the path: the deployment is the body's `model`.
 * Source: Microsoft Learn, "Azure OpenAI Responses API" (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses)
 * and the v1 API reference ("API version lifecycle").
 * @throws {GatewayError} 400 `provider_not_configured` when `providers.azure.base-url` is unset.
 */
export function azureResponsesUrl(call: ProviderCall): URL {
  return new URL(`${azureRoot(call)}/openai/v1/responses${call.resource?.path ?? ''}`);
}

/** The deployment a model is served by: `config.deployments[model]`, else the model's own name. */
function deploymentOf(call: ProviderCall): string {
  const { config } = call;
  // Own keys only: a model named "constructor" is a deployment name, not Object's constructor.
  return Object.hasOwn(config.deployments, call.body.model) ? config.deployments[call.body.model]! : call.body.model;
}

/**
 * Maps an Azure error body to the neutral error (the status is kept by the caller). Azure usually answers
 * `{"error":{"code","message",...}}` (sometimes without `type`, with a numeric-string `code`), and its API gateway
 * answers `{"statusCode","message"}`; both become `{message, type, param, code}` with extra members of an existing
 * `error` object kept. Keys are redacted from messages.
 */
export function mapAzureError(status: number, body: Buffer): ProviderError {
  const parsed = parseJson(body);
  if (isRecord(parsed) && isRecord(parsed.error)) {
    const e = parsed.error;
    return {
      ...e,
      message: typeof e.message === 'string' ? redactSecrets(e.message) : `azure returned HTTP ${status}`,
      type: typeof e.type === 'string' && e.type ? e.type : errorTypeForStatus(status),
      param: typeof e.param === 'string' ? e.param : null,
      code: typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : null,
    };
  }
  if (isRecord(parsed) && typeof parsed.message === 'string') {
    return { message: redactSecrets(parsed.message), type: errorTypeForStatus(status), param: null, code: null };
  }
  return unreadableProviderError('azure', status, body);
}

/**
 * A Responses body for Azure, whose v1 API reads the deployment from `model`: the client's bytes (model spliced) when
 * the deployment is the model's own name, else the body with `model` set to the deployment (`providers.azure.deployments`).
 */
function responsesBody(call: ProviderCall, translator: Translator): Buffer {
  if (call.resource) return translator.translateRequest(call);
  const deployment = deploymentOf(call);
  if (deployment === call.body.model) return translator.translateRequest(call);
  return Buffer.from(JSON.stringify({ ...call.body, model: deployment }));
}

/**
 * The Azure OpenAI transport (OpenAI's wire formats, so the identity translators): `POST` to {@link azureUrl} with
 * header `api-key: <AZURE_OPENAI_API_KEY>` (no `Authorization`) and `x-ms-client-request-id: <gateway request id>`;
 * with the client's own credential (`Svc-Auth`), its `Authorization` as sent or its `x-api-key` as `api-key`.
 * Chat and embeddings, and Messages translated to chat; the Responses API natively at its v1 path
 * ({@link azureResponsesUrl}, the client's `x-codex-*`/`openai-*` headers sent on). `buildRequest` throws GatewayError 400 `provider_not_configured` when the base URL is missing
 * and 503 `provider_key_missing` when the key is (and the client brought none). Error statuses go through
 * {@link mapAzureError}.
 */
export const azure: ProviderTransport = {
  name: 'azure',
  wireFormats: { chat: 'openai-chat', embeddings: 'openai-embeddings', messages: 'openai-chat', responses: 'openai-responses', stored_response: 'openai-responses' },

  buildRequest(call: ProviderCall, endpoint: EndpointName, translator: Translator): UpstreamRequest {
    const responsesFormat = translator.wireFormat === 'openai-responses';
    const url = responsesFormat ? azureResponsesUrl(call) : azureUrl(call, endpoint);
    const credential = call.clientCredential ?? null;
    if (credential === null && !call.config.apiKey) {
      throw providerKeyMissing('azure', 'AZURE_OPENAI_API_KEY');
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      'x-ms-client-request-id': call.requestId,
    };
    // The client's own credential: its Authorization (a Microsoft Entra token) as sent, else its x-api-key as api-key.
    if (credential === null) headers['api-key'] = call.config.apiKey!;
    else if (credential.authorization !== null) headers.authorization = credential.authorization;
    else headers['api-key'] = credential.apiKey!;
    if (!responsesFormat) return { url, method: 'POST', headers, body: translator.translateRequest(call) };
    copyOpenAIHeaders(call.clientHeaders ?? null, headers, credential !== null);
    return { url, method: call.resource?.method ?? 'POST', headers, body: responsesBody(call, translator) };
  },

  mapError: mapAzureError,
};
