/**
 * Anthropic's Messages API wire format: the request, response, usage and stream event shapes translators write
 * and read (both as a provider's wire format and as a client's dialect), its SSE framing, and its error vocabulary
 * (used by the Anthropic transport for HTTP error bodies, by translators for `error` events inside a stream, and
 * by the `anthropic-messages` dialect to render errors).
 * Sources: https://docs.anthropic.com/en/api/messages (request and response),
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming (stream events),
 * https://docs.anthropic.com/en/api/errors (error types and statuses).
 */
import type { ProviderError } from '../types.ts';
import { errorTypeForStatus, redactSecrets } from '../shared/provider-errors.ts';

/** `max_tokens` sent when the client set no output cap (Anthropic requires one), in tokens. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** One Anthropic content block (`text`, `image`, `document`, `tool_use`, `tool_result`, `thinking`, ...). */
export interface AnthropicBlock {
  type: string;
  [member: string]: unknown;
}

/** One Anthropic message turn. `role` alternates between `user` and `assistant`. */
export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/** The body of `POST /v1/messages` as the gateway's translators build it. */
export interface AnthropicRequest {
  model: string;
  messages: AnthropicMessageParam[];
  max_tokens: number;
  system?: string | AnthropicBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: Array<{ name: string; description?: string; input_schema: unknown; cache_control?: unknown }>;
  tool_choice?: { type: 'auto' | 'any' | 'none' | 'tool'; name?: string; disable_parallel_tool_use?: boolean };
  metadata?: { user_id: string };
  /** Structured output: `format` `{type: "json_schema", schema}` (https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs). */
  output_config?: OutputConfigParam;
  stream?: boolean;
}

/** Anthropic's `usage` object (all counts in tokens; `input_tokens` excludes cached and cache-written tokens). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  [member: string]: unknown;
}

/** A non-streamed Anthropic `message` response. */
export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

/**
 * The neutral error `type` of each Anthropic `error.type` (Anthropic's own type is kept as `code`):
 * invalid_request_error/request_too_large → invalid_request_error, authentication_error → authentication_error,
 * permission_error → permission_error, not_found_error → not_found_error, rate_limit_error → rate_limit_exceeded,
 * billing_error → insufficient_quota, api_error/overloaded_error/timeout_error → server_error.
 */
export const ANTHROPIC_ERROR_TYPES: Readonly<Record<string, string>> = {
  invalid_request_error: 'invalid_request_error',
  request_too_large: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'not_found_error',
  rate_limit_error: 'rate_limit_exceeded',
  billing_error: 'insufficient_quota',
  api_error: 'server_error',
  overloaded_error: 'server_error',
  timeout_error: 'server_error',
};

/**
 * An Anthropic error object `{type, message}` (from an error body or a stream `error` event) as a
 * {@link ProviderError}: `type` per {@link ANTHROPIC_ERROR_TYPES} (else by `status`), `code` = Anthropic's error
 * type, message kept with keys redacted (`anthropic error (HTTP <status>)` when it has none).
 */
export function anthropicError(error: { type?: unknown; message?: unknown }, status = 500): ProviderError {
  const anthropicType = typeof error.type === 'string' ? error.type : null;
  const message = typeof error.message === 'string' && error.message ? redactSecrets(error.message) : `anthropic error (HTTP ${status})`;
  return {
    message,
    // Own keys only: a provider's type "constructor" is an unknown type, not Object.prototype's member.
    type: anthropicType !== null && Object.hasOwn(ANTHROPIC_ERROR_TYPES, anthropicType) ? ANTHROPIC_ERROR_TYPES[anthropicType]! : errorTypeForStatus(status),
    param: null,
    code: anthropicType,
  };
}

// ---------------------------------------------------------------------------------------------
// The request as a Messages client sends it (the `anthropic-messages` dialect)
// ---------------------------------------------------------------------------------------------

/** `cache_control` on a block or tool: a prompt-cache breakpoint (`ttl` `5m` default, or `1h`). Anthropic only. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** Members any content block param may carry besides its own. */
interface BlockParamBase {
  cache_control?: CacheControl | null;
  [member: string]: unknown;
}

/** `{type: "text", text}`; `citations` only on text a previous response cited from. */
export interface TextBlockParam extends BlockParamBase {
  type: 'text';
  text: string;
  citations?: unknown[] | null;
}

/** Where an image or document comes from: inline base64, a URL, plain text, content blocks, or a Files API id. */
export type MediaSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'content'; content: string | TextBlockParam[] }
  | { type: 'file'; file_id: string };

/** `{type: "image", source}` (base64 `image/jpeg|png|gif|webp`, or a URL). */
export interface ImageBlockParam extends BlockParamBase {
  type: 'image';
  source: MediaSource;
}

/** `{type: "document", source, title?, context?, citations?}` (PDF as base64 or URL, plain text, or content blocks). */
export interface DocumentBlockParam extends BlockParamBase {
  type: 'document';
  source: MediaSource;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
}

/** An assistant's call of a client tool: `input` is the arguments object. */
export interface ToolUseBlockParam extends BlockParamBase {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** The client's answer to a `tool_use`: text, or blocks (text, image, document); `is_error` marks a failed call. */
export interface ToolResultBlockParam extends BlockParamBase {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | DocumentBlockParam>;
  is_error?: boolean;
}

/** Extended thinking from an earlier assistant turn, with the `signature` that lets Anthropic verify it. */
export interface ThinkingBlockParam extends BlockParamBase {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking Anthropic returned encrypted (`data` is opaque to everyone but Anthropic). */
export interface RedactedThinkingBlockParam extends BlockParamBase {
  type: 'redacted_thinking';
  data: string;
}

/** Any content block a client may send (server-tool blocks such as `server_tool_use` are among the `string` types). */
export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam
  | (BlockParamBase & { type: string });

/**
 * One entry of `messages`: `user` and `assistant` turns, and (as Claude Code sends) a `system` message in the
 * middle of the conversation, whose content is text.
 */
export interface MessageParam {
  role: 'user' | 'assistant' | 'system';
  content: string | ContentBlockParam[];
}

/**
 * A tool definition: a client tool (`type` absent or `custom`) with a JSON Schema `input_schema`, or an Anthropic
 * server or built-in tool named by a versioned `type` (`web_search_20250305`, `bash_20250124`, `text_editor_…`, …).
 */
export interface ToolParam {
  type?: string;
  name: string;
  description?: string;
  input_schema?: unknown;
  cache_control?: CacheControl | null;
  [member: string]: unknown;
}

/** `tool_choice`: `auto`, `any` (some tool), `tool` (the named one), `none`; `disable_parallel_tool_use` on the first three. */
export interface ToolChoiceParam {
  type: 'auto' | 'any' | 'tool' | 'none';
  name?: string;
  disable_parallel_tool_use?: boolean;
}

/** `thinking`: extended thinking with a token budget, adaptive (the model decides), or disabled; `display` summarized/omitted. */
export interface ThinkingConfigParam {
  type: 'enabled' | 'adaptive' | 'disabled';
  budget_tokens?: number;
  display?: 'summarized' | 'omitted';
}

/** `output_config`: `effort` (`low` | `medium` | `high` | `max`) and `format` (structured output, `{type: "json_schema", schema}`). */
export interface OutputConfigParam {
  effort?: string;
  format?: { type: 'json_schema'; schema: unknown } | null;
  [member: string]: unknown;
}

/** The body of `POST /v1/messages` as a client sends it (members Anthropic adds later are kept as unknown). */
export interface MessagesRequest {
  model: string;
  messages: MessageParam[];
  max_tokens: number;
  system?: string | TextBlockParam[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  metadata?: { user_id?: string | null };
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  thinking?: ThinkingConfigParam;
  output_config?: OutputConfigParam;
  context_management?: unknown;
  container?: unknown;
  mcp_servers?: unknown[];
  service_tier?: string;
  [member: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// The stream a Messages client reads
// ---------------------------------------------------------------------------------------------

/** The event types of a Messages stream, in the order they come (`ping` anywhere, `error` ends a failed stream). */
export type AnthropicStreamEventType =
  | 'message_start'
  | 'content_block_start'
  | 'content_block_delta'
  | 'content_block_stop'
  | 'message_delta'
  | 'message_stop'
  | 'ping'
  | 'error';

/**
 * One Messages SSE event: `event: <type>\ndata: <data as JSON>\n\n`. `data` carries its own `type` equal to the
 * event name, as Anthropic sends it.
 */
export function anthropicSseEvent(type: AnthropicStreamEventType, data: { type: AnthropicStreamEventType; [member: string]: unknown }): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

// ---------------------------------------------------------------------------------------------
// Errors as a Messages client reads them
// ---------------------------------------------------------------------------------------------

/** Anthropic's error body: `{"type":"error","error":{"type","message"}}` (Anthropic adds no other member today). */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; [member: string]: unknown };
}

/** Anthropic's own error types (https://docs.anthropic.com/en/api/errors). */
const ANTHROPIC_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/**
 * Anthropic's error type for an HTTP status: 400 invalid_request_error, 401 authentication_error, 402 billing_error,
 * 403 permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 503 and 529
 * overloaded_error, 504 timeout_error, other 5xx api_error, other 4xx invalid_request_error.
 */
export function anthropicErrorTypeForStatus(status: number): string {
  switch (status) {
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 503:
    case 529: return 'overloaded_error';
    case 504: return 'timeout_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** The neutral (OpenAI-family) error types that have an Anthropic counterpart regardless of status. */
const FROM_NEUTRAL: Readonly<Record<string, string>> = {
  invalid_request_error: 'invalid_request_error',
  authentication_error: 'authentication_error',
  permission_error: 'permission_error',
  not_found_error: 'not_found_error',
  rate_limit_exceeded: 'rate_limit_error',
  insufficient_quota: 'billing_error',
  server_error: 'api_error',
};

/**
 * The Anthropic error type of an error known by a neutral `type` (OpenAI's families, {@link ProviderError}), an
 * optional Anthropic type a provider already named (`code` of {@link anthropicError}), and the HTTP status when
 * known. An Anthropic type wins, then the status (so a 529 stays `overloaded_error` and a 413 `request_too_large`),
 * then the neutral type, then `api_error`.
 */
export function anthropicErrorType(neutralType: string, status?: number, anthropicType?: string | null): string {
  if (anthropicType && ANTHROPIC_TYPES.has(anthropicType)) return anthropicType;
  if (status !== undefined && status >= 400) return anthropicErrorTypeForStatus(status);
  return Object.hasOwn(FROM_NEUTRAL, neutralType) ? FROM_NEUTRAL[neutralType]! : 'api_error';
}

/** Anthropic's error body for a type and message. */
export function anthropicErrorBody(type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}
