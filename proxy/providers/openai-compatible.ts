/**
 * The transport of the providers that speak OpenAI's chat-completions and embeddings formats natively: openai,
 * groq, mistral, deepseek, xai, together, fireworks, openrouter, ollama and gemini (Google's OpenAI-compatible
 * endpoint). The request goes to `{baseUrl}/chat/completions` (or `/embeddings`) with `Authorization: Bearer
 * <provider key>`; with the identity translator the body is the client's bytes and the answer goes back
 * untouched, errors included, except Gemini's: its compatibility endpoint wraps OpenAI's error object in a
 * one-element array, which OpenAI's SDKs cannot read, so its errors are mapped for every client. A Messages
 * client's request is translated to chat completions and goes to the same URL; its errors are mapped from OpenAI's
 * shape to Anthropic's. A Responses client's request is translated to chat completions too (its errors already
 * are in OpenAI's shape). OpenAI itself speaks the Responses API
 * natively (`openai-responses` at `responses`, `input_tokens` and `stored_response`): `POST {baseUrl}/responses`,
 * `/responses/input_tokens`, and the stored-response calls (`GET`/`DELETE {baseUrl}/responses/{id}`, `…/input_items`,
 * `POST …/cancel`), with the client's `x-codex-*`/`openai-*` headers sent on (./openai-headers.ts). A provider whose
 * key variable is unset is refused (never sent a request without credentials) unless the client brings its own
 * (`Svc-Auth`: its `Authorization` goes as sent, or its `x-api-key` as `Authorization: Bearer <key>`); ollama takes
 * no key and sends none.
 * Sources: each provider's OpenAI-compatibility documentation (base URLs in shared/providers.ts); OpenAI's error
 * shape: https://platform.openai.com/docs/guides/error-codes; OpenAI API reference, "Responses"; Gemini's array
 * as its users quote it (`[{"error": {"code": 400, "message", "status": "INVALID_ARGUMENT"}}]`, e.g.
 * SuzumiyaAkizuki/ComfyUI-NewBie-LLM-Formatter#3).
 */
import { PROVIDERS, type ProviderName } from '../../shared/providers.ts';
import type { EndpointName } from '../endpoints/types.ts';
import { providerKeyMissing } from '../errors.ts';
import { errorTypeForStatus, redactSecrets, unreadableProviderError } from '../translators/shared/provider-errors.ts';
import { isRecord, parseJson } from '../translators/shared/values.ts';
import type { Dialect, ProviderError, Translator, WireFormat } from '../translators/types.ts';
import { assertProviderConfigured } from './not-configured.ts';
import { copyOpenAIHeaders } from './openai-headers.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from './types.ts';

/** The path after the base URL at each endpoint kind, for the OpenAI-format wire formats. */
const PATHS: Readonly<Partial<Record<EndpointName, string>>> = { chat: '/chat/completions', embeddings: '/embeddings', messages: '/chat/completions', responses: '/chat/completions' };

/** The path after the base URL at each endpoint kind a provider serves in the Responses format (OpenAI). */
const RESPONSES_PATHS: Readonly<Partial<Record<EndpointName, string>>> = { responses: '/responses', input_tokens: '/responses/input_tokens', stored_response: '/responses' };

/** The wire format at each endpoint kind of a provider that speaks only OpenAI's chat and embeddings formats. */
const WIRE_FORMATS: Readonly<Partial<Record<EndpointName, WireFormat>>> = { chat: 'openai-chat', embeddings: 'openai-embeddings', messages: 'openai-chat', responses: 'openai-chat' };

/** The dialects whose error shape (`{"error": {message, type, param, code}}`) these providers' error bodies have. */
const OPENAI_ERROR_DIALECTS: readonly Dialect[] = ['openai-chat', 'openai-embeddings', 'openai-responses'];

/**
 * The providers whose error bodies are not OpenAI's object though their answers are: Gemini wraps it in a
 * one-element array, which the `openai` SDK reports as "400 status code (no body)". Their errors are mapped
 * ({@link mapOpenAIError}) for OpenAI-dialect clients too.
 */
const WRAPPED_ERRORS: ReadonlySet<ProviderName> = new Set(['gemini']);

/** OpenAI's own: the Responses endpoint kinds in the Responses format, natively. */
export const OPENAI_NATIVE: Readonly<Partial<Record<EndpointName, WireFormat>>> = {
  responses: 'openai-responses',
  input_tokens: 'openai-responses',
  stored_response: 'openai-responses',
};

/**
 * Maps an OpenAI-shaped error body (`{"error": {message, type, param, code}}`; Gemini's compatibility endpoint wraps
 * it in a one-element array) to the neutral error, keeping the provider's extra members; a body without that shape
 * keeps its text as message, type by status. A numeric `code` beside a string `status` (Google's: 400 and
 * `INVALID_ARGUMENT`) gives the status name as code, what a client can tell errors of one HTTP status apart by.
 * Keys are redacted from messages.
 */
export function mapOpenAIError(provider: string, status: number, body: Buffer): ProviderError {
  let parsed = parseJson(body);
  if (Array.isArray(parsed) && parsed.length > 0) parsed = parsed[0];
  if (isRecord(parsed) && isRecord(parsed.error)) {
    const e = parsed.error;
    return {
      ...e,
      message: typeof e.message === 'string' && e.message ? redactSecrets(e.message) : `${provider} returned HTTP ${status}`,
      type: typeof e.type === 'string' && e.type ? e.type : errorTypeForStatus(status),
      param: typeof e.param === 'string' ? e.param : null,
      code: typeof e.code === 'string' ? e.code : typeof e.status === 'string' ? e.status : typeof e.code === 'number' ? String(e.code) : null,
    };
  }
  return unreadableProviderError(provider, status, body);
}

/**
 * The upstream URL of a call at `endpoint` for a provider at `base`: made once per base and endpoint (the base URL is
 * fixed at start) and kept in `cache`, except a stored-response call's, whose path holds the response id.
 */
function urlOf(cache: Map<string, URL>, base: string, endpoint: EndpointName, wireFormat: WireFormat, call: ProviderCall): URL {
  const path = (wireFormat === 'openai-responses' ? RESPONSES_PATHS : PATHS)[endpoint]!;
  if (call.resource) return new URL(base + path + call.resource.path);
  const href = base + path;
  let url = cache.get(href);
  if (!url) {
    url = new URL(href);
    cache.set(href, url);
  }
  return url;
}

/**
 * Creates the transport of one OpenAI-compatible provider serving `endpoints` (OpenAI's wire formats at each;
 * Messages and Responses through their translators to chat completions), with `native` overriding the wire format
 * at the endpoint kinds it speaks natively (OpenAI: {@link OPENAI_NATIVE}). `buildRequest` throws GatewayError 400
 * `provider_not_configured` when the config has no base URL (only a config built by hand: `providers:` gives each a
 * default; ./not-configured.ts), and 503 `provider_key_missing` when the provider needs a key
 * (`PROVIDERS[name].keyEnv`), has none, and the client brought none.
 */
export function openAICompatible(
  name: ProviderName,
  endpoints: readonly EndpointName[] = ['chat', 'embeddings', 'messages', 'responses'],
  native: Readonly<Partial<Record<EndpointName, WireFormat>>> = {},
): ProviderTransport {
  const urlCache = new Map<string, URL>();
  const keyEnv = PROVIDERS[name].keyEnv;
  const wireFormats: Partial<Record<EndpointName, WireFormat>> = {};
  for (const endpoint of endpoints) wireFormats[endpoint] = native[endpoint] ?? WIRE_FORMATS[endpoint];
  return {
    name,
    wireFormats,
    nativeErrorDialects: WRAPPED_ERRORS.has(name) ? [] : OPENAI_ERROR_DIALECTS,
    buildRequest(call: ProviderCall, endpoint: EndpointName, translator: Translator): UpstreamRequest {
      assertProviderConfigured(call.config, process.env);
      const url = urlOf(urlCache, call.config.baseUrl, endpoint, translator.wireFormat, call);
      const credential = call.clientCredential ?? null;
      if (credential === null && !call.config.apiKey && keyEnv !== null) throw providerKeyMissing(name, keyEnv);
      const body = translator.translateRequest(call);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'content-length': String(body.length),
        accept: call.stream ? 'text/event-stream' : 'application/json',
        'accept-encoding': 'identity',
      };
      if (credential !== null) headers.authorization = credential.authorization ?? `Bearer ${credential.apiKey!}`;
      else if (call.config.apiKey) headers.authorization = `Bearer ${call.config.apiKey}`;
      if (translator.wireFormat === 'openai-responses') copyOpenAIHeaders(call.clientHeaders ?? null, headers, credential !== null);
      return { url, method: call.resource?.method ?? 'POST', headers, body };
    },
    mapError: (status, body) => mapOpenAIError(name, status, body),
  };
}
