/**
 * What a translator is: the mapping between the dialect a client speaks to the gateway and the wire
 * format a provider speaks, for one (dialect, wire format) pair. Translators are pure data mapping (no
 * I/O, no config, no credentials); transports (proxy/providers/) do the addressing, signing and error
 * mapping. The registry (./index.ts) holds one translator per pair, chosen once per (endpoint kind,
 * provider) at start.
 */
import type { Transform } from 'node:stream';
import type { ChatCompletionRequest, ChatUsage } from '../../shared/chat.ts';

/**
 * The API dialect a client speaks to the gateway, named after the API and endpoint it follows:
 * - `openai-chat`: OpenAI chat completions (`POST /chat/completions`, SSE `chat.completion.chunk` events);
 * - `openai-embeddings`: OpenAI embeddings (`POST /embeddings`);
 * - `anthropic-messages`: Anthropic's Messages API (`POST /v1/messages`, SSE `message_start` … `message_stop` events);
 * - `openai-responses`: OpenAI's Responses API (`POST /v1/responses`, SSE `response.created` … `response.completed` events).
 */
export type Dialect = 'openai-chat' | 'openai-embeddings' | 'anthropic-messages' | 'openai-responses';

/**
 * What a provider speaks on the wire at one endpoint kind:
 * - `openai-chat`, `openai-embeddings`: OpenAI's formats (OpenAI, Azure and the OpenAI-compatible providers);
 * - `anthropic-messages`: Anthropic's Messages API (JSON, SSE stream);
 * - `bedrock-converse`: Bedrock's Converse / ConverseStream (JSON, binary `application/vnd.amazon.eventstream`);
 * - `bedrock-embeddings`: Bedrock InvokeModel bodies of the Titan and Cohere embedding models;
 * - `bedrock-invoke`: Bedrock InvokeModel / InvokeModelWithResponseStream with Anthropic's Messages body (its models);
 * - `openai-responses`: OpenAI's Responses API (OpenAI and Azure OpenAI: JSON, SSE stream).
 * A dialect and a wire format with the same name are the same format: the identity translator joins them.
 */
export type WireFormat = 'openai-chat' | 'openai-embeddings' | 'anthropic-messages' | 'bedrock-converse' | 'bedrock-embeddings' | 'bedrock-invoke' | 'openai-responses';

/** What a translator reads of one request. */
export interface TranslatorCall {
  /**
   * The client's body in its dialect, with `model` already the bare provider model name (no `<provider>/`).
   * Typed as the chat body, the dialect most translators read; for the `anthropic-messages` dialect it holds a
   * Messages body (`wire/anthropic-messages.ts` `MessagesRequest`), and for `openai-responses` a Responses body, which
   * their translators read as untrusted JSON.
   */
  body: ChatCompletionRequest;
  /** True when the client asked for `stream: true`. */
  stream: boolean;
  /** The gateway request id (UUID), used for ids the provider does not give (e.g. `chatcmpl-<id>`). */
  requestId: string;
  /**
   * The body as UTF-8 JSON bytes ready to send in the client's dialect, when the gateway changed nothing
   * but `model`: the client's own bytes with the model value replaced. The identity translator sends
   * these instead of serializing `body` again. Absent when anything else changed.
   */
  rawBody?: Buffer;
  /**
   * The provider the request goes to (config name, e.g. `deepseek`), when the caller knows it. Translators into a
   * format many providers share (`openai-chat`) read it for what those providers differ on: the model table's output
   * limit (`getModelInfo(provider, model)`), and members only some of them accept (see
   * `anthropic-messages-to-openai-chat/target.ts`). Absent: no provider-specific mapping, no clamp.
   */
  provider?: string;
  /**
   * Where a translator reports what it dropped, for the log record: when present, `translateRequest` pushes the
   * path of every client request member it removed because the wire format cannot carry it (`context_management`,
   * `system[1].cache_control`, `messages[3].content[0]` for a whole block, `tools[10].defer_loading`, `top_k`), and
   * `translateResponse` pushes the path of a provider response member it had to drop, prefixed `response.` (e.g.
   * `response.choices[0].message.tool_calls[0].function.arguments` when they are not JSON). Paths use the client's
   * (or the provider's) member names, `[i]` for array positions, in the order found. Absent: nothing is reported
   * (the translation is the same). Members that are mapped (even lossily, e.g. `thinking.budget_tokens` to a
   * reasoning effort) are not listed.
   */
  removed?: string[];
  /**
   * The tool names a translator changed in the provider's request, by the name sent: what `translateRequest` of
   * `openai-responses` → `openai-chat` sets for a namespaced tool (sent as `<namespace>__<name>`) or a custom tool
   * (sent as a function), so that the response and stream name the call as the client knows it. Derived from the
   * request's `tools` alone (`toolNamesOf` in `openai-responses-to-openai-chat/tool-names.ts`); absent: no name changed.
   */
  toolNames?: ReadonlyMap<string, ToolOrigin>;
  /**
   * What takes the attempt's credentials out of a provider's text: set by the gateway when a mapped stream starts
   * (proxy/upstream/mapped.ts), read by the stream translators only when they put a provider's error text in the
   * error event they end a failed stream with (`providerErrorText` in ./shared/provider-errors.ts). Translators never
   * see the credentials themselves. Absent or null: only the key shapes `redactSecrets` knows are masked.
   */
  redactor?: ProviderTextRedactor | null;
  /**
   * The provider's usage (OpenAI's shape, tokens) of a translated chat stream the client did not ask usage of: the
   * `openai-chat` stream translators (Anthropic, Bedrock Converse) send the usage chunk only with
   * `stream_options.include_usage` as OpenAI does, and set this instead when they end a stream without it. The log
   * record counts it when the recorder found no usage in the client's bytes (../observers/log-record.ts), and the
   * cache stores it with the answer, for the record of a hit (../cache/types.ts `CachedAnswer.usage`). Absent: the
   * stream carried its usage, or had none.
   */
  withheldUsage?: ChatUsage;
  /**
   * The stream translator of a translated stream whose client gets the provider's usage only at the end, although
   * the provider reports part of it earlier (Anthropic's `message_start`: the input side). Set by the translator
   * when it is made (a reference, nothing copied); read only when the client leaves before the end
   * (../observers/log-record.ts), so the log keeps the counts the provider reported and bills for. Absent: the
   * translator has nothing the client's stream does not carry.
   */
  usageSource?: StreamUsageSource;
}

/** A stream translator that can tell the provider's usage reported so far (see `TranslatorCall.usageSource`). */
export interface StreamUsageSource {
  /** The provider's usage reported so far, in the client's dialect (tokens); null when it reported none yet. */
  usageSoFar(): ChatUsage | null;
}

/** Redacts the credentials of one attempt (the one sent, the provider's configured key) from a provider's text. */
export interface ProviderTextRedactor {
  /** `text` with each of the attempt's credentials replaced by `***`; `text` itself when none occurs in it. */
  redactProviderText(text: string): string;
}

/** Where a tool name sent to a provider came from: the client's `name`, its `namespace`, and whether it is a custom (free-form input) tool. */
export interface ToolOrigin {
  name: string;
  namespace?: string;
  custom?: boolean;
}

/** A provider's response headers by lower-cased name (a repeated header's values in an array). */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** A translated non-streamed response: HTTP status and the JSON body in the client's dialect. */
export interface MappedResponse {
  status: number;
  body: unknown;
}

/**
 * An upstream error in the gateway's neutral vocabulary, which a transport's error mapping produces and
 * the client's dialect renders (./dialects.ts). Its members and `type` families are OpenAI's error object
 * (`invalid_request_error`, `authentication_error`, `permission_error`, `not_found_error`,
 * `rate_limit_exceeded`, `insufficient_quota`, `server_error`), so the OpenAI dialects render it as
 * `{"error": <it>}` unchanged; extra members a provider sent (Azure) are kept.
 */
export interface ProviderError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
  [member: string]: unknown;
}

/** Members every translator has. */
interface TranslatorBase {
  /** The client dialect it reads requests in and writes responses in. */
  readonly dialect: Dialect;
  /** The provider wire format it writes requests in and reads responses in. */
  readonly wireFormat: WireFormat;
  /**
   * The provider's request body as bytes (UTF-8 JSON for every wire format so far).
   * @throws {import('../errors.ts').GatewayError} 400 when the body cannot be expressed in the wire format.
   */
  translateRequest(call: TranslatorCall): Buffer;
}

/**
 * The identity: the provider speaks the client's dialect. The request is the client's bytes with the model
 * spliced (`call.rawBody`) when present, else `call.body` serialized; 2xx responses and streams go to the
 * client untouched (the gateway's passthrough fast path), so there is nothing to translate back.
 */
export interface IdentityTranslator extends TranslatorBase {
  readonly identity: true;
}

/** A translator between different formats: requests, responses and streams are mapped. */
export interface MappingTranslator extends TranslatorBase {
  readonly identity: false;
  /**
   * Maps a non-streamed 2xx provider body (bytes) to the client dialect: status 200 and the mapped body, or
   * 502 `upstream_bad_response` in the client dialect's error shape when the bytes are not the expected shape.
   * `headers` are the provider's response headers (names lower-cased), for what a provider says there rather than in
   * the body (Bedrock's `x-amzn-bedrock-input-token-count` of a Cohere embedding); absent: none known.
   */
  translateResponse(body: Buffer, call: TranslatorCall, headers?: ResponseHeaders): MappedResponse;
  /**
   * A fresh per-request transform from the provider's stream bytes to the client dialect's SSE bytes. It
   * emits each event as soon as its input arrives, and ends a failed stream with the dialect's in-stream
   * error event. Absent for wire formats that never stream (embeddings).
   */
  createStreamTranslator?(call: TranslatorCall): Transform;
}

/** One translator for one (dialect, wire format) pair. */
export type Translator = IdentityTranslator | MappingTranslator;
