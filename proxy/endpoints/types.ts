/**
 * What the gateway knows about one endpoint kind (one API a client speaks: OpenAI chat completions,
 * OpenAI embeddings, Anthropic Messages and its token count, OpenAI Responses, its input token count and its
 * stored responses): where it is served, how its
 * request body is checked, what its errors look like, how its stream is framed and where its usage
 * is found. The stages read these properties from `ctx.kind` instead of assuming chat; adding an
 * endpoint kind is one module implementing {@link EndpointKind} and one line in ./index.ts.
 * (After Envoy AI Gateway's `internal/endpointspec`: one spec per endpoint.)
 */
import type { ChatCompletionRequest } from '../../shared/chat.ts';
import type { ProviderName } from '../../shared/providers.ts';
import type { GatewayError } from '../errors.ts';
import type { TokenLimitHandler } from '../tokenlimit/index.ts';
import type { Dialect } from '../translators/types.ts';

/**
 * The name of an endpoint kind, as the provider layer (transports' `wireFormats`, bindings) and the
 * log record's `endpoint` know it, so a kind's name is handed to the provider layer as it is.
 */
export type EndpointName = 'chat' | 'embeddings' | 'messages' | 'count_tokens' | 'responses' | 'input_tokens' | 'stored_response';

/**
 * Which `routers.<name>.load-balance.<key>` of `gateway.yaml` chooses a router's providers for a
 * kind. Chat dialects share `chat`: a router's chat providers serve every chat dialect.
 */
export type LoadBalanceKey = 'chat' | 'embeddings';

/** A parsed JSON object (a request or response body, a stream chunk). */
export type Json = Record<string, any>;

/**
 * How a kind's responses are streamed: Server-Sent Events, one JSON object per event
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 */
export interface StreamFraming {
  /** `content-type` of the stream the client receives. */
  readonly contentType: string;
  /** The event carrying one JSON chunk (`json` is its serialized text). */
  chunk(json: string): string;
  /** The last event of a stream that failed mid-way, carrying the error body's JSON text. */
  error(json: string): string;
  /** The `data` of the event that ends a stream without carrying a chunk (OpenAI's `[DONE]`), or null. */
  readonly doneData: string | null;
}

/** What lets a log recorder bound the text it keeps while folding a stream. */
export interface TextBudget {
  /**
   * `current` (a string, or null/undefined for none yet) with `piece` appended, or `current`
   * unchanged (as a string) when the budget is spent (the record is then marked truncated).
   */
  append(current: unknown, piece: string): string;
}

/** Where a kind's token usage and assembled body are found in its responses (read by the log recorder). */
export interface ResponseReading {
  /** The usage object of a non-streamed JSON body, or null. */
  usageInBody(body: Json): unknown;
  /** The usage object carried by one parsed stream chunk, or null. */
  usageInChunk(chunk: Json): unknown;
  /**
   * How a chunk's usage joins the usage seen so far (`previous` null before the first), for a kind
   * whose stream reports usage in parts (Anthropic: input counts in `message_start`, output in
   * `message_delta`); null when each chunk's usage replaces the one before (OpenAI's final chunk).
   */
  readonly mergeUsage: ((previous: unknown, next: unknown) => unknown) | null;
  /**
   * Folds one parsed stream chunk (not an error event) into the response assembled so far (`into`
   * is null before the first chunk) and returns it: the body the log keeps for a stream. Texts grow
   * only through `text`. Null for kinds without streams.
   */
  readonly foldChunk: ((into: Json | null, chunk: Json, text: TextBudget) => Json) | null;
  /**
   * Stream events, by their SSE `event` name, whose data an event of {@link finalEvents} supersedes
   * (Responses: `response.created`, `response.in_progress`, each the whole response so far, with the
   * request's tools and instructions echoed). The recorder keeps the newest one unparsed and folds it
   * only when the stream ends without a final event. Absent: every event is parsed as it comes.
   */
  readonly supersededEvents?: ReadonlySet<string>;
  /** Stream events, by their SSE `event` name, that supersede {@link supersededEvents}. */
  readonly finalEvents?: ReadonlySet<string>;
  /**
   * Completes what a stream the client left mid-way leaves open in the body {@link foldChunk} assembled (Messages:
   * the partial JSON of a `tool_use` block whose `content_block_stop` never came), so the log keeps every piece the
   * client was sent (admin estimates the answer's tokens from them). Called once, for such a stream only. Absent:
   * the fold keeps nothing apart.
   */
  readonly closeCutBody?: (body: Json) => void;
}

/**
 * How `Svc-Token-Limit-Exception-Handler` applies to a kind: the handlers it offers (any other named
 * handler is a 400 naming the header), and, for a body that is not a chat body, how it is seen as
 * one for the handlers and how their text edits go back into it.
 */
export interface TokenLimitSupport {
  readonly handlers: readonly TokenLimitHandler[];
  /**
   * The body as chat completions for the token estimate (text, tool calls and tool definitions in
   * the places the estimator counts them); null when the body already is a chat body, which the
   * rewriting handlers (truncate, middle-out) then edit.
   */
  readonly chatView: ((body: Json) => ChatCompletionRequest) | null;
  /**
   * The kind's body with a rewriting handler's edits to its chat view written back (`view` as
   * {@link chatView} made it, `rewritten` the handler's copy of it); null when no rewriting handler
   * is offered, or the body is the chat body itself.
   */
  readonly fromChatView: ((body: Json, view: ChatCompletionRequest, rewritten: ChatCompletionRequest) => Json) | null;
}

/**
 * How a kind whose provider has no count endpoint answers a token count itself (count_tokens,
 * Responses' input_tokens): the body seen as the chat body a request would send, and the answer.
 */
export interface LocalCount {
  /** The chat body the estimate counts, for the provider the count is for (its config name). */
  chatBody(body: Json, provider: string): ChatCompletionRequest;
  /** The answer's JSON text for an estimate of `tokens` tokens, in the kind's shape. */
  answer(tokens: number): string;
}

/**
 * What makes an answer of a kind complete, for the response cache, which stores "only complete,
 * successful answers" (issue 18; ./answer-completion.ts applies it, ../observers/cache-writer.ts
 * calls it): a stream must end with the event its dialect ends a whole answer with, a non-streamed
 * answer must be a JSON object that is not an error object. Read once per cache miss, on the bytes'
 * ends only (the first bytes of a body, the last events of a stream).
 */
export interface AnswerCompletion {
  /**
   * SSE `event` names one of which, as a stream's last event, ends a complete answer (Messages:
   * `message_stop`; Responses: `response.completed`, `response.incomplete`). Empty for a kind whose
   * framing has a {@link StreamFraming.doneData}: its complete streams end with that event instead,
   * after an event that is not an error (chat: `data: [DONE]`).
   */
  readonly finalEvents: ReadonlySet<string>;
  /**
   * Matches the start (its first `BODY_HEAD_BYTES` of ./answer-completion.ts, read as latin1) of a
   * non-streamed 2xx body that is an error object in the kind's shapes (its first member says so)
   * rather than an answer.
   */
  readonly errorBody: RegExp;
}

/** One endpoint kind. Instances are module-level constants, shared by every request. */
export interface EndpointKind {
  readonly name: EndpointName;
  /** The client dialect it speaks, as translators are keyed: its entry in ./dialects.ts `ENDPOINT_DIALECTS`. */
  readonly dialect: Dialect;
  /** Exact request paths on `/ai` and `/v1` (POST). */
  readonly paths: readonly string[];
  /** The path after `/router/<name>` on a router, e.g. `/chat/completions`. */
  readonly routerTail: string;
  /** The metric's `route` label of requests through a router (`router:chat`). */
  readonly routerLabel: string;
  /** The router pool that chooses its providers. */
  readonly loadBalance: LoadBalanceKey;
  /**
   * Checks the members of a request body (a JSON object) the gateway or a provider reads, so a
   * mistyped body is a 400 here rather than an error further on; unknown members pass as sent.
   * @throws {GatewayError} 400 naming the member (`param`) and what it must be.
   */
  validate(body: Json): void;
  /** The error body answered to this kind's clients (OpenAI's `{"error":{...}}`, Anthropic's `{"type":"error","error":{...}}`). */
  errorBody(err: GatewayError): unknown;
  /** Its stream framing, or null when it never streams. */
  readonly framing: StreamFraming | null;
  /** Where usage and the assembled response are found. */
  readonly reading: ResponseReading;
  /** Which `Svc-Token-Limit-Exception-Handler` handlers apply, and how; null: the header is ignored (no messages). */
  readonly tokenLimits: TokenLimitSupport | null;
  /** A request may name a managed prompt (`prompt_id`). */
  readonly prompts: boolean;
  /**
   * The provider a model written without `<provider>/` goes to on /ai and /v1 (Messages: a
   * `claude-…` model → `anthropic`), or null when such a model is refused (400 `missing_provider`).
   */
  readonly providerOfBareModel: ((model: string) => ProviderName | null) | null;
  /**
   * The client's request headers are handed to the provider's transport (`ProviderCall.clientHeaders`),
   * which copies the ones its API defines (Anthropic: `anthropic-*`, `x-stainless-*`).
   */
  readonly forwardsClientHeaders: boolean;
  /**
   * When the chosen provider has no binding at this kind, the gateway answers the request itself with
   * its own token estimate (count_tokens, input_tokens; ../stages/count-tokens.ts) instead of a 400
   * `unsupported_endpoint`; null for the kinds that are always sent to a provider.
   */
  readonly localCount: LocalCount | null;
  /**
   * What marks a complete answer of this kind, which alone the response cache stores; null for kinds
   * whose answers are never stored (token counts, stored-response calls).
   */
  readonly completion: AnswerCompletion | null;
  /** Requests are written to the request log (observability); false for metadata calls (count_tokens). */
  readonly logged: boolean;
}
