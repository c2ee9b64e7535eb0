/**
 * The translator from OpenAI chat completions (client dialect `openai-chat`) to Bedrock's Converse API (wire
 * format `bedrock-converse`): the request body (./openai-chat-to-bedrock-converse/request.ts, whose table says what
 * becomes of every request member: mapped, removed and recorded in `call.removed`, or refused with a 400; the model
 * id goes in the URL, which the transport builds), the Converse response, and the ConverseStream binary event stream
 * back to `chat.completion.chunk` events.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html.
 */
import type { Transform, TransformCallback } from 'node:stream';
import type { ChatCompletion, ChatToolCall, ChatUsage, OpenAIErrorBody } from '../../shared/chat.ts';
import { toConverseRequest } from './openai-chat-to-bedrock-converse/request.ts';
import { badEventError, ChunkWriter, includesUsage, SSE_DONE, sseError, truncatedStreamError } from './shared/openai-chat-stream.ts';
import { openAIUsage } from './shared/openai-usage.ts';
import { providerErrorText, upstreamBadResponse } from './shared/provider-errors.ts';
import { TranslatorStream } from './shared/translator-stream.ts';
import { finiteOrZero, isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from './types.ts';
import { EventStreamReader, headerString, loadEventStream, type EventStreamHeaders, type EventStreamSink } from './wire/aws-eventstream.ts';
import { bedrockErrorType, exceptionName, type ConverseResponse, type ConverseUsage } from './wire/bedrock.ts';

export { toConverseRequest };

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/**
 * Maps a Converse `stopReason` to OpenAI's `finish_reason`: end_turn/stop_sequence → stop,
 * max_tokens/model_context_window_exceeded → length, tool_use → tool_calls,
 * guardrail_intervened/content_filtered → content_filter.
 */
export function converseFinishReason(reason: string | null | undefined): string | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Maps Converse usage to OpenAI usage (tokens): prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens,
 * completion_tokens = outputTokens, total_tokens = totalTokens (else the sum),
 * `prompt_tokens_details: {cached_tokens: cacheReadInputTokens, cache_write_tokens: cacheWriteInputTokens}`.
 */
export function converseUsage(usage: ConverseUsage | undefined): ChatUsage {
  const u = usage ?? {};
  const total = typeof u.totalTokens === 'number' ? u.totalTokens : undefined;
  return openAIUsage(
    finiteOrZero(u.inputTokens),
    finiteOrZero(u.outputTokens),
    finiteOrZero(u.cacheReadInputTokens),
    finiteOrZero(u.cacheWriteInputTokens),
    total,
  );
}

/**
 * Maps a Converse response to an OpenAI `chat.completion` with the given `id` and `model`: `{text}` blocks
 * concatenated into `content` (null when none), `reasoningContent` into `reasoning_content`, `{toolUse}` blocks into
 * `tool_calls` (id = toolUseId, arguments = JSON string of `input`), stop reason and usage mapped.
 */
export function fromConverseResponse(response: ConverseResponse, id: string, model: string): ChatCompletion {
  let text = '';
  let hasText = false;
  let reasoning = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of response.output?.message?.content ?? []) {
    if (typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (isRecord(block.toolUse)) {
      toolCalls.push({
        id: String(block.toolUse.toolUseId),
        type: 'function',
        function: { name: String(block.toolUse.name), arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    } else if (isRecord(block.reasoningContent) && isRecord(block.reasoningContent.reasoningText)) {
      const t = block.reasoningContent.reasoningText.text;
      if (typeof t === 'string') reasoning += t;
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: hasText ? text : null };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: converseFinishReason(response.stopReason), logprobs: null }],
    usage: converseUsage(response.usage),
  };
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

/**
 * ConverseStream event-stream bytes in, OpenAI `chat.completion.chunk` SSE bytes out, one instance per response.
 * Frames come whole from an {@link EventStreamReader}; mapped events collect in `out` and are pushed once per
 * input piece.
 */
class BedrockChatStream extends TranslatorStream implements EventStreamSink {
  private readonly frames = new EventStreamReader();
  private readonly writer: ChunkWriter;
  /** OpenAI tool-call index (0-based among tool calls) by Converse content block index. */
  private readonly toolIndexByBlock = new Map<number, number>();
  private finished = false;

  constructor(private readonly call: TranslatorCall) {
    super();
    this.writer = new ChunkWriter(`chatcmpl-${call.requestId}`, call.body.model, includesUsage(call.body));
  }

  get acceptsFrames(): boolean {
    return this.state === 'open';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.frames.write(chunk, this, callback);
  }

  override _flush(callback: TransformCallback): void {
    if (this.state === 'open') {
      if (this.finished && this.frames.buffered === 0) {
        this.out += SSE_DONE;
        this.state = 'done';
      } else {
        this.fail(truncatedStreamError('bedrock'));
      }
    }
    this.drain();
    callback();
  }

  onUnreadable(message: string): void {
    this.fail(badEventError(message));
  }

  private fail(error: OpenAIErrorBody): void {
    this.out += sseError(error);
    this.state = 'failed';
  }

  onFrame(headers: EventStreamHeaders, body: Record<string, unknown>): void {
    const messageType = headerString(headers, ':message-type') ?? 'event';
    if (messageType === 'event') {
      this.onEvent(headerString(headers, ':event-type'), body);
    } else if (messageType === 'exception') {
      const name = exceptionName(headerString(headers, ':exception-type'));
      const text = typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : null;
      const message = text !== null ? providerErrorText(text, this.call) : `bedrock stream exception ${name ?? ''}`.trim();
      this.fail({ error: { message, type: bedrockErrorType(name, 500), param: null, code: name } });
    } else {
      const code = headerString(headers, ':error-code') ?? null;
      const text = headerString(headers, ':error-message');
      const message = text !== undefined ? providerErrorText(text, this.call) : 'bedrock stream error';
      this.fail({ error: { message, type: bedrockErrorType(code, 500), param: null, code } });
    }
  }

  private onEvent(eventType: string | undefined, payload: Record<string, unknown>): void {
    switch (eventType) {
      case 'messageStart':
        this.out += this.writer.role();
        break;
      case 'contentBlockStart': {
        const start = isRecord(payload.start) ? payload.start : {};
        if (isRecord(start.toolUse)) {
          const index = this.toolIndexByBlock.size;
          this.toolIndexByBlock.set(finiteOrZero(payload.contentBlockIndex), index);
          this.out += this.writer.toolStart(index, String(start.toolUse.toolUseId), String(start.toolUse.name));
        }
        break;
      }
      case 'contentBlockDelta':
        this.onBlockDelta(finiteOrZero(payload.contentBlockIndex), isRecord(payload.delta) ? payload.delta : {});
        break;
      case 'messageStop':
        if (!this.finished) this.out += this.writer.finish(converseFinishReason(typeof payload.stopReason === 'string' ? payload.stopReason : null) ?? 'stop');
        this.finished = true;
        break;
      case 'metadata':
        if (!this.finished) this.out += this.writer.finish('stop');
        this.finished = true;
        this.out += this.writer.end(converseUsage(isRecord(payload.usage) ? (payload.usage as ConverseUsage) : undefined), this.call);
        this.state = 'done';
        break;
      default:
        // contentBlockStop and event types added later carry nothing to forward.
        break;
    }
  }

  private onBlockDelta(blockIndex: number, delta: Record<string, unknown>): void {
    if (typeof delta.text === 'string') {
      if (delta.text) this.out += this.writer.content(delta.text);
    } else if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
      const index = this.toolIndexByBlock.get(blockIndex);
      if (index !== undefined && delta.toolUse.input) this.out += this.writer.toolArguments(index, delta.toolUse.input);
    } else if (isRecord(delta.reasoningContent) && typeof delta.reasoningContent.text === 'string') {
      if (delta.reasoningContent.text) this.out += this.writer.reasoning(delta.reasoningContent.text);
    }
  }
}

/**
 * A fresh transform from ConverseStream's binary event stream (`application/vnd.amazon.eventstream`) to OpenAI
 * `chat.completion.chunk` SSE bytes. Frames may be split anywhere across input pieces: bytes are buffered until a
 * whole frame (length = first 4 bytes, big-endian) is present, then decoded (CRCs checked) and mapped at once:
 * `messageStart` → role chunk; `contentBlockStart.start.toolUse` → tool-call start (`index` = 0-based position
 * among tool calls, id = toolUseId); `contentBlockDelta` text / `toolUse.input` / `reasoningContent.text` →
 * content / argument fragments / `reasoning_content`; `messageStop` → finish chunk; `metadata` → usage chunk
 * (`choices: []`; only when the client asked with `stream_options.include_usage`, when every other chunk has
 * `usage: null`, as OpenAI's; else the usage goes to `call.withheldUsage`) and `data: [DONE]`. An `exception` or `error` frame, a corrupt frame, or a stream ending
 * before `messageStop` becomes a final `data: {"error":{...}}` event with no `[DONE]`.
 */
export function createBedrockStreamMapper(call: TranslatorCall): Transform {
  return new BedrockChatStream(call);
}

// ---------------------------------------------------------------------------------------------
// The translator
// ---------------------------------------------------------------------------------------------

function ignore(): void {}

/** The Converse body of the call; removed members go to `call.removed` (when present), the model table is `call.provider`'s, else Bedrock's. */
function translateRequest(call: TranslatorCall): Buffer {
  const body = Buffer.from(JSON.stringify(toConverseRequest(call.body, call.removed, call.provider ?? 'bedrock')));
  // The stream translator needs the event-stream codec: load it now, while the request is under way.
  if (call.stream) loadEventStream().catch(ignore);
  return body;
}

function translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed)) {
    return upstreamBadResponse('bedrock returned a response that is not JSON');
  }
  return { status: 200, body: fromConverseResponse(parsed as ConverseResponse, `chatcmpl-${call.requestId}`, call.body.model) };
}

/**
 * `openai-chat` → `bedrock-converse`: requests by {@link toConverseRequest} (a streaming one also starts loading the
 * event-stream codec), responses by {@link fromConverseResponse} (id `chatcmpl-<request id>`, the requested model;
 * 502 `upstream_bad_response` for a body that is not JSON), streams by {@link createBedrockStreamMapper}.
 */
export const openAIChatToBedrockConverse: MappingTranslator = {
  dialect: 'openai-chat',
  wireFormat: 'bedrock-converse',
  identity: false,
  translateRequest,
  translateResponse,
  createStreamTranslator: createBedrockStreamMapper,
};
