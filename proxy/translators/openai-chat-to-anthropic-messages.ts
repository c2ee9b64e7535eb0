/**
 * The translator from OpenAI chat completions (client dialect `openai-chat`) to Anthropic's Messages API
 * (wire format `anthropic-messages`): the request body (./openai-chat-to-anthropic-messages/request.ts, whose table
 * says what becomes of every request member: mapped, removed and recorded in `call.removed`, or refused with a 400),
 * the non-streamed `message`, and the SSE stream back to `chat.completion.chunk` events.
 * Sources: https://docs.anthropic.com/en/api/messages (request and response),
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming (stream events),
 * https://platform.openai.com/docs/api-reference/chat (the client side).
 */
import type { Transform } from 'node:stream';
import type { EventSourceMessage } from 'eventsource-parser';
import type { ChatCompletion, ChatToolCall, ChatUsage, OpenAIErrorBody } from '../../shared/chat.ts';
import { toAnthropicRequest } from './openai-chat-to-anthropic-messages/request.ts';
import { badEventError, ChunkWriter, includesUsage, sseError, truncatedStreamError } from './shared/openai-chat-stream.ts';
import { openAIUsage } from './shared/openai-usage.ts';
import { providerErrorText, upstreamBadResponse } from './shared/provider-errors.ts';
import { SseTranslatorStream } from './shared/translator-stream.ts';
import { finiteOrZero, isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, StreamUsageSource, TranslatorCall } from './types.ts';
import { anthropicError, type AnthropicMessage, type AnthropicUsage } from './wire/anthropic-messages.ts';

export { toAnthropicRequest };

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
 * completion_tokens = output, `prompt_tokens_details: {cached_tokens: cache read, cache_write_tokens: cache creation}`,
 * plus `cache_write_1h_tokens` = `cache_creation.ephemeral_1h_input_tokens` when Anthropic wrote any with the 1-hour
 * TTL (a member of the gateway's, as `cache_write_tokens` is: OpenAI's usage has none for cache writes; the log prices
 * those writes at the 1-hour price, twice the input price where the 5-minute one is 1.25 times).
 */
export function anthropicUsage(usage: AnthropicUsage | undefined): ChatUsage {
  const u = usage ?? {};
  const chat = openAIUsage(
    finiteOrZero(u.input_tokens),
    finiteOrZero(u.output_tokens),
    finiteOrZero(u.cache_read_input_tokens),
    finiteOrZero(u.cache_creation_input_tokens),
  );
  const write1h = isRecord(u.cache_creation) ? finiteOrZero(u.cache_creation.ephemeral_1h_input_tokens) : 0;
  if (write1h > 0) chat.prompt_tokens_details = { ...chat.prompt_tokens_details, cache_write_1h_tokens: write1h };
  return chat;
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
class AnthropicChatStream extends SseTranslatorStream implements StreamUsageSource {
  private readonly writer: ChunkWriter;
  private readonly usage: AnthropicUsage = {};
  /** OpenAI tool-call index (0-based among tool calls) by Anthropic content block index. */
  private readonly toolIndexByBlock = new Map<number, number>();
  private finished = false;

  constructor(private readonly call: TranslatorCall) {
    super();
    this.writer = new ChunkWriter(`chatcmpl-${call.requestId}`, call.body.model, includesUsage(call.body));
    call.usageSource = this;
  }

  /** {@link StreamUsageSource}: Anthropic's usage so far (`message_start`'s, merged with any `message_delta`'s) as OpenAI's; null before `message_start`. */
  usageSoFar(): ChatUsage | null {
    return this.usage.input_tokens === undefined && this.usage.output_tokens === undefined ? null : anthropicUsage(this.usage);
  }

  protected override onEnd(): void {
    this.fail(truncatedStreamError('anthropic'));
  }

  private fail(error: OpenAIErrorBody): void {
    this.out += sseError(error);
    this.state = 'failed';
  }

  /** Folds a usage of the stream in, later counts winning; the TTL split of the cache writes too (message_start has it). */
  private mergeUsage(u: unknown): void {
    if (!isRecord(u)) return;
    for (const [key, value] of Object.entries(u)) if (typeof value === 'number') this.usage[key] = value;
    if (isRecord(u.cache_creation)) this.usage.cache_creation = { ...(isRecord(this.usage.cache_creation) ? this.usage.cache_creation : {}), ...u.cache_creation };
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
        this.out += this.writer.end(anthropicUsage(this.usage), this.call);
        this.state = 'done';
        break;
      case 'error': {
        const error = anthropicError(isRecord(data.error) ? data.error : {}, 500);
        error.message = providerErrorText(error.message, this.call);
        this.fail({ error });
        break;
      }
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
 * fragments, a finish chunk (at `message_delta`), and at `message_stop` a usage chunk (`choices: []`; only when the
 * client asked with `stream_options.include_usage`, when every other chunk has `usage: null`, as OpenAI's; else the
 * usage goes to `call.withheldUsage`) and `data: [DONE]`. An `error` event (or a stream that ends early) becomes a final `data: {"error":{...}}` event
 * with no `[DONE]`; anything after it is ignored.
 */
export function createAnthropicStreamMapper(call: TranslatorCall): Transform {
  return new AnthropicChatStream(call);
}

// ---------------------------------------------------------------------------------------------
// The translator
// ---------------------------------------------------------------------------------------------

/** The Messages body of the call; removed members go to `call.removed` (when present), the model table is `call.provider`'s, else Anthropic's. */
function translateRequest(call: TranslatorCall): Buffer {
  return Buffer.from(JSON.stringify(toAnthropicRequest(call.body, call.stream, call.removed, call.provider ?? 'anthropic')));
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
