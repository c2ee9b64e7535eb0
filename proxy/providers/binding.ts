/**
 * Binds each provider's transport to the translator of every endpoint kind it serves, once at start: the
 * translator is `translatorFor(dialect of the endpoint kind, wire format the provider speaks there)`. The request
 * path holds the {@link ProviderBinding} of its (endpoint kind, provider) and only calls methods of objects that
 * already exist (no closure, no lookup by string).
 */
import type { Transform } from 'node:stream';
import { ENDPOINT_DIALECTS } from '../endpoints/dialects.ts';
import type { EndpointName } from '../endpoints/types.ts';
import { clientErrorBody, type ClientErrorBody } from '../translators/dialects.ts';
import { translatorFor } from '../translators/index.ts';
import type { Dialect, MappedResponse, ResponseHeaders, Translator, WireFormat } from '../translators/types.ts';
import type { ProviderCall, ProviderTransport, UpstreamRequest } from './types.ts';

/** One provider at one endpoint kind: its transport and the translator from the endpoint's dialect to the provider's wire format. */
export class ProviderBinding {
  /** The client dialect of the endpoint kind. */
  readonly dialect: Dialect;
  /** What the provider speaks at this endpoint kind. */
  readonly wireFormat: WireFormat;
  /** True for the identity translator: 2xx response bytes go to the client untouched. */
  readonly passthrough: boolean;
  /**
   * True when error bodies are mapped ({@link mapError}) into the client dialect's shape; false: they pass through
   * untouched, because the transport has no mapping or its error bodies already are in the client dialect's shape
   * (`transport.nativeErrorDialects`: Anthropic's errors to a Messages client, OpenAI's to a chat client; not
   * Gemini's, whose OpenAI-like error comes wrapped in an array an OpenAI client cannot read).
   */
  readonly mapsErrors: boolean;
  /**
   * True when a 2xx stream can reach the client: untouched (identity) or through {@link createStreamMapper}.
   * False for a mapping translator that never streams (Bedrock embeddings), whose answers are read as one body.
   */
  readonly streams: boolean;

  constructor(
    readonly transport: ProviderTransport,
    readonly endpoint: EndpointName,
    readonly translator: Translator,
  ) {
    this.dialect = translator.dialect;
    this.wireFormat = translator.wireFormat;
    this.passthrough = translator.identity;
    this.mapsErrors = transport.mapError !== undefined && !(transport.nativeErrorDialects?.includes(translator.dialect) ?? false);
    this.streams = translator.identity || translator.createStreamTranslator !== undefined;
  }

  /** The upstream request: the transport's URL, headers and signature around the translated body. Throws what the transport throws. */
  buildRequest(call: ProviderCall): UpstreamRequest | Promise<UpstreamRequest> {
    return this.transport.buildRequest(call, this.endpoint, this.translator);
  }

  /**
   * A non-streamed 2xx body (bytes) in the client's dialect; `headers`: the provider's response headers (names lower-cased).
   * @throws {Error} for a passthrough binding, whose bodies are not mapped.
   */
  mapResponse(body: Buffer, call: ProviderCall, headers?: ResponseHeaders): MappedResponse {
    if (this.translator.identity) throw new Error(`${this.transport.name} ${this.endpoint} passes responses through`);
    return this.translator.translateResponse(body, call, headers);
  }

  /**
   * A fresh transform from the provider's stream bytes to the client dialect's SSE bytes.
   * @throws {Error} for a passthrough binding or a wire format that never streams.
   */
  createStreamMapper(call: ProviderCall): Transform {
    if (this.translator.identity || !this.translator.createStreamTranslator) {
      throw new Error(`${this.transport.name} ${this.endpoint} has no stream translation`);
    }
    return this.translator.createStreamTranslator(call);
  }

  /**
   * An upstream error (status, body bytes, response headers) as the client dialect's error body: the transport's
   * neutral error rendered for the dialect.
   * @throws {Error} when errors are not mapped here (`mapsErrors` false: send the body as it came).
   */
  mapError(status: number, body: Buffer, headers?: Record<string, string | string[] | undefined>): ClientErrorBody {
    if (!this.mapsErrors || !this.transport.mapError) throw new Error(`${this.transport.name} errors pass through`);
    return clientErrorBody(this.dialect, this.transport.mapError(status, body, headers), status);
  }
}

/**
 * Binds a transport at one endpoint kind it serves.
 * @throws {Error} at start when the transport does not serve the endpoint kind, or the gateway has no translator
 *   from the endpoint's dialect to the provider's wire format there.
 */
export function bindProvider(transport: ProviderTransport, endpoint: EndpointName): ProviderBinding {
  const wireFormat = transport.wireFormats[endpoint];
  if (wireFormat === undefined) throw new Error(`provider ${transport.name} does not serve ${endpoint}`);
  const dialect = ENDPOINT_DIALECTS[endpoint];
  const translator = translatorFor(dialect, wireFormat);
  if (!translator) throw new Error(`provider ${transport.name}: no translator from ${dialect} to ${wireFormat}`);
  return new ProviderBinding(transport, endpoint, translator);
}

/** The bindings of every endpoint kind a transport serves, keyed by endpoint kind. */
export type ProviderBindings = Readonly<Partial<Record<EndpointName, ProviderBinding>>>;

/**
 * Binds a transport at every endpoint kind it serves (see {@link bindProvider}).
 * @throws {Error} at start when a translator is missing.
 */
export function bindEndpoints(transport: ProviderTransport): ProviderBindings {
  const bindings: Partial<Record<EndpointName, ProviderBinding>> = {};
  for (const endpoint of Object.keys(transport.wireFormats) as EndpointName[]) bindings[endpoint] = bindProvider(transport, endpoint);
  return bindings;
}
