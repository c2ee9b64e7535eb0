/**
 * The Anthropic transport: `POST {baseUrl}/messages` (and `/messages/count_tokens`) with `x-api-key` and
 * `anthropic-version`. It speaks the `anthropic-messages` wire format at chat completions and Responses (translated),
 * at Messages and at count_tokens (the client's own format: its bytes go as they came); error bodies
 * (`{"type":"error","error":{"type","message"}}`) are mapped to the neutral error for chat clients and pass through
 * untouched to Messages clients. For a Messages client the request carries the client's `anthropic-*` headers
 * (`anthropic-version`, every `anthropic-beta` value) and `x-stainless-*` headers as sent, and, when the client
 * brings its own credential (`Svc-Auth`), its `x-api-key` and/or `Authorization` instead of the gateway's key.
 * Sources: https://docs.anthropic.com/en/api/messages, https://docs.anthropic.com/en/api/messages-count-tokens,
 * https://docs.anthropic.com/en/api/versioning, https://docs.anthropic.com/en/api/beta-headers,
 * https://docs.anthropic.com/en/api/errors.
 */
import type { EndpointName } from '../endpoints/types.ts';
import { providerKeyMissing } from '../errors.ts';
import { unreadableProviderError } from '../translators/shared/provider-errors.ts';
import { isRecord, parseJson } from '../translators/shared/values.ts';
import type { ProviderError, Translator } from '../translators/types.ts';
import { anthropicError } from '../translators/wire/anthropic-messages.ts';
import { assertProviderConfigured } from './not-configured.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from './types.ts';

/** The `anthropic-version` header value sent when the client sent none. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Name prefixes (lower-case) of the client headers sent on to Anthropic. */
const FORWARDED_PREFIXES = ['anthropic-', 'x-stainless-'] as const;

/** True when `name` starts with the lower-case `prefix` (letters and `-`), in any case, without allocating. */
function hasPrefix(name: string, prefix: string): boolean {
  if (name.length <= prefix.length) return false;
  // `| 0x20` lower-cases ASCII letters and leaves `-` (0x2d) as it is.
  for (let i = 0; i < prefix.length; i++) if ((name.charCodeAt(i) | 0x20) !== prefix.charCodeAt(i)) return false;
  return true;
}

/**
 * Copies the client's `anthropic-*` and `x-stainless-*` headers from `raw` (`req.rawHeaders` pairs) into
 * `headers` under lower-case names, values as sent; a header sent more than once is joined with `, ` (the list form
 * `anthropic-beta` takes). Nothing when `raw` is null.
 */
export function copyAnthropicHeaders(raw: readonly string[] | null, headers: Record<string, string>): void {
  if (raw === null) return;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!hasPrefix(name, FORWARDED_PREFIXES[0]) && !hasPrefix(name, FORWARDED_PREFIXES[1])) continue;
    const key = name.toLowerCase();
    const previous = headers[key];
    headers[key] = previous === undefined ? raw[i + 1]! : `${previous}, ${raw[i + 1]!}`;
  }
}

/**
 * Maps a non-2xx Anthropic body (`{"type":"error","error":{"type","message"},"request_id"}`) to the neutral error
 * (see `anthropicError`); the HTTP status is kept by the caller. Non-JSON bodies keep their (truncated) text as message.
 */
export function mapAnthropicError(status: number, body: Buffer): ProviderError {
  const parsed = parseJson(body);
  if (isRecord(parsed) && isRecord(parsed.error)) return anthropicError(parsed.error, status);
  return unreadableProviderError('anthropic', status, body);
}

/** The path after the base URL at each endpoint kind the transport serves. */
const PATHS: Readonly<Partial<Record<EndpointName, string>>> = { chat: '/messages', messages: '/messages', count_tokens: '/messages/count_tokens', responses: '/messages' };

/**
 * Upstream URLs by base URL, then by endpoint kind, each made once (the base URL is fixed at start). Looked up by the
 * configured base URL string itself, so a request builds no string (a trailing-slash trim and a concatenation per
 * request measured ~0.2 µs in the bench's Messages profile).
 */
const urls = new Map<string, Partial<Record<EndpointName, URL>>>();

function urlOf(baseUrl: string, endpoint: EndpointName): URL {
  let byEndpoint = urls.get(baseUrl);
  if (byEndpoint === undefined) {
    byEndpoint = {};
    urls.set(baseUrl, byEndpoint);
  }
  let url = byEndpoint[endpoint];
  if (url === undefined) {
    url = new URL(baseUrl.replace(/\/+$/, '') + PATHS[endpoint]!);
    byEndpoint[endpoint] = url;
  }
  return url;
}

/**
 * The Anthropic transport (see the module comment). `buildRequest` throws GatewayError 400 `provider_not_configured`
 * without a base URL (./not-configured.ts), and 503 `provider_key_missing` when `ANTHROPIC_API_KEY` is unset and the
 * client brought no credential, before translating the body. Headers: `content-type`, `accept`, `accept-encoding: identity` (the log
 * reads the answer), the credential, the client's forwarded headers, and `anthropic-version: 2023-06-01` unless the
 * client sent its own.
 */
export const anthropic: ProviderTransport = {
  name: 'anthropic',
  wireFormats: { chat: 'anthropic-messages', messages: 'anthropic-messages', count_tokens: 'anthropic-messages', responses: 'anthropic-messages' },
  nativeErrorDialects: ['anthropic-messages'],

  buildRequest(call: ProviderCall, endpoint: EndpointName, translator: Translator): UpstreamRequest {
    const { config } = call;
    assertProviderConfigured(config, process.env);
    const credential = call.clientCredential ?? null;
    if (credential === null && !config.apiKey) {
      throw providerKeyMissing('anthropic', 'ANTHROPIC_API_KEY');
    }
    const body = translator.translateRequest(call);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      // The translators and the log read the bytes, so they must arrive uncompressed.
      'accept-encoding': 'identity',
    };
    if (credential === null) headers['x-api-key'] = config.apiKey!;
    else {
      if (credential.apiKey !== null) headers['x-api-key'] = credential.apiKey;
      if (credential.authorization !== null) headers.authorization = credential.authorization;
    }
    copyAnthropicHeaders(call.clientHeaders ?? null, headers);
    if (headers['anthropic-version'] === undefined) headers['anthropic-version'] = ANTHROPIC_VERSION;
    return { url: urlOf(config.baseUrl, endpoint), method: 'POST', headers, body };
  },

  mapError: mapAnthropicError,
};
