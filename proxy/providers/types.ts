/**
 * The provider layer's shapes. A provider is a transport ({@link ProviderTransport}: where requests go, with which
 * credentials and signature, which wire format it speaks at each endpoint kind, how its errors read); the
 * translation between the client's dialect and that wire format is a translator (proxy/translators/). The two
 * are bound once per (endpoint kind, provider) at start (./binding.ts `ProviderBinding`), and the request path
 * holds the binding of its (endpoint kind, provider) (./index.ts `bindingFor`).
 */
import type { ProviderConfig } from '../../shared/config.ts';
import type { ProviderName } from '../../shared/providers.ts';
import type { EndpointName } from '../endpoints/types.ts';
import type { ClientCredential } from '../pipeline/headers.ts';
import type { Dialect, ProviderError, Translator, TranslatorCall, WireFormat } from '../translators/types.ts';

/**
 * What the proxy sends upstream. `url` is absolute and not changed once returned (the proxy keeps
 * per-URL state; a transport may return the same URL object every time); `headers` replace the
 * client's entirely (a transport copies the few client headers its API defines itself).
 */
export interface UpstreamRequest {
  url: URL;
  method: 'POST' | 'GET' | 'DELETE';
  headers: Record<string, string>;
  /** The serialized request body (UTF-8 JSON for most providers). */
  body: Buffer;
}

/** What a provider call needs to build its request: the translator's input plus the provider's config. */
export interface ProviderCall extends TranslatorCall {
  /** The provider's effective config: base URL, API key from the environment, deployments, region. */
  config: ProviderConfig;
  /**
   * The client's request headers as sent (`req.rawHeaders`: name, value, name, value, …; repeats
   * kept apart), for an endpoint kind whose API defines request headers a provider reads (Messages:
   * `anthropic-version`, `anthropic-beta`); null otherwise. A transport copies only the names its
   * API defines (the Anthropic transport: `anthropic-*` and `x-stainless-*`), never all of them.
   * (Optional for callers outside the request path, such as tests: absent is null.)
   */
  clientHeaders?: readonly string[] | null;
  /**
   * The client's own provider credential (it sent its service key in `Svc-Auth`): the transport
   * sends it instead of the gateway's key, which it then neither needs nor sends; null: the gateway's key.
   */
  clientCredential?: ClientCredential | null;
  /**
   * For a call on a stored resource rather than a create (the Responses API's `GET`/`DELETE
   * /responses/{id}`, `GET …/input_items`, `POST …/cancel`): the HTTP method, and the path after the
   * endpoint's own (`/resp_…/input_items?limit=2`, the client's query as sent). The body is then
   * empty. Absent: a `POST` of the body to the endpoint's path.
   */
  resource?: { method: 'GET' | 'DELETE' | 'POST'; path: string } | null;
}

/**
 * One provider's transport: addressing, credentials, signing and error mapping, nothing about formats.
 * Built once at start; `buildRequest` runs per request and must not allocate closures on its common path.
 */
export interface ProviderTransport {
  /** Config name, e.g. `anthropic`. */
  readonly name: ProviderName;
  /** The wire format the provider speaks at each endpoint kind it serves (the kinds it does not serve are absent). */
  readonly wireFormats: Readonly<Partial<Record<EndpointName, WireFormat>>>;
  /**
   * Builds the upstream request: URL, headers (credentials, signature) and the body, which it asks `translator`
   * for (`translator.translateRequest(call)`) once its own checks have passed, so a missing setting is reported
   * before a body the wire format cannot express.
   * @throws {import('../errors.ts').GatewayError} (400, `provider_not_configured`, ./not-configured.ts) when required
   *   config such as a region or base URL is missing, (503, `provider_key_missing`) when the credentials are, or what the
   *   translator throws (400).
   */
  buildRequest(call: ProviderCall, endpoint: EndpointName, translator: Translator): UpstreamRequest | Promise<UpstreamRequest>;
  /**
   * Maps an upstream error status, body and response headers (e.g. Bedrock's `x-amzn-ErrorType`) to the neutral
   * {@link ProviderError}; the client's dialect renders it. Called for the dialects not in
   * {@link nativeErrorDialects}: an OpenAI-compatible provider's errors for a Messages client, and Gemini's for every
   * client (its compatibility endpoint wraps OpenAI's error object in a one-element array, which OpenAI's SDKs cannot
   * read). The body it gets has the attempt's credentials and the key shapes `redactSecrets` knows redacted already
   * (proxy/upstream/mapped.ts, proxy/upstream/provider-secrets.ts). Absent: every error body passes through (less the
   * attempt's credentials) as the provider wrote it.
   */
  mapError?(status: number, body: Buffer, headers?: Record<string, string | string[] | undefined>): ProviderError;
  /**
   * The client dialects whose error shape the provider's error bodies already have (Anthropic:
   * `anthropic-messages`; the OpenAI-compatible providers but Gemini: the OpenAI dialects): for a client of one
   * of them, error bodies pass through (less the attempt's credentials) even though `mapError` exists (for the others).
   * Absent: every error is mapped when `mapError` exists.
   */
  readonly nativeErrorDialects?: readonly Dialect[];
}
