/**
 * The small interface every provider module implements. Clients always speak OpenAI's chat format;
 * a provider module turns that into its provider's own request and turns the provider's answer
 * (JSON body or stream) back into OpenAI's format. Adding a provider touches its own module and the
 * registry (./index.ts) only.
 */
import type { Transform } from 'node:stream';
import type { ChatCompletionRequest, OpenAIErrorBody } from '../../shared/chat.ts';
import type { ProviderConfig } from '../../shared/config.ts';
import type { ProviderName } from '../../shared/providers.ts';

/**
 * What the proxy sends upstream. `url` is absolute and not changed once returned (the proxy keeps
 * per-URL state; an adapter may return the same URL object every time); `headers` replace the
 * client's entirely.
 */
export interface UpstreamRequest {
  url: URL;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  /** The serialized request body (UTF-8 JSON for most providers). */
  body: Buffer;
}

/** What a provider call needs to build its request. */
export interface ProviderCall {
  /** The provider's effective config: base URL, API key from the environment, deployments, region. */
  config: ProviderConfig;
  /** The OpenAI-format body, with `model` already the bare provider model name (no `<provider>/`). */
  body: ChatCompletionRequest;
  /** True when the client asked for `stream: true`. */
  stream: boolean;
  /** The gateway request id (UUID), for providers that accept a client request id. */
  requestId: string;
  /**
   * The body as UTF-8 JSON bytes ready to send in OpenAI's format, when the gateway changed nothing
   * but `model`: the client's own bytes with the model value replaced. Modules that send OpenAI's
   * format send these instead of serializing `body` again. Absent when anything else changed.
   */
  rawBody?: Buffer;
}

/** Which endpoint kind a call targets. */
export type Endpoint = 'chat' | 'embeddings';

/** A mapped non-streamed response: status and OpenAI-format JSON body. */
export interface MappedResponse {
  status: number;
  body: unknown;
}

/**
 * One provider module.
 *
 * The proxy calls `buildRequest` (may be async: Bedrock signs with SigV4), forwards it, then:
 * - `passthrough` modules: the response bytes go to the client untouched (OpenAI-compatible providers);
 * - otherwise non-stream 2xx bodies go through `mapResponse`, streams through `createStreamMapper()`,
 *   and error statuses through `mapError`.
 */
export interface ProviderAdapter {
  /** Config name, e.g. `anthropic`. */
  readonly name: ProviderName;
  /** True when the provider already speaks OpenAI's format (responses are streamed through untouched). */
  readonly passthrough: boolean;
  /** Endpoint kinds this provider serves. */
  readonly endpoints: readonly Endpoint[];
  /**
   * Builds the upstream request.
   * @throws {import('../errors.ts').GatewayError} (400) when the body cannot be expressed in the provider's format,
   *   or (500, `provider_not_configured`) when required config such as a region or deployment is missing.
   */
  buildRequest(call: ProviderCall, endpoint: Endpoint): UpstreamRequest | Promise<UpstreamRequest>;
  /** Maps a non-streamed 2xx body (bytes) to an OpenAI `chat.completion` (or embeddings list). Non-passthrough only. */
  mapResponse?(body: Buffer, call: ProviderCall, endpoint: Endpoint): MappedResponse;
  /**
   * A fresh per-request transform from the provider's stream bytes to OpenAI SSE bytes (`data: {chunk}\n\n` ...
   * `data: [DONE]\n\n`). It must emit each chunk as soon as its input arrives, and on an error event emit
   * `data: {"error":{...}}\n\n` as the final event. Non-passthrough only.
   */
  createStreamMapper?(call: ProviderCall): Transform;
  /**
   * Maps an upstream error status, body and response headers (e.g. Bedrock's `x-amzn-ErrorType`) to
   * OpenAI's error shape (status kept). Absent: the error body passes through.
   */
  mapError?(status: number, body: Buffer, headers?: Record<string, string | string[] | undefined>): OpenAIErrorBody;
}
