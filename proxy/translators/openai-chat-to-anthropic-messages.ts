/**
 * The translator from OpenAI chat completions (client dialect `openai-chat`) to Anthropic's Messages API
 * (wire format `anthropic-messages`): the request body, the non-streamed `message`, and the SSE stream back
 * to `chat.completion.chunk` events.
 * Sources: https://docs.anthropic.com/en/api/messages (request and response),
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming (stream events),
 * https://platform.openai.com/docs/api-reference/chat (the client side).
 */
import type { Transform } from 'node:stream';
import type { EventSourceMessage } from 'eventsource-parser';
import type { ChatCompletion, ChatCompletionRequest, ChatContentPart, ChatMessage, ChatToolCall, ChatUsage, OpenAIErrorBody } from '../../shared/chat.ts';
import { badRequest } from '../errors.ts';
import { parseDataUrl } from './shared/data-url.ts';
import { assertSingleChoice, maxTokensOf, parseToolArguments, stopList } from './shared/openai-chat-request.ts';
import { badEventError, ChunkWriter, SSE_DONE, sseError, truncatedStreamError } from './shared/openai-chat-stream.ts';
import { openAIUsage } from './shared/openai-usage.ts';
import { upstreamBadResponse } from './shared/provider-errors.ts';
import { appendTurn } from './shared/turns.ts';
import { SseTranslatorStream } from './shared/translator-stream.ts';
import { finiteOrZero, isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from './types.ts';
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  anthropicError,
  type AnthropicBlock,
  type AnthropicMessage,
  type AnthropicMessageParam,
  type AnthropicRequest,
  type AnthropicUsage,
} from './wire/anthropic-messages.ts';

// ---------------------------------------------------------------------------------------------
// Request
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

function contentBlocks(content: ChatMessage['content'], param: string): AnthropicBlock[] {
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
          throw badRequest(`${p}: anthropic accepts files only as PDF data URLs in file.file_data`, `${p}.file.file_data`);
        }
        blocks.push({ type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.base64 }, ...extra });
        break;
      }
      default:
        throw badRequest(`${p}: content part type ${JSON.stringify(part.type)} is not supported by anthropic`, `${p}.type`);
    }
  });
  return blocks;
}

function assistantBlocks(message: ChatMessage, param: string): AnthropicBlock[] {
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
  return blocks;
}

/** The system text blocks and alternating turns of an OpenAI message list. */
function anthropicTurns(body: ChatCompletionRequest): { systemBlocks: AnthropicBlock[]; messages: AnthropicMessageParam[] } {
  const systemBlocks: AnthropicBlock[] = [];
  const messages: AnthropicMessageParam[] = [];
  body.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(message)) throw badRequest(`${param} must be an object`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        systemBlocks.push(...contentBlocks(message.content, `${param}.content`).filter((b) => b.type === 'text'));
        break;
      case 'user':
        appendTurn(messages, 'user', contentBlocks(message.content, `${param}.content`));
        break;
      case 'assistant':
        appendTurn(messages, 'assistant', assistantBlocks(message, param));
        break;
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw badRequest(`${param}.tool_call_id is required`, `${param}.tool_call_id`);
        const blocks = typeof message.content === 'string' ? null : contentBlocks(message.content, `${param}.content`);
        const content = blocks === null ? message.content : blocks.length ? blocks : '';
        appendTurn(messages, 'user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content }]);
        break;
      }
      default:
        throw badRequest(`${param}.role ${JSON.stringify(message.role)} is not supported by anthropic`, `${param}.role`);
    }
  });
  return { systemBlocks, messages };
}

function toolsOf(tools: NonNullable<ChatCompletionRequest['tools']>): NonNullable<AnthropicRequest['tools']> {
  return tools.map((tool, i) => {
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
  const { systemBlocks, messages } = anthropicTurns(body);
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
  if (Array.isArray(body.tools) && body.tools.length) request.tools = toolsOf(body.tools);
  const toolChoice = toolChoiceOf(body);
  if (toolChoice) request.tool_choice = toolChoice;
  if (typeof body.user === 'string' && body.user !== '') request.metadata = { user_id: body.user };
  if (stream) request.stream = true;
  return request;
}

// ---------------------------------------------------------------------------------------------
// Response
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
 * Maps Anthropic usage to OpenAI usage (tokens): prompt_tokens = input + cache read + cache creation,
 * completion_tokens = output, `prompt_tokens_details: {cached_tokens: cache read, cache_write_tokens: cache creation}`.
 */
export function anthropicUsage(usage: AnthropicUsage | undefined): ChatUsage {
  const u = usage ?? {};
  return openAIUsage(
    finiteOrZero(u.input_tokens),
    finiteOrZero(u.output_tokens),
    finiteOrZero(u.cache_read_input_tokens),
    finiteOrZero(u.cache_creation_input_tokens),
  );
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
// Stream
// ---------------------------------------------------------------------------------------------

/**
 * Anthropic SSE bytes in, OpenAI `chat.completion.chunk` SSE bytes out, one instance per response. Mapped events
 * are collected in `out` while a piece of input is parsed and pushed as one string when it is done.
 */
class AnthropicChatStream extends SseTranslatorStream {
  private readonly writer: ChunkWriter;
  private readonly usage: AnthropicUsage = {};
  /** OpenAI tool-call index (0-based among tool calls) by Anthropic content block index. */
  private readonly toolIndexByBlock = new Map<number, number>();
  private finished = false;

  constructor(call: TranslatorCall) {
    super();
    this.writer = new ChunkWriter(`chatcmpl-${call.requestId}`, call.body.model);
  }

  protected override onEnd(): void {
    this.fail(truncatedStreamError('anthropic'));
  }

  private fail(error: OpenAIErrorBody): void {
    this.out += sseError(error);
    this.state = 'failed';
  }

  private mergeUsage(u: unknown): void {
    if (!isRecord(u)) return;
    for (const [key, value] of Object.entries(u)) if (typeof value === 'number') this.usage[key] = value;
  }

  protected override onEvent(event: EventSourceMessage): void {
    if (this.state !== 'open') return;
    let data: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(event.data);
      if (!isRecord(parsed)) throw new Error('not an object');
      data = parsed;
    } catch {
      this.fail(badEventError('anthropic sent a malformed stream event'));
      return;
    }
    switch (typeof data.type === 'string' ? data.type : event.event) {
      case 'message_start':
        this.onMessageStart(isRecord(data.message) ? data.message : {});
        break;
      case 'content_block_start':
        this.onBlockStart(finiteOrZero(data.index), isRecord(data.content_block) ? data.content_block : {});
        break;
      case 'content_block_delta':
        this.onBlockDelta(finiteOrZero(data.index), isRecord(data.delta) ? data.delta : {});
        break;
      case 'message_delta':
        this.onMessageDelta(data);
        break;
      case 'message_stop':
        if (!this.finished) this.out += this.writer.finish('stop');
        this.finished = true;
        this.out += this.writer.usage(anthropicUsage(this.usage));
        this.out += SSE_DONE;
        this.state = 'done';
        break;
      case 'error':
        this.fail({ error: anthropicError(isRecord(data.error) ? data.error : {}, 500) });
        break;
      default:
        // ping, content_block_stop and event types added later carry nothing to forward.
        break;
    }
  }

  private onMessageStart(message: Record<string, unknown>): void {
    if (typeof message.id === 'string') this.writer.id = message.id;
    if (typeof message.model === 'string') this.writer.model = message.model;
    this.mergeUsage(message.usage);
    this.out += this.writer.role();
  }

  private onBlockStart(blockIndex: number, block: Record<string, unknown>): void {
    if (block.type === 'text' && typeof block.text === 'string' && block.text) this.out += this.writer.content(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking) this.out += this.writer.reasoning(block.thinking);
    else if (block.type === 'tool_use') {
      const index = this.toolIndexByBlock.size;
      this.toolIndexByBlock.set(blockIndex, index);
      this.out += this.writer.toolStart(index, String(block.id), String(block.name));
      if (isRecord(block.input) && Object.keys(block.input).length) this.out += this.writer.toolArguments(index, JSON.stringify(block.input));
    }
  }

  private onBlockDelta(blockIndex: number, delta: Record<string, unknown>): void {
    if (delta.type === 'text_delta' && typeof delta.text === 'string') this.out += this.writer.content(delta.text);
    else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') this.out += this.writer.reasoning(delta.thinking);
    else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json) {
      const index = this.toolIndexByBlock.get(blockIndex);
      if (index !== undefined) this.out += this.writer.toolArguments(index, delta.partial_json);
    }
  }

  private onMessageDelta(data: Record<string, unknown>): void {
    this.mergeUsage(data.usage);
    const delta = isRecord(data.delta) ? data.delta : {};
    const reason = anthropicFinishReason(typeof delta.stop_reason === 'string' ? delta.stop_reason : null);
    if (reason && !this.finished) {
      this.out += this.writer.finish(reason);
      this.finished = true;
    }
  }
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
export function createAnthropicStreamMapper(call: TranslatorCall): Transform {
  return new AnthropicChatStream(call);
}

// ---------------------------------------------------------------------------------------------
// The translator
// ---------------------------------------------------------------------------------------------

function translateRequest(call: TranslatorCall): Buffer {
  return Buffer.from(JSON.stringify(toAnthropicRequest(call.body, call.stream)));
}

function translateResponse(body: Buffer): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed) || !Array.isArray(parsed.content)) {
    return upstreamBadResponse('anthropic returned a response that is not a message');
  }
  return { status: 200, body: fromAnthropicMessage(parsed as unknown as AnthropicMessage) };
}

/**
 * `openai-chat` → `anthropic-messages`: requests by {@link toAnthropicRequest}, messages by {@link fromAnthropicMessage}
 * (502 `upstream_bad_response` for a body that is not a message), streams by {@link createAnthropicStreamMapper}.
 */
export const openAIChatToAnthropicMessages: MappingTranslator = {
  dialect: 'openai-chat',
  wireFormat: 'anthropic-messages',
  identity: false,
  translateRequest,
  translateResponse,
  createStreamTranslator: createAnthropicStreamMapper,
};
