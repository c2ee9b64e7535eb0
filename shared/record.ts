/**
 * The log record the proxy hands to admin for each request, and its superstruct schema (admin
 * validates every record it receives). Times are epoch milliseconds; durations are ms; token counts
 * are tokens. Bodies are the client's request body and the response body in the client's dialect
 * (a `chat.completion` or a Messages `message` assembled from the stream when streamed), each
 * capped in size by the proxy.
 *
 * Members added after the first release are `optional` so that records of proxies of the previous
 * version (which lack them) stay valid: `sessionId`, `sessionPath`, `sessionName`, `removedMembers`,
 * `wireFormat`, `cacheEnabled`, `cacheReferenceId`.
 */
import {
  any,
  array,
  boolean,
  literal,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  type,
  union,
  type Infer,
} from 'superstruct';

const count = optional(nullable(number()));

/**
 * The usage object as the client's dialect reports it, from the JSON body or the stream:
 * - OpenAI chat completions: `prompt_tokens` (cached tokens included), `completion_tokens`,
 *   `total_tokens`, `prompt_tokens_details`, `completion_tokens_details`;
 * - Anthropic Messages (Anthropic API reference, "Messages", `usage`): `input_tokens` (cached tokens
 *   NOT included), `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens` and
 *   `cache_creation.{ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`; a stream's
 *   `message_start` usage and `message_delta` usage (cumulative counts) merged;
 * - OpenAI Responses (OpenAI API reference, "Responses", `usage`): `input_tokens` (cached tokens
 *   included), `input_tokens_details.cached_tokens`, `output_tokens`,
 *   `output_tokens_details.reasoning_tokens`, `total_tokens`.
 * Other members pass unchecked (`type`). Admin reads the shapes in admin/usage.ts.
 */
const UsageSchema = type({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: optional(nullable(type({ cached_tokens: count, cache_write_tokens: count, audio_tokens: count }))),
  completion_tokens_details: optional(nullable(type({ reasoning_tokens: count, audio_tokens: count }))),
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  cache_creation: optional(nullable(type({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }))),
  input_tokens_details: optional(nullable(type({ cached_tokens: count }))),
  output_tokens_details: optional(nullable(type({ reasoning_tokens: count, thinking_tokens: count }))),
});

/**
 * The member, and its value, of a usage object whose counts the gateway estimated because the provider
 * reported none while the client's dialect always has `usage` (embeddings → Bedrock without a token count).
 * Admin logs such a record's tokens as estimated (`svc-tokens-source: estimated`), not as the provider's.
 */
export const ESTIMATED_USAGE_MEMBER = 'svc_token_count';
/** The value of {@link ESTIMATED_USAGE_MEMBER}, as the `Svc-Token-Count` header of a count the gateway made. */
export const ESTIMATED_USAGE_VALUE = 'estimate';

/** One attempt at a provider (routers may try several): provider name, HTTP status (0 = no response), latency ms. */
export const AttemptSchema = object({
  provider: string(),
  status: number(),
  latencyMs: number(),
  error: optional(nullable(string())),
});

/** Superstruct schema of {@link LogRecord}. */
export const LogRecordSchema = object({
  requestId: string(),
  organizationId: string(),
  apiKeyId: nullable(string()),
  createdAt: number(),
  responseCreatedAt: nullable(number()),
  path: string(),
  targetUrl: nullable(string()),
  /**
   * Provider config name (`openai`); null when the gateway answered before choosing a provider (an
   * unknown provider prefix, a bad body). Admin stores and shows those as `SVC`, the gateway itself.
   */
  provider: nullable(string()),
  /** The model as the client wrote it (e.g. `openai/gpt-4o-mini`). */
  requestModel: nullable(string()),
  /** The bare model sent to the provider. */
  modelSent: nullable(string()),
  modelOverride: nullable(string()),
  userId: nullable(string()),
  properties: record(string(), string()),
  status: number(),
  streamed: boolean(),
  delayMs: number(),
  timeToFirstTokenMs: nullable(number()),
  requestBody: any(),
  responseBody: any(),
  /** True when a body was larger than the proxy's capture cap and was cut. */
  bodyTruncated: boolean(),
  usage: nullable(UsageSchema),
  /** A provider or gateway error, kept as `llmSchema.response.error.svcMessage`. */
  error: nullable(string()),
  clientClosed: boolean(),
  prompt: nullable(
    object({
      promptId: string(),
      /** Null when the lookup failed (unknown version or environment): the record still names the prompt. */
      versionId: nullable(string()),
      /** `major.minor`; null as `versionId`. */
      version: nullable(string()),
      environment: nullable(string()),
      inputs: record(string(), any()),
    }),
  ),
  tokenLimit: nullable(
    object({
      handler: string(),
      tokensBefore: nullable(number()),
      tokensAfter: nullable(number()),
      allowedInput: nullable(number()),
      modelSent: string(),
      skipped: nullable(string()),
    }),
  ),
  attempts: array(AttemptSchema),
  /**
   * The endpoint kind the client called: `chat` (OpenAI chat completions), `embeddings`,
   * `messages` (Anthropic Messages), `responses` (OpenAI Responses). It says which dialect the
   * bodies and the usage are in.
   */
  endpoint: union([literal('chat'), literal('embeddings'), literal('messages'), literal('responses')]),
  /**
   * The request's session, when it names one: the client's `Svc-Session-Id` header, else Claude
   * Code's `x-claude-code-session-id` header or Codex's session id. Requests of one session share
   * it; stored and queryable
   * (`sessions_request_response_rmt.session_session_id` in the REST filter). Absent in records of
   * older proxies. Any string is accepted (it comes from a client's header); admin stores at most
   * its first 256 characters and treats an empty one as none.
   */
  sessionId: optional(nullable(string())),
  /**
   * The request's place in its session: the client's `Svc-Session-Path` header, a `/`-separated
   * trace path such as `/plan/search` (the proxy refuses one not starting with `/` or longer than
   * 1024 characters). Null or absent when not sent or the proxy is older.
   */
  sessionPath: optional(nullable(string())),
  /** The session's name: the client's `Svc-Session-Name` header (at most 256 characters). Null or absent when not sent. */
  sessionName: optional(nullable(string())),
  /**
   * Request members a translator removed because the provider's wire format has no place for them
   * (e.g. `context_management`, `system[1].cache_control`), as JSON paths into the client's body.
   * Null or absent when nothing was removed. Admin keeps at most 1000 paths of 512 characters.
   */
  removedMembers: optional(nullable(array(string()))),
  /**
   * The wire format spoken to the provider (`anthropic-messages`, `openai-chat`,
   * `bedrock-converse`, ...); equal to the client's dialect on passthrough. Null or absent when no
   * provider was called or the proxy is older.
   */
  wireFormat: optional(nullable(string())),
  /** The request asked for the response cache (`Svc-Cache-Enabled: true`). Absent in older proxies' records. */
  cacheEnabled: optional(boolean()),
  /**
   * A cache hit: the id of the request whose answer was served (the provider was not called; the
   * usage is that answer's, and admin stores cost 0 with the cost it saved). Null or absent otherwise.
   */
  cacheReferenceId: optional(nullable(string())),
});

/** One request's log record, as sent from proxy to admin. */
export type LogRecord = Infer<typeof LogRecordSchema>;
