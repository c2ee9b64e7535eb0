/**
 * Anthropic Messages API adapter: OpenAI chat-completions requests → `POST {baseUrl}/messages`, and
 * Anthropic's message (JSON or SSE stream) and error bodies → OpenAI's `chat.completion`,
 * `chat.completion.chunk` events and error shape.
 *
 * Sources: https://docs.anthropic.com/en/api/messages (request and response),
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming (stream events),
 * https://docs.anthropic.com/en/api/errors (error types and statuses).
 */
import { Transform } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type {
  ChatCompletion,
  ChatCompletionRequest,
  ChatContentPart,
  ChatMessage,
  ChatToolCall,
  ChatUsage,
  OpenAIErrorBody,
} from '../../shared/chat.ts';
import { GatewayError, badRequest } from '../errors.ts';
import { ChunkWriter, SSE_DONE, sseError } from './sse.ts';
import type { Endpoint, MappedResponse, ProviderAdapter, ProviderCall, UpstreamRequest } from './types.ts';

/** The `anthropic-version` header value sent with every request. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** `max_tokens` sent when the client set neither `max_completion_tokens` nor `max_tokens` (Anthropic requires it). */
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

/** The body of `POST /v1/messages` as this adapter builds it. */
export interface AnthropicRequest {
  model: string;
  messages: AnthropicMessageParam[];
  max_tokens: number;
  system?: string | AnthropicBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  tools?: Array<{ name: string; description?: string; input_schema: unknown }>;
  tool_choice?: { type: 'auto' | 'any' | 'none' | 'tool'; name?: string; disable_parallel_tool_use?: boolean };
  metadata?: { user_id: string };
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

// ---------------------------------------------------------------------------------------------
// Helpers shared with the Bedrock adapter
// ---------------------------------------------------------------------------------------------

/** A parsed `data:` URL: its media type (lower-cased, e.g. `image/png`) and base64 payload. */
export interface DataUrl {
  mediaType: string;
  base64: string;
}

/**
 * Parses `data:<media type>[;params];base64,<payload>`. Returns null for anything else (including
 * non-base64 data URLs).
 */
export function parseDataUrl(url: string): DataUrl | null {
  const match = /^data:([^;,]+)((?:;[^;,]*)*?);base64,(.*)$/is.exec(url);
  if (!match) return null;
  return { mediaType: match[1]!.trim().toLowerCase(), base64: match[3]!.replace(/\s+/g, '') };
}

/** The text of an OpenAI message content (a string, or the `text` of its text parts, joined). */
export function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part && (part.type === 'text' || part.type === 'input_text') && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
}

/**
 * Parses an assistant tool call's `arguments` JSON string into an object (an empty string is `{}`).
 * @throws {GatewayError} 400 naming `param` when the text is not JSON.
 */
export function parseToolArguments(text: string | undefined, param: string): unknown {
  if (text === undefined || text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`${param} is not valid JSON`, param);
  }
}

/** OpenAI's `stop` (a string or an array of strings) as a list; undefined when absent or empty. */
export function stopList(stop: ChatCompletionRequest['stop']): string[] | undefined {
  if (typeof stop === 'string') return stop === '' ? undefined : [stop];
  if (Array.isArray(stop)) {
    const list = stop.filter((s): s is string => typeof s === 'string' && s !== '');
    return list.length ? list : undefined;
  }
  return undefined;
}

/** The client's output-token cap: `max_completion_tokens`, else `max_tokens`; undefined when neither is set. */
export function maxTokensOf(body: ChatCompletionRequest): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Rejects request members no native provider can express: `n` > 1.
 * @throws {GatewayError} 400.
 */
export function assertSingleChoice(body: ChatCompletionRequest, provider: string): void {
  const n = body.n;
  if (typeof n === 'number' && n > 1) throw badRequest(`${provider} does not support n > 1`, 'n', 'unsupported_parameter');
}

/** Replaces anything that looks like a provider API key (`sk-...`, `sk-ant-...`) in `text` by a mask. */
export function redactSecrets(text: string): string {
  return text.replace(/\bsk-(?:ant-)?[A-Za-z0-9_-]{8,}/g, 'sk-***');
}

/** OpenAI usage from a prompt/completion split, with cache counts in `prompt_tokens_details` (tokens). */
export function openAIUsage(input: number, output: number, cacheRead: number, cacheWrite: number, total?: number): ChatUsage {
  const prompt = input + cacheRead + cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: total ?? prompt + output,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  };
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

function imageBlock(url: string, param: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (data) {
    if (!data.mediaType.startsWith('image/')) throw badRequest(`${param}: expected an image data URL, got ${data.mediaType}`, param);
    return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw badRequest(`${param}: image URLs must be data: (base64) or http(s) URLs`, param);
}

function contentBlocks(content: ChatMessage['content'], param: string, provider = 'anthropic'): AnthropicBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw badRequest(`${param} must be a string or an array of content parts`, param);
  const blocks: AnthropicBlock[] = [];
  content.forEach((part: ChatContentPart, j) => {
    const p = `${param}[${j}]`;
    if (!isRecord(part)) throw badRequest(`${p} must be an object`, p);
    const extra = part.cache_control !== undefined ? { cache_control: part.cache_control } : {};
    switch (part.type) {
      case 'text':
      case 'input_text':
        if (typeof part.text !== 'string') throw badRequest(`${p}.text must be a string`, `${p}.text`);
        if (part.text !== '') blocks.push({ type: 'text', text: part.text, ...extra });
        break;
      case 'image_url': {
        const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
        if (typeof url !== 'string') throw badRequest(`${p}.image_url.url must be a string`, `${p}.image_url.url`);
        blocks.push({ ...imageBlock(url, `${p}.image_url.url`), ...extra });
        break;
      }
      case 'file': {
        const file = isRecord(part.file) ? part.file : {};
        const data = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
        if (!data || data.mediaType !== 'application/pdf') {
          throw badRequest(`${p}: ${provider} accepts files only as PDF data URLs in file.file_data`, `${p}.file.file_data`);
        }
        blocks.push({ type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.base64 }, ...extra });
        break;
      }
      default:
        throw badRequest(`${p}: content part type ${JSON.stringify(part.type)} is not supported by ${provider}`, `${p}.type`);
    }
  });
  return blocks;
}

function toolChoiceOf(body: ChatCompletionRequest): AnthropicRequest['tool_choice'] {
  const choice = body.tool_choice;
  const noParallel = body.parallel_tool_calls === false;
  let mapped: AnthropicRequest['tool_choice'];
  if (choice === undefined || choice === null) mapped = noParallel && body.tools?.length ? { type: 'auto' } : undefined;
  else if (choice === 'auto') mapped = { type: 'auto' };
  else if (choice === 'required') mapped = { type: 'any' };
  else if (choice === 'none') return { type: 'none' };
  else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    mapped = { type: 'tool', name: choice.function.name };
  } else {
    throw badRequest('tool_choice must be "auto", "required", "none" or {"type":"function","function":{"name":...}}', 'tool_choice');
  }
  if (mapped && noParallel) mapped.disable_parallel_tool_use = true;
  return mapped;
}

/**
 * Appends content blocks as a turn of `role`, merging them into the previous turn when it has the
 * same role (Anthropic's Messages and Bedrock's Converse both require alternating turns). Empty
 * `blocks` add nothing.
 */
export function appendTurn<B>(messages: Array<{ role: 'user' | 'assistant'; content: B[] }>, role: 'user' | 'assistant', blocks: B[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}

/**
 * Maps an OpenAI chat-completions body to an Anthropic Messages request body.
 *
 * - `system`/`developer` messages are lifted into `system` (a string; text blocks when a part carries `cache_control`);
 * - consecutive same-role turns are merged; `tool` messages become user `tool_result` blocks;
 * - images: `data:` URLs → base64 sources, http(s) URLs → url sources; PDF `file` parts → `document` blocks;
 * - assistant `tool_calls` → `tool_use` blocks (arguments JSON-parsed);
 * - `tools` → `{name, description, input_schema}`; `tool_choice` auto→auto, required→any, none→none,
 *   `{function:{name}}`→`{type:"tool",name}`; `parallel_tool_calls: false` → `disable_parallel_tool_use`;
 * - `stop` → `stop_sequences`; `temperature`/`top_p` copied (Anthropic accepts temperature 0..1 only);
 * - `max_tokens` = `max_completion_tokens` ?? `max_tokens` ?? {@link ANTHROPIC_DEFAULT_MAX_TOKENS}; `user` → `metadata.user_id`.
 * @throws {GatewayError} 400 when the body uses something Anthropic cannot express (`n` > 1, audio parts,
 *   unknown roles, non-function tools, invalid tool-call arguments JSON).
 */
export function toAnthropicRequest(body: ChatCompletionRequest, stream: boolean): AnthropicRequest {
  if (!Array.isArray(body.messages)) throw badRequest('messages must be an array', 'messages');
  assertSingleChoice(body, 'anthropic');
  const systemBlocks: AnthropicBlock[] = [];
  const messages: AnthropicMessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => appendTurn(messages, role, blocks);

  body.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(message)) throw badRequest(`${param} must be an object`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        systemBlocks.push(...contentBlocks(message.content, `${param}.content`).filter((b) => b.type === 'text'));
        break;
      case 'user':
        push('user', contentBlocks(message.content, `${param}.content`));
        break;
      case 'assistant': {
        const blocks = typeof message.content === 'string' || message.content == null
          ? contentBlocks(message.content, `${param}.content`)
          : contentBlocks(message.content.filter((part) => part?.type !== 'refusal'), `${param}.content`);
        (message.tool_calls ?? []).forEach((call: ChatToolCall, j) => {
          const p = `${param}.tool_calls[${j}]`;
          if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== 'string') {
            throw badRequest(`${p} must be {"id","type":"function","function":{"name","arguments"}}`, p);
          }
          blocks.push({
            type: 'tool_use',
            id: call.id,
            name: call.function.name,
            input: parseToolArguments(call.function.arguments, `${p}.function.arguments`),
          });
        });
        push('assistant', blocks);
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw badRequest(`${param}.tool_call_id is required`, `${param}.tool_call_id`);
        const blocks = typeof message.content === 'string' ? null : contentBlocks(message.content, `${param}.content`);
        const content = blocks === null ? message.content : blocks.length ? blocks : '';
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content }]);
        break;
      }
      default:
        throw badRequest(`${param}.role ${JSON.stringify(message.role)} is not supported by anthropic`, `${param}.role`);
    }
  });

  const request: AnthropicRequest = {
    model: body.model,
    messages,
    max_tokens: maxTokensOf(body) ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
  };
  if (systemBlocks.length) {
    request.system = systemBlocks.some((b) => b.cache_control !== undefined)
      ? systemBlocks
      : systemBlocks.map((b) => b.text as string).join('\n\n');
  }
  const stops = stopList(body.stop);
  if (stops) request.stop_sequences = stops;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.top_p = body.top_p;
  if (Array.isArray(body.tools) && body.tools.length) {
    request.tools = body.tools.map((tool, i) => {
      if (tool?.type !== 'function' || !isRecord(tool.function) || typeof tool.function.name !== 'string') {
        throw badRequest(`tools[${i}]: only {"type":"function","function":{"name",...}} tools are supported by anthropic`, `tools[${i}]`);
      }
      const fn = tool.function;
      return {
        name: fn.name,
        ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
        input_schema: fn.parameters ?? { type: 'object', properties: {} },
      };
    });
  }
  const toolChoice = toolChoiceOf(body);
  if (toolChoice) request.tool_choice = toolChoice;
  if (typeof body.user === 'string' && body.user !== '') request.metadata = { user_id: body.user };
  if (stream) request.stream = true;
  return request;
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

/**
 * Maps an Anthropic `stop_reason` to OpenAI's `finish_reason`: end_turn/stop_sequence/pause_turn → stop,
 * max_tokens/model_context_window_exceeded → length, tool_use → tool_calls, refusal → content_filter.
 */
export function anthropicFinishReason(reason: string | null | undefined): string | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Maps Anthropic usage to OpenAI usage: prompt_tokens = input + cache read + cache creation,
 * completion_tokens = output, `prompt_tokens_details: {cached_tokens: cache read, cache_write_tokens: cache creation}`.
 */
export function anthropicUsage(usage: AnthropicUsage | undefined): ChatUsage {
  const u = usage ?? {};
  return openAIUsage(num(u.input_tokens), num(u.output_tokens), num(u.cache_read_input_tokens), num(u.cache_creation_input_tokens));
}

/**
 * Maps an Anthropic `message` to an OpenAI `chat.completion`: text blocks concatenated into `content`
 * (null when there is none), `thinking` blocks into `reasoning_content`, `tool_use` blocks into
 * `tool_calls` (arguments as JSON strings), stop reason and usage mapped.
 */
export function fromAnthropicMessage(message: AnthropicMessage): ChatCompletion {
  let text = '';
  let hasText = false;
  let reasoning = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const msg: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: hasText ? text : null };
  if (reasoning) msg.reasoning_content = reasoning;
  if (toolCalls.length) msg.tool_calls = toolCalls;
  return {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: message.model,
    choices: [{ index: 0, message: msg, finish_reason: anthropicFinishReason(message.stop_reason), logprobs: null }],
    usage: anthropicUsage(message.usage),
  };
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * OpenAI error `type` for each Anthropic `error.type` (Anthropic's own type is kept as `code`):
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

/** The OpenAI error type family of an HTTP status, for errors whose body names no type. */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Parses a body as JSON; undefined when it is not JSON. */
export function parseJson(body: Buffer | string): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A short, secret-free message from a non-JSON error body (or a generic one when empty). */
export function fallbackErrorMessage(provider: string, status: number, body: Buffer | string): string {
  const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  return text ? redactSecrets(text.slice(0, 500)) : `${provider} returned HTTP ${status}`;
}

/**
 * Maps an Anthropic error object `{type, message}` to OpenAI's error body: `type` per
 * {@link ANTHROPIC_ERROR_TYPES} (else by `status`), `code` = Anthropic's error type, message kept (keys redacted).
 */
export function anthropicErrorBody(error: { type?: unknown; message?: unknown }, status = 500): OpenAIErrorBody {
  const anthropicType = typeof error.type === 'string' ? error.type : null;
  const message = typeof error.message === 'string' && error.message ? redactSecrets(error.message) : `anthropic error (HTTP ${status})`;
  return {
    error: {
      message,
      type: (anthropicType && ANTHROPIC_ERROR_TYPES[anthropicType]) || errorTypeForStatus(status),
      param: null,
      code: anthropicType,
    },
  };
}

/**
 * Maps a non-2xx Anthropic body (`{"type":"error","error":{"type","message"},"request_id"}`) to OpenAI's
 * error shape; the HTTP status is kept by the caller. Non-JSON bodies keep their (truncated) text as message.
 */
export function mapAnthropicError(status: number, body: Buffer): OpenAIErrorBody {
  const parsed = parseJson(body);
  if (isRecord(parsed) && isRecord(parsed.error)) return anthropicErrorBody(parsed.error, status);
  return { error: { message: fallbackErrorMessage('anthropic', status, body), type: errorTypeForStatus(status), param: null, code: null } };
}

// ---------------------------------------------------------------------------------------------
// Stream mapping
// ---------------------------------------------------------------------------------------------

/** The final error event written when the upstream stream ends without `message_stop` (or `messageStop`). */
export function truncatedStreamError(provider: string): OpenAIErrorBody {
  return {
    error: {
      message: `The ${provider} stream ended before the response was complete`,
      type: 'server_error',
      param: null,
      code: 'upstream_stream_truncated',
    },
  };
}

/**
 * A fresh transform from Anthropic's SSE stream bytes to OpenAI `chat.completion.chunk` SSE bytes, emitting
 * the mapped events of every input piece as soon as it arrives (input may be split anywhere, even inside a
 * UTF-8 character). Output: a role chunk (at `message_start`), content / `reasoning_content` deltas,
 * tool-call starts (`index` = 0-based position among the tool calls, `id`, `function.name`) and argument
 * fragments, a finish chunk (at `message_delta`), a usage chunk (`choices: []`) and `data: [DONE]` (at
 * `message_stop`). An `error` event (or a stream that ends early) becomes a final `data: {"error":{...}}` event
 * with no `[DONE]`; anything after it is ignored.
 */
export function createAnthropicStreamMapper(call: ProviderCall): Transform {
  const writer = new ChunkWriter(`chatcmpl-${call.requestId}`, call.body.model);
  const decoder = new TextDecoder('utf-8');
  const usage: AnthropicUsage = {};
  const toolIndexByBlock = new Map<number, number>();
  let state: 'open' | 'done' | 'failed' = 'open';
  let finished = false;
  let out = '';

  const fail = (error: OpenAIErrorBody) => {
    out += sseError(error);
    state = 'failed';
  };
  const mergeUsage = (u: unknown) => {
    if (!isRecord(u)) return;
    for (const [key, value] of Object.entries(u)) if (typeof value === 'number') usage[key] = value;
  };

  const onEvent = (event: EventSourceMessage) => {
    if (state !== 'open') return;
    let data: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(event.data);
      if (!isRecord(parsed)) throw new Error('not an object');
      data = parsed;
    } catch {
      fail({ error: { message: 'anthropic sent a malformed stream event', type: 'server_error', param: null, code: 'upstream_bad_event' } });
      return;
    }
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        const message = isRecord(data.message) ? data.message : {};
        if (typeof message.id === 'string') writer.id = message.id;
        if (typeof message.model === 'string') writer.model = message.model;
        mergeUsage(message.usage);
        out += writer.role();
        break;
      }
      case 'content_block_start': {
        const block = isRecord(data.content_block) ? data.content_block : {};
        if (block.type === 'text' && typeof block.text === 'string' && block.text) out += writer.content(block.text);
        else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking) out += writer.reasoning(block.thinking);
        else if (block.type === 'tool_use') {
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(num(data.index), index);
          out += writer.toolStart(index, String(block.id), String(block.name));
          if (isRecord(block.input) && Object.keys(block.input).length) out += writer.toolArguments(index, JSON.stringify(block.input));
        }
        break;
      }
      case 'content_block_delta': {
        const delta = isRecord(data.delta) ? data.delta : {};
        if (delta.type === 'text_delta' && typeof delta.text === 'string') out += writer.content(delta.text);
        else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') out += writer.reasoning(delta.thinking);
        else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json) {
          const index = toolIndexByBlock.get(num(data.index));
          if (index !== undefined) out += writer.toolArguments(index, delta.partial_json);
        }
        break;
      }
      case 'message_delta': {
        mergeUsage(data.usage);
        const delta = isRecord(data.delta) ? data.delta : {};
        const reason = anthropicFinishReason(typeof delta.stop_reason === 'string' ? delta.stop_reason : null);
        if (reason && !finished) {
          out += writer.finish(reason);
          finished = true;
        }
        break;
      }
      case 'message_stop':
        if (!finished) out += writer.finish('stop');
        finished = true;
        out += writer.usage(anthropicUsage(usage));
        out += SSE_DONE;
        state = 'done';
        break;
      case 'error':
        fail(anthropicErrorBody(isRecord(data.error) ? data.error : {}, 500));
        break;
      default:
        // ping, content_block_stop and event types added later carry nothing to forward.
        break;
    }
  };

  const parser = createParser({ onEvent });
  const drain = (stream: Transform) => {
    if (out) {
      stream.push(out);
      out = '';
    }
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (state === 'open') parser.feed(decoder.decode(chunk, { stream: true }));
      drain(this);
      callback();
    },
    flush(callback) {
      if (state === 'open') {
        parser.feed(decoder.decode());
        parser.reset({ consume: true });
      }
      if (state === 'open') fail(truncatedStreamError('anthropic'));
      drain(this);
      callback();
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Adapter
// ---------------------------------------------------------------------------------------------

/**
 * The Anthropic provider: `POST {baseUrl}/messages` with `x-api-key`, `anthropic-version: 2023-06-01` and a
 * JSON body from {@link toAnthropicRequest}. Chat only. Responses go through `mapResponse`
 * ({@link fromAnthropicMessage}), streams through `createStreamMapper` ({@link createAnthropicStreamMapper}),
 * error statuses through `mapError` ({@link mapAnthropicError}).
 * `buildRequest` throws GatewayError 500 `provider_not_configured` when `ANTHROPIC_API_KEY` is unset, and 400
 * for bodies Anthropic cannot express or for the embeddings endpoint.
 * Source: https://docs.anthropic.com/en/api/messages
 */
export const anthropic: ProviderAdapter = {
  name: 'anthropic',
  passthrough: false,
  endpoints: ['chat'],

  buildRequest(call: ProviderCall, endpoint: Endpoint): UpstreamRequest {
    if (endpoint !== 'chat') throw badRequest('anthropic serves chat completions only', 'model', 'unsupported_endpoint');
    const { config } = call;
    if (!config.apiKey) {
      throw new GatewayError(500, 'The anthropic provider has no API key: set ANTHROPIC_API_KEY', 'server_error', 'provider_not_configured');
    }
    if (!config.baseUrl) {
      throw new GatewayError(500, 'The anthropic provider has no base URL: set providers.anthropic.base-url', 'server_error', 'provider_not_configured');
    }
    const request = toAnthropicRequest(call.body, call.stream);
    return {
      url: new URL(`${config.baseUrl.replace(/\/+$/, '')}/messages`),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        // The mappers read the bytes, so they must arrive uncompressed.
        'accept-encoding': 'identity',
        'x-api-key': config.apiKey,
        'anthropic-version': ANTHROPIC_VERSION,
      },
      body: Buffer.from(JSON.stringify(request)),
    };
  },

  mapResponse(body: Buffer): MappedResponse {
    const parsed = parseJson(body);
    if (!isRecord(parsed) || !Array.isArray(parsed.content)) {
      return {
        status: 502,
        body: { error: { message: 'anthropic returned a response that is not a message', type: 'server_error', param: null, code: 'upstream_bad_response' } },
      };
    }
    return { status: 200, body: fromAnthropicMessage(parsed as unknown as AnthropicMessage) };
  },

  createStreamMapper: createAnthropicStreamMapper,

  mapError: mapAnthropicError,
};
